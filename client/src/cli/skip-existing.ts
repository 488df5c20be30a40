import { etagForm, fileContentEtag, partsOf } from '../content-etag';
import type { Drive } from '../drive';
import { DriveError } from '../errors';
import { mapLimit } from '../pool';
import type { DriveFileEntry } from '../types';
import type { LocalFile } from './local-tree';

/** Local files split by whether the drive already holds the same bytes at their paths. */
export interface ExistingSplit {
  missing: LocalFile[];
  existing: LocalFile[];
  /** Files of the same size whose drive copy has no content ETag (stored before the server had them): sent again. */
  unprovable: number;
}

/**
 * Which `files` the drive already holds: the pages of a recursive listing of `to`, then, for each file of the same
 * size there, the local file's ETag computed the way that copy's was (plain MD5 for one upload request,
 * S3's multipart form for a large upload), so a match means the same bytes, not just the same size.
 */
export async function splitExisting(drive: Drive, files: readonly LocalFile[], to: string, signal?: AbortSignal): Promise<ExistingSplit> {
  const stored = await storedFiles(drive, files, to, signal);
  const split: ExistingSplit = { missing: [], existing: [], unprovable: 0 };
  const same = await mapLimit(
    files,
    4,
    async (file) => {
      const entry = stored.get(file.remote);
      if (!entry || entry.size !== file.size) return false;
      const form = etagForm(entry.etag);
      if (form === 'none') {
        split.unprovable++;
        return false;
      }
      return (await fileContentEtag(file.local, file.size, form, partsOf(entry.etag ?? ''))) === entry.etag;
    },
    signal,
  );
  files.forEach((file, i) => (same[i] ? split.existing : split.missing).push(file));
  return split;
}

/**
 * The files below `to` that `files` would write to, by path; none when `to` does not exist yet. The listing
 * is read a page at a time, and only the entries the upload would write are kept: memory grows with the
 * local files, never with the drive's folder.
 */
async function storedFiles(drive: Drive, files: readonly LocalFile[], to: string, signal?: AbortSignal): Promise<Map<string, DriveFileEntry>> {
  const wanted = new Set(files.map((file) => file.remote));
  const stored = new Map<string, DriveFileEntry>();
  try {
    for await (const page of drive.listPages(to, { recursive: true, etags: true, signal })) {
      for (const file of page.files) if (wanted.has(file.path)) stored.set(file.path, file);
    }
    return stored;
  } catch (error) {
    if (error instanceof DriveError && error.code === 'not_found') return new Map();
    throw error;
  }
}

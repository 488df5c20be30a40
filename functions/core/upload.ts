import { createHash, randomUUID } from 'node:crypto';
import { mapLimit, settleLimit } from './concurrency';
import { contentTypeFor } from './content-type';
import { badRequest, conflict, invalid } from './errors';
import { ensureFolder } from './folders';
import { ROOT, ancestorsOf, childPath, joinPath, nameOf, parentOf, parseName, parsePath } from './paths';
import type { FileNode, NodeStore, ObjectStore, PutFileResult } from './ports';
import { cleanUp } from './clean-up';

/** One `files` part of an upload. */
export interface UploadPart {
  filename: string;
  contentType?: string;
  data: Buffer;
}

/** One entry of the `metadata` array: where to store the file at the same index. */
export interface UploadTarget {
  path?: string;
  folder?: string;
  name?: string;
}

// Parallel S3 puts and item writes per request: enough to overlap round trips, few enough for one Lambda.
const WRITE_CONCURRENCY = 8;

/**
 * Stores every part at its destination, all or nothing: an invalid destination fails the request before
 * any byte is stored, and a conflict or failure later removes what this request stored. A file at a
 * destination is replaced; its old bytes are deleted only once every new record is written.
 */
export async function uploadFiles(
  deps: { nodes: NodeStore; objects: ObjectStore },
  drive: string,
  parts: readonly UploadPart[],
  targets: readonly UploadTarget[] | undefined,
  /** Throws for a destination the caller may not write (checked before anything is stored). */
  check: (path: string, index: number) => void = () => undefined,
): Promise<FileNode[]> {
  const destinations = resolveDestinations(parts, targets);
  destinations.forEach(check);
  const { objects } = deps;
  const now = new Date().toISOString();
  const files: FileNode[] = parts.map((part, i) => {
    const id = randomUUID();
    return {
      kind: 'file',
      id,
      path: destinations[i],
      size: part.data.length,
      contentType: contentTypeFor(nameOf(destinations[i]), part.contentType),
      createdAt: now,
      objectKey: `${drive}/${id}`,
      etag: createHash('md5').update(part.data).digest('hex'),
    };
  });

  const stored = await settleLimit(files, WRITE_CONCURRENCY, (file, i) => objects.put(file.objectKey, parts[i].data, file.contentType));
  const putFailure = stored.find((result) => result.status === 'rejected');
  if (putFailure) {
    await cleanUp(() => objects.deleteMany(files.map((file) => file.objectKey)));
    throw putFailure.reason;
  }

  return commitFiles(deps, drive, files);
}

/**
 * Writes the records of `files`, whose bytes are stored, and makes sure their folders exist; then deletes
 * the bytes of the files they replaced. On a conflict or failure it undoes its records, deletes the bytes
 * of `files` that no record points to (unless `keepBytes`: the caller keeps them for another try), and throws.
 */
export async function commitFiles(
  deps: { nodes: NodeStore; objects: ObjectStore },
  drive: string,
  files: readonly FileNode[],
  options: { keepBytes?: boolean } = {},
): Promise<FileNode[]> {
  const { nodes, objects } = deps;
  const ours = files.map((file) => file.objectKey);
  // Records first, conditional on no folder being there; then their folders, so a recursive delete that
  // raced this upload finds the parent recreated rather than a file without one. The folders are read, not
  // written, when they exist: every upload into a busy folder would otherwise write that one item.
  let results: PromiseSettledResult<WrittenRecord>[] = [];
  try {
    results = await settleLimit(files, WRITE_CONCURRENCY, (file) => writeRecord(nodes, drive, file));
    results.forEach((result, i) => {
      if (result.status === 'rejected') throw result.reason;
      if (!result.value.ok) throw conflict(`${files[i].path} is a folder, so a file cannot be stored there`);
    });
    const parents = [...new Set(files.map((file) => parentOf(file.path)))].filter((folder) => folder !== ROOT);
    const ensured = await settleLimit(parents, WRITE_CONCURRENCY, (folder) => ensureFolder(nodes, drive, folder, files[0].createdAt, { readFirst: true }));
    const ensureFailure = ensured.find((result) => result.status === 'rejected');
    if (ensureFailure) throw ensureFailure.reason;
  } catch (error) {
    await cleanUp(async () => {
      // Undo every record this request wrote, where ours still stands, and delete the bytes of those undone
      // or never written (a failed write was read back by writeRecord). Bytes of a record another upload
      // replaced stay: that upload puts ours back if it fails and deletes them if it succeeds. A record
      // whose write reply was lost stays too: undoing it would drop the file it replaced, which is unknown.
      const free = await mapLimit(results, WRITE_CONCURRENCY, async (result, i) => {
        if (result.status === 'rejected' || !result.value.ok) {
          if (result.status === 'rejected') await nodes.revert(drive, files[i].path, files[i].id);
          return ours[i];
        }
        if (result.value.replacedUnknown) return undefined;
        return (await nodes.revert(drive, files[i].path, files[i].id, result.value.replaced)) ? ours[i] : undefined;
      });
      if (!options.keepBytes) await objects.deleteMany(free.filter((key): key is string => key !== undefined));
    });
    throw error;
  }

  const replacedKeys = results.flatMap((r) => (r.status === 'fulfilled' && r.value.ok && r.value.replaced ? [r.value.replaced.objectKey] : []));
  if (replacedKeys.length > 0) await cleanUp(() => objects.deleteMany(replacedKeys));
  return [...files];
}

/** A record write's outcome; `replacedUnknown` when the write was saved but its reply, naming what it replaced, was lost. */
type WrittenRecord = PutFileResult & { replacedUnknown?: true };

/**
 * Writes a file's record. A write that fails may still have been saved (a lost reply): one read tells,
 * and a saved write counts as done (what it replaced is then unknown; its bytes are left for fsck).
 */
async function writeRecord(nodes: NodeStore, drive: string, file: FileNode): Promise<WrittenRecord> {
  try {
    return await nodes.putFile(drive, file);
  } catch (error) {
    const now = await nodes.get(drive, file.path).catch(() => undefined);
    if (now?.id === file.id) return { ok: true, replacedUnknown: true };
    throw error;
  }
}

/** Applies the spec's destination rules (4.1) to each part and checks the batch before anything is stored. */
export function resolveDestinations(parts: readonly UploadPart[], targets: readonly UploadTarget[] | undefined): string[] {
  if (parts.length === 0) throw badRequest('files is required: send one or more multipart parts named "files"');
  if (targets && targets.length !== parts.length) {
    throw badRequest(`metadata has ${targets.length} entries for ${parts.length} files; send one entry per file, in order`);
  }
  const destinations = parts.map((part, i) => destinationOf(part, targets?.[i] ?? {}, i));

  const seen = new Map<string, number>();
  destinations.forEach((path, i) => {
    const first = seen.get(path);
    if (first !== undefined) throw invalid(`files[${first}] and files[${i}] have the same destination ${path}; each file needs its own`);
    seen.set(path, i);
  });
  const folders = new Set(destinations.flatMap(ancestorsOf));
  destinations.forEach((path, i) => {
    if (folders.has(path)) throw invalid(`files[${i}] goes to ${path}, which another file of this request needs as a folder`);
  });
  return destinations;
}

function destinationOf(part: UploadPart, target: UploadTarget, i: number): string {
  const original = () => {
    if (part.filename === '') throw invalid(`files[${i}] has no filename; give it one, or set metadata[${i}].name or .path`);
    return parseName(part.filename, `files[${i}] filename`);
  };
  return targetPath(target, original, (field) => `metadata[${i}].${field}`);
}

/**
 * The file path a destination names (spec 4.1): `path`; else `folder` with `name` or, failing that, the
 * name `unnamed` gives; else the root with either. `param` names a field in validation errors.
 */
export function targetPath(target: UploadTarget, unnamed: () => string, param: (field: keyof UploadTarget) => string): string {
  if (target.path !== undefined) {
    const path = parsePath(target.path, param('path'));
    if (path === ROOT) throw invalid(`${param('path')} must name a file, not the root folder`);
    return path;
  }
  const name = target.name !== undefined ? parseName(target.name, param('name')) : undefined;
  if (target.folder !== undefined) {
    const folder = parsePath(target.folder, param('folder'), { allowTrailingSlash: true });
    return childPath(folder, name ?? unnamed(), `${param('folder')} with the file name`);
  }
  return joinPath(ROOT, name ?? unnamed());
}

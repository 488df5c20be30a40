import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Drive } from '../drive';
import { DriveError } from '../errors';
import type { FilesDeletion, FolderDeletion, Listing } from '../types';
import type { Command } from './args';
import { UsageError } from './args';
import type { Output } from './output';
import { formatBytes } from './progress';

type Of<N extends Command['name']> = Extract<Command, { name: N }>;

/**
 * `drive ls [-r] [/folder]`: folders as `path/`, files with size and creation time. The entries come a page
 * at a time (with `-r`, depth first), so memory does not grow with the folder; `--json` takes the whole
 * listing, in the API's shape.
 */
export async function lsCommand(command: Of<'ls'>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  if (out.json) {
    const listing = await drive.list(command.folder, { recursive: command.recursive, signal });
    printRows(listing, out);
    out.document(listing);
    return 0;
  }
  for await (const page of drive.listPages(command.folder, { recursive: command.recursive, signal })) printRows(page, out);
  return 0;
}

/** The listing's entries as `ls` lines, in path order. */
function printRows(listing: Listing, out: Output): void {
  const rows = [
    ...listing.folders.map((folder) => ({ path: folder.path, text: `${''.padStart(10)}  ${''.padEnd(24)}  ${folder.path}/` })),
    ...listing.files.map((file) => ({ path: file.path, text: `${formatBytes(file.size).padStart(10)}  ${file.created_at.padEnd(24)}  ${file.path}` })),
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const row of rows) out.line(row.text);
}

/**
 * `drive get /path [-o file]`: into `./<name>` by default, `-o -` to stdout. A file over the client's
 * `directDownloadBytes` (10 MB) comes straight from S3 by a presigned URL, its size and ETag checked; which
 * way a file comes, the API decides in the one request (`redirect_above`).
 */
export async function getCommand(command: Of<'get'>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  if (command.output === '-') {
    if (out.json) throw new UsageError('--json and -o - both want stdout; pick one');
    const download = await drive.download(command.path, { signal });
    await pipeline(Readable.fromWeb(download.body as NodeReadableStream<Uint8Array>), out.io.stdout, { signal });
    return 0;
  }
  const to = command.output ?? basename(command.path);
  const { size, etag, direct } = await drive.downloadToFile(command.path, to, { signal });
  out.line(`downloaded ${command.path} -> ${to} (${formatBytes(size)}${direct ? ', straight from storage, ETag checked' : ''})`);
  out.document({ path: command.path, to, size, etag: etag.replace(/^"|"$/g, ''), direct });
  return 0;
}

/** `drive mkdir /a/b …`: each folder with its missing parents; one that exists is fine. */
export async function mkdirCommand(command: Of<'mkdir'>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  const folders = [];
  for (const path of command.paths) {
    const folder = await drive.createFolder(path, { signal });
    folders.push(folder);
    out.line(`created ${folder.path}`);
  }
  out.document({ folders });
  return 0;
}

/**
 * `drive rm [-r] /path…`: the files among the paths go in one request (1,000 a request); a path that is a
 * folder goes as a folder, only if empty unless `-r`. A path that holds nothing is reported, and exits 1.
 */
export async function rmCommand(command: Of<'rm'>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  const folders: string[] = [];
  let files: FilesDeletion = { deleted: [], not_found: [], already_gone: [] };
  try {
    files = await drive.deleteFiles(command.paths, { signal });
  } catch (error) {
    // A folder among the paths fails the whole request: then each path on its own, as a file or a folder.
    if (!(error instanceof DriveError && error.code === 'conflict')) throw error;
    for (const path of command.paths) {
      try {
        const one = await drive.deleteFiles([path], { signal });
        files.deleted.push(...one.deleted);
        files.not_found.push(...one.not_found);
        files.already_gone.push(...one.already_gone);
      } catch (failure) {
        if (!(failure instanceof DriveError && failure.code === 'conflict')) throw failure;
        folders.push(path);
      }
    }
  }
  for (const path of files.deleted) out.line(`deleted ${path}`);
  for (const path of files.already_gone) out.line(`${path} is gone (a retry found it already deleted)`);
  const deletions = [];
  for (const path of folders) {
    const deletion = await deleteFolder(drive, path, command.recursive, out, signal);
    deletions.push(deletion);
    out.line(deletion.alreadyGone ? `${path} is gone (a retry found it already deleted)` : `deleted ${deletion.path} (${deletion.files_deleted} file(s))`);
  }
  for (const path of files.not_found) out.warn(`${path}: no such file or folder`);
  out.document({ deleted: files.deleted, not_found: files.not_found, already_gone: files.already_gone, folders: deletions });
  return files.not_found.length > 0 ? 1 : 0;
}

/** A folder (without `recursive`, only if empty), following a big delete's job and saying how it goes. */
function deleteFolder(drive: Drive, path: string, recursive: boolean, out: Output, signal: AbortSignal): Promise<FolderDeletion> {
  let reported = -1;
  return drive.deleteFolder(path, {
    recursive,
    signal,
    // A big tree goes on in a job on the server: say so once, then each time its count moves.
    onProgress: (job) => {
      if (job.status === 'done' || job.files_deleted === reported) return;
      out.warn(reported < 0 ? `${job.path} is gone for readers; deleting what was in it (job ${job.id}): ${job.files_deleted} file(s) so far` : `  ${job.files_deleted} file(s) deleted`);
      reported = job.files_deleted;
    },
  }).catch((error: unknown) => {
    // The API's 409 names its query parameter; here the same thing is a flag.
    if (error instanceof DriveError && error.message.includes('pass recursive=true')) {
      throw new DriveError(error.code, error.message.replace('pass recursive=true', 'pass -r'), error.status, { cause: error });
    }
    throw error;
  });
}

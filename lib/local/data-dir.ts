import { isMainThread } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** A data dir the host cannot use: not a folder, not writable, or not creatable; the message names it. */
export class DataDirError extends Error {
  override name = 'DataDirError';
}

/** What opening the data dir found. */
export interface OpenedDataDir {
  /** The folder's absolute path. */
  path: string;
  /** The mode it had if other users could reach it (it is 0700 now); undefined if it was private already or new. */
  loosenedMode?: number;
}

/**
 * Makes `dataDir` ready and private: created if missing (0700), checked to be a folder this process can write,
 * and made its owner's alone (chmod 0700) if it was not. Everything the process creates afterwards, by the
 * host or by the emulators' own code (s3rver, dynalite's LevelDB), is its owner's alone too (umask 077).
 * Throws a `DataDirError` naming the folder and the reason.
 */
export async function openDataDir(dataDir: string): Promise<OpenedDataDir> {
  const path = resolve(dataDir);
  // The data dir holds stored bytes, key hashes, links and traces: no file or folder of it is for other users.
  // The mask is the process's: a thread (the storage thread of `npm start`) may not set it, and needs not.
  if (isMainThread) process.umask(0o077);
  try {
    await makeFolder(path);
  } catch (error) {
    const { code, path: failed } = error as NodeJS.ErrnoException;
    throw notWritable(path, code, failed !== undefined && failed !== path ? ` (at ${failed})` : '');
  }
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new DataDirError(`the data dir ${path} cannot be read (${error.code ?? error.message})`);
  });
  if (!info.isDirectory()) throw new DataDirError(`the data dir ${path} is a file, not a folder; set DRIVE_DATA_DIR to a folder`);
  await checkWritable(path);
  if ((info.mode & 0o077) === 0) return { path };
  // The folder's own mode closes everything below it, however loose the files inside were made.
  try {
    await chmod(path, 0o700);
  } catch (error) {
    throw new DataDirError(`the data dir ${path} is readable by other users (mode ${octal(info.mode)}) and cannot be made private (${(error as NodeJS.ErrnoException).code}); chmod 700 it or choose another DRIVE_DATA_DIR`);
  }
  return { path, loosenedMode: info.mode & 0o777 };
}

/** The log line that says a data dir was made private. */
export function tightenedMessage(opened: OpenedDataDir): string | undefined {
  if (opened.loosenedMode === undefined) return undefined;
  return `the data dir ${opened.path} was readable by other users (mode ${octal(opened.loosenedMode)}); it is now its owner's alone (0700)`;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/**
 * Creates `path` and its missing parents, one level at a time: Node's recursive mkdir never returns on a
 * path under `/proc` (its mkdir answers ENOENT whatever is made first), and a start must fail at once.
 */
async function makeFolder(path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 });
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(path) === path) throw error;
  }
  await makeFolder(dirname(path));
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Writes and removes a file in `path`, so that a folder the host cannot write (read-only, not ours, `/proc`) stops the start by name. */
async function checkWritable(path: string): Promise<void> {
  const probe = `${path}/.write-check-${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(probe, '', { flag: 'wx' });
  } catch (error) {
    throw notWritable(path, (error as NodeJS.ErrnoException).code);
  }
  await unlink(probe).catch(() => undefined);
}

function notWritable(path: string, code: string | undefined, where = ''): DataDirError {
  const why = code === 'ENOTDIR' ? 'a part of its path is a file' : code === 'EROFS' ? 'its file system is read-only' : 'permission denied, or not a real folder';
  return new DataDirError(`the data dir ${path} is not writable (${code ?? 'unknown error'}: ${why}${where}); set DRIVE_DATA_DIR to a folder this user can write`);
}

import { lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';

/** A Unix socket's path may be at most 107 bytes on Linux and 103 on macOS; a little is kept in hand. */
const MAX_SOCKET_PATH_BYTES = 100;
/** The folder in the data dir that holds the emulators' socket folders. */
export const SOCKETS_FOLDER = 'sockets';
/** What the socket folders in the system's temp folder are named: this version's, and earlier versions' (`drive-`, `drive-sqs-`). */
const TEMP_SOCKET_FOLDER = /^drive-(?:sock-|sqs-)?[A-Za-z0-9]{6}$/;

/**
 * A new private folder (0700) for an emulator's socket named `socketName`: under `<dataDir>/sockets` when the
 * socket's path fits a Unix socket's limit, else in the system's temp folder (`temp`). The folders a killed host left
 * there, in both places, are removed first, so that `kill -9` leaves none behind for long.
 */
export async function makeSocketDir(dataDir: string, socketName: string, temp = tmpdir()): Promise<string> {
  const root = join(dataDir, SOCKETS_FOLDER);
  await removeStaleSocketDirs(root, () => true);
  await removeStaleSocketDirs(temp, (name) => TEMP_SOCKET_FOLDER.test(name));
  // mkdtemp's six random characters stand in for the XXXXXX measured here.
  if (Buffer.byteLength(join(root, 'XXXXXX', socketName)) <= MAX_SOCKET_PATH_BYTES) {
    await mkdir(root, { recursive: true, mode: 0o700 });
    return mkdtemp(`${root}${sep}`);
  }
  return mkdtemp(join(temp, 'drive-sock-'));
}

/**
 * Removes the folders of `root` that `named` picks and that a host killed outright left: this user's, holding
 * sockets and nothing else, none of which accepts a connection. A folder still being made (empty) or in use stays.
 */
export async function removeStaleSocketDirs(root: string, named: (name: string) => boolean): Promise<void> {
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names.filter(named)) {
    const dir = join(root, name);
    if (await stale(dir)) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function stale(dir: string): Promise<boolean> {
  const info = await lstat(dir).catch(() => undefined);
  if (!info?.isDirectory() || info.uid !== process.getuid?.()) return false;
  const entries = await readdir(dir).catch(() => [] as string[]);
  if (entries.length === 0) return false;
  for (const entry of entries) {
    const path = join(dir, entry);
    if (!(await lstat(path).catch(() => undefined))?.isSocket()) return false;
    if (!(await refuses(path))) return false;
  }
  return true;
}

/** Whether nothing listens on the socket at `path`: a refusal says so; an accepted connection, or anything unclear, says not. */
function refuses(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path });
    const done = (outcome: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    // A listener busy enough not to take the connection this long is still a listener.
    const timer = setTimeout(() => done(false), 2000);
    socket.once('connect', () => done(false));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' || error.code === 'ENOENT'));
  });
}

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSocketDir } from '../../socket-dir';

// The emulators' sockets live in folders of their own; a host killed with SIGKILL cannot remove them, so the
// next start removes those whose sockets no longer answer, and never one in use.

let root: string;
/** The system temp folder, as this test sees it: one of its own, so that other processes' folders are never in play. */
let temp: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'drive-sockdir-'));
  temp = join(root, 'tmp');
  await mkdir(temp);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A socket at `path` whose process was killed: the file stays, nothing listens. */
async function deadSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function liveSocket(path: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, () => resolve()));
  return server;
}

describe('makeSocketDir', () => {
  it('makes a private folder under <dataDir>/sockets when the socket path is short enough', async () => {
    const dataDir = join(root, 'data');

    const dir = await makeSocketDir(dataDir, 'dynamodb.sock', temp);

    expect(dir.startsWith(join(dataDir, 'sockets'))).toBe(true);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readdir(temp)).toEqual([]);
  });

  it('falls back to the temp folder when the socket path would pass the ~107-byte limit', async () => {
    const dataDir = join(root, 'd'.repeat(120));

    const dir = await makeSocketDir(dataDir, 'dynamodb.sock', temp);

    expect(dir.startsWith(join(temp, 'drive-sock-'))).toBe(true);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('removes the folders a killed host left, in the data dir and in the temp folder, and keeps those in use', async () => {
    const dataDir = join(root, 'data');
    const killed = [join(dataDir, 'sockets', 'AbC123'), join(temp, 'drive-sock-Xy12Zw'), join(temp, 'drive-Qq1234'), join(temp, 'drive-sqs-Rr5678')];
    for (const dir of killed) {
      await mkdir(dir, { recursive: true });
      await deadSocket(join(dir, 'a.sock'));
    }
    const inUse = join(temp, 'drive-sock-Live01');
    await mkdir(inUse);
    const server = await liveSocket(join(inUse, 'a.sock'));
    // Not a socket folder, though named like one: never touched.
    const other = join(temp, 'drive-Other1');
    await mkdir(other);
    await writeFile(join(other, 'notes.txt'), 'mine');
    try {
      const made = await makeSocketDir(dataDir, 'dynamodb.sock', temp);

      expect(await readdir(join(dataDir, 'sockets'))).toEqual([made.slice(join(dataDir, 'sockets').length + 1)]);
      expect((await readdir(temp)).sort()).toEqual(['drive-Other1', 'drive-sock-Live01']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

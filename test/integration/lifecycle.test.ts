import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DriveClient, type ErrorJson, type FileJson, type ListingJson, json } from '../support/api-client';
import { cpuSecondsOf } from '../support/cpu-log';
import { runFsck } from '../support/fsck';
import { removeDataDir, startHost } from '../support/local-host';

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-lifecycle-'));
});

afterAll(async () => {
  await removeDataDir(dataDir);
});

describe('the local host (npm start)', () => {
  it('creates and prints a key on first start only, keeps every file across restarts, and stops cleanly', async () => {
    const first = await startHost({ DRIVE_RATE_LIMITS: 'off' }, dataDir);
    const payload = randomBytes(256 * 1024);
    let key: string | undefined;
    let uploaded: { status: number; body: { data: FileJson[] } };
    try {
      key = /shown only this once:\n(drv_[A-Za-z0-9_-]{43})\n/.exec(first.output())?.[1];
      expect(key).toBeDefined();
      uploaded = await json<{ data: FileJson[] }>(
        new DriveClient(first.url, key!).upload([{ data: payload, filename: 'kept.bin' }], [{ folder: '/persisted/deep' }]),
      );
      expect(uploaded.status).toBe(200);
    } finally {
      expect(await first.stop('SIGINT')).toBe(0);
    }

    const second = await startHost({ DRIVE_RATE_LIMITS: 'off' }, dataDir);
    try {
      expect(second.output()).not.toContain('shown only this once');
      const drive = new DriveClient(second.url, key!);
      const download = await drive.download({ path: '/persisted/deep/kept.bin' });
      expect(Buffer.from(await download.arrayBuffer()).equals(payload)).toBe(true);
      const listing = await json<{ data: ListingJson }>(drive.list({ folder: '/persisted', recursive: 'true' }));
      expect(listing.body.data.files).toEqual([expect.objectContaining({ id: uploaded.body.data[0].id, size: payload.length })]);
      expect(listing.body.data.folders.map((f) => f.path)).toEqual(['/persisted/deep']);
    } finally {
      expect(await second.stop('SIGTERM')).toBe(0);
    }
  });

  it('refuses to start on a bad DRIVE_API_KEYS entry, naming it but not the secret', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'drive-badkeys-'));
    try {
      // One refused start (a process), its error checked both ways.
      const refused = await startHost({ DRIVE_API_KEYS: 'bad drive!:s3cret-value' }, dir).then(
        () => new Error('started'),
        (error: Error) => error,
      );
      expect(refused.message).toMatch(/DRIVE_API_KEYS entry 1/);
      expect(refused.message).not.toMatch(/s3cret-value/);
    } finally {
      await removeDataDir(dir);
    }
  });

  it('makes the keys match DRIVE_API_KEYS at each start: a demoted secret loses admin, a dropped one is revoked', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'drive-reconcile-'));
    const boss = 'reconcile-boss-29hVHaTbDrEgNFVFcigNCYZW';
    const helper = 'reconcile-helper-XLSRCq7SRGhk5TMH4GBKqX';
    try {
      const first = await startHost({ DRIVE_API_KEYS: `team:${boss}:admin,team:${helper}:admin` }, dir);
      try {
        expect((await new DriveClient(first.url, boss).request('GET', '/drive/keys')).status).toBe(200);
      } finally {
        await first.stop();
      }
      const second = await startHost({ DRIVE_API_KEYS: `team:${boss}:read-only:/pub` }, dir);
      try {
        const demoted = new DriveClient(second.url, boss);
        expect((await demoted.request('GET', '/drive/keys')).status).toBe(403);
        expect((await demoted.list({ folder: '/' })).status).toBe(403);
        expect((await json<ErrorJson>(new DriveClient(second.url, helper).list())).status).toBe(401);
        expect(second.output()).toMatch(/revoked key [0-9a-f]+ \(drive team\): DRIVE_API_KEYS no longer lists it/);
        expect(second.output()).not.toContain(helper);
      } finally {
        await second.stop();
      }
    } finally {
      await removeDataDir(dir);
    }
  });

  it.each([
    ['a secret under 128 bits', 'team:short-secret-12345'],
    ['a role where the secret should be', 'sk_live_f6UrpcrOhwuH2C8YgGgAiPrZeO:admin'],
  ])('refuses to start on %s, naming the entry', async (_, entry) => {
    const dir = await mkdtemp(join(tmpdir(), 'drive-badkeys-'));
    try {
      await expect(startHost({ DRIVE_API_KEYS: `ok:good-secret-29hVHaTbDrEgNFVFcigNCYZW,${entry}` }, dir)).rejects.toThrow(/DRIVE_API_KEYS entry 2/);
    } finally {
      await removeDataDir(dir);
    }
  });

  it('starts over an endpoints.json that a killed host left, even one naming a live pid, and fsck ignores it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'drive-stale-'));
    try {
      await mkdir(dir, { recursive: true });
      // The test's own pid is alive; nothing listens on port 9 of this machine.
      const stale = { pid: process.pid, url: 'http://127.0.0.1:9', dynamodb: 'http://127.0.0.1:9', s3: 'http://127.0.0.1:9' };
      await writeFile(join(dir, 'endpoints.json'), JSON.stringify(stale));
      expect((await runFsck(dir)).code).toBe(0);
      const host = await startHost({ DRIVE_API_KEYS: `s:${'stale-key-f6UrpcrOhwuH2C8YgGgAiPrZeO'}` }, dir);
      await host.stop();
    } finally {
      await removeDataDir(dir);
    }
  });

  it("stops when npm's pid is killed (npm does not pass SIGTERM to its script), so the next npm start runs", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'drive-npm-'));
    const env = { ...process.env, PORT: '0', DRIVE_DATA_DIR: dir, DRIVE_API_KEYS: 'n:npm-key-K67YEE5VvB4qHYXn9c2GY3uXWoe1K' };
    const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath, 'start']] as const : ['npm', ['start']] as const;
    try {
      const child = spawn(npm[0], npm[1], { cwd: join(__dirname, '..', '..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // npm, then the host it starts: given up on if npm exits first.
      await until(() => /listening on/.test(output), () => child.exitCode !== null, () => output);
      const { pid } = JSON.parse(await readFile(join(dir, 'endpoints.json'), 'utf8')) as { pid: number };
      expect(pid).not.toBe(child.pid);

      child.kill('SIGTERM');
      // Given up on if the host spends 30 s of CPU still running (stopping takes a fraction of one).
      await until(() => !alive(pid), cpuSpent(pid, 30), () => `the host (pid ${pid}) still runs:\n${output}`);

      const again = await startHost({ DRIVE_API_KEYS: env.DRIVE_API_KEYS }, dir);
      await again.stop();
    } finally {
      await removeDataDir(dir);
    }
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves once `done()` holds, checking every 100 ms; fails with `why()` once `hopeless()` holds (a process
 * exited, or spent its CPU budget). No wall-clock limit, which a busy machine would pass: Jest's timeout is
 * the backstop.
 */
async function until(done: () => boolean, hopeless: () => boolean, why: () => string): Promise<void> {
  while (!done()) {
    // Asked again once hopeless: a process that exited between the two reads is done, not hopeless.
    if (hopeless() && !done()) throw new Error(why());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether process `pid` has spent more than `seconds` of CPU since `cpuSpent` was made (or has exited). */
function cpuSpent(pid: number | undefined, seconds: number): () => boolean {
  const from = cpuSecondsOf(pid) ?? 0;
  return () => (cpuSecondsOf(pid) ?? Infinity) - from > seconds;
}

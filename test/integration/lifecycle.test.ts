import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DriveClient, type FileJson, type ListingJson, json } from '../support/api-client';
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
      await expect(startHost({ DRIVE_API_KEYS: 'bad drive!:s3cret-value' }, dir)).rejects.toThrow(/DRIVE_API_KEYS entry 1/);
      await expect(startHost({ DRIVE_API_KEYS: 'bad drive!:s3cret-value' }, dir)).rejects.not.toThrow(/s3cret-value/);
    } finally {
      await removeDataDir(dir);
    }
  });
});

import { randomBytes } from 'node:crypto';
import { DriveClient, type FileJson, type FolderJson, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const KEY = 'races-key-0123456789abcdefghijklmnop';
const ROUNDS = 10;

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `races:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
  drive = new DriveClient(host.url, KEY);
});

afterAll(() => stopHost(host));

/** fsck of the host's data dir, through its emulators: every race must leave it clean. */
async function expectFsckClean(): Promise<void> {
  expect(await runFsck(host.dataDir)).toEqual({ code: 0, output: expect.stringContaining('clean') });
}

describe('races', () => {
  it(`concurrent uploads to one path: exactly one version wins and no bytes are left behind (${ROUNDS} rounds of 8)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const payloads = Array.from({ length: 8 }, () => randomBytes(1024 + round));
      const results = await Promise.all(payloads.map((data) => json<{ data: FileJson[] }>(drive.upload([{ data, filename: 'same.bin' }], [{ path: `/same/${round}.bin` }]))));
      expect(results.map((r) => r.status)).toEqual(payloads.map(() => 200));

      const listing = await json<{ data: ListingJson }>(drive.list({ folder: '/same' }));
      const stored = listing.body.data.files.filter((f) => f.path === `/same/${round}.bin`);
      expect(stored).toHaveLength(1);
      const winner = results.findIndex((r) => r.body.data[0].id === stored[0].id);
      expect(winner).toBeGreaterThanOrEqual(0);
      const bytes = Buffer.from(await (await drive.download({ path: `/same/${round}.bin` })).arrayBuffer());
      expect(bytes.equals(payloads[winner])).toBe(true);
    }
    await expectFsckClean();
  });

  it(`concurrent creates of one deep folder: 200 to all, one folder (${ROUNDS} rounds of 8)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const path = `/deep-${round}/a/b/c/d`;
      const results = await Promise.all(Array.from({ length: 8 }, () => json<{ data: FolderJson }>(drive.createFolder({ path }))));
      expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
      const listing = await json<{ data: ListingJson }>(drive.list({ folder: `/deep-${round}`, recursive: 'true' }));
      expect(listing.body.data.folders.map((f) => f.path)).toEqual(['a', 'a/b', 'a/b/c', 'a/b/c/d'].map((rest) => `/deep-${round}/${rest}`));
    }
    await expectFsckClean();
  });

  it(`upload into a folder while it is deleted recursively: the file goes with the folder or survives with it (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const folder = `/doomed-${round}`;
      await drive.upload(Array.from({ length: 20 }, (_, i) => ({ data: `${i}`, filename: `old-${i}.txt` })), Array.from({ length: 20 }, () => ({ folder })));
      const [, uploaded] = await Promise.all([
        drive.deleteFolder({ path: folder, recursive: 'true' }),
        Promise.all(Array.from({ length: 4 }, (_, i) => drive.upload([{ data: `new ${i}`, filename: `new-${i}.txt` }], [{ folder }]))),
      ]);
      expect(uploaded.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      await expectFsckClean();
    }
  });

  it(`upload into an empty folder while it is deleted without recursive: 409 and the file kept, or the folder gone (${ROUNDS * 2} rounds)`, async () => {
    for (let round = 0; round < ROUNDS * 2; round++) {
      const folder = `/empty-${round}`;
      await drive.createFolder({ path: folder });
      const [deleted, uploaded] = await Promise.all([
        drive.deleteFolder({ path: folder }),
        drive.upload([{ data: 'late', filename: 'late.txt' }], [{ folder }]),
      ]);
      expect(uploaded.status).toBe(200);
      expect([200, 409]).toContain(deleted.status);
      // The file the upload reported is there, with its folder.
      expect(await (await drive.download({ path: `${folder}/late.txt` })).text()).toBe('late');
    }
    await expectFsckClean();
  });

  it(`concurrent recursive deletes of overlapping trees leave nothing (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const root = `/overlap-${round}`;
      await drive.upload(
        Array.from({ length: 30 }, (_, i) => ({ data: `${i}`, filename: `f-${i}.txt` })),
        Array.from({ length: 30 }, (_, i) => ({ folder: `${root}/${i % 3}/sub` })),
      );
      const results = await Promise.all([root, `${root}/0`, `${root}/1/sub`, root].map((path) => drive.deleteFolder({ path, recursive: 'true' })));
      expect(results.map((r) => r.status).every((s) => s === 200 || s === 404)).toBe(true);
      expect((await drive.list({ folder: root })).status).toBe(404);
    }
    await expectFsckClean();
  });
});

import { randomBytes } from 'node:crypto';
import { DriveClient, type FileJson, type FolderJson, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const KEY = 'races-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';
// The protocol's orders are proven by test/model (thousands of interleavings on in-memory ports); these
// rounds prove the AWS adapters (conditional writes, transactions, S3 deletes) under real concurrency, and
// each test's fsck runs once, at its end: its rounds use folders of their own, and an orphan stays one.
const ROUNDS = 5;

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

  it(`uploads into a folder while it is deleted recursively: each is stored (and goes or stays with the folder) or refused with 409, never orphaned (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const folder = `/doomed-${round}`;
      await drive.upload(Array.from({ length: 20 }, (_, i) => ({ data: `${i}`, filename: `old-${i}.txt` })), Array.from({ length: 20 }, () => ({ folder })));
      const [deleted, uploaded] = await Promise.all([
        drive.deleteFolder({ path: folder, recursive: 'true' }),
        Promise.all(Array.from({ length: 4 }, (_, i) => drive.upload([{ data: `new ${i}`, filename: `new-${i}.txt` }], [{ folder }]))),
      ]);
      expect(deleted.status).toBe(200);
      for (const answer of uploaded) expect([200, 409]).toContain(answer.status);
    }
    await expectFsckClean();
  });

  it('uploads replacing files of a folder of 200 while it is deleted recursively: no new bytes outlive their record (3 rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const folder = `/replaced-${round}`;
      // 200 files: one page of the delete's walk (1,000) and eight of its 25-record transactions, enough for
      // replacements to land between its read and its conditional deletes (what 1,000 proved, at a fifth).
      const names = Array.from({ length: 200 }, (_, i) => `f-${String(i).padStart(4, '0')}.txt`);
      expect((await drive.upload(names.map((filename) => ({ data: filename, filename })), names.map(() => ({ folder })))).status).toBe(200);
      // The delete reads the folder first; the uploads replace files it has seen and not yet deleted.
      const deleting = drive.deleteFolder({ path: folder, recursive: 'true' });
      const uploaded = await Promise.all(
        names.filter((_, i) => i % 10 === 7).map(async (filename, i) => {
          await new Promise((resolve) => setTimeout(resolve, 4 * i + round));
          return drive.upload([{ data: `replaced ${filename}`, filename }], [{ folder }]);
        }),
      );
      // Done within the request's 10 s, or (on a slow machine) handed to a job, which is waited for.
      const deleted = await deleting;
      expect([200, 202]).toContain(deleted.status);
      if (deleted.status === 202) await jobDone(((await deleted.json()) as { data: { job: { url: string } } }).data.job.url);
      for (const answer of uploaded) expect([200, 409]).toContain(answer.status);
    }
    await expectFsckClean();
  });

  it(`upload into an empty folder while it is deleted without recursive: one of them wins, and a stored file has its folder (${ROUNDS * 2} rounds)`, async () => {
    for (let round = 0; round < ROUNDS * 2; round++) {
      const folder = `/empty-${round}`;
      await drive.createFolder({ path: folder });
      const [deleted, uploaded] = await Promise.all([
        drive.deleteFolder({ path: folder }),
        drive.upload([{ data: 'late', filename: 'late.txt' }], [{ folder }]),
      ]);
      expect([200, 409]).toContain(uploaded.status);
      expect([200, 409]).toContain(deleted.status);
      // The file the upload reported is there, with its folder.
      if (uploaded.status === 200) expect(await (await drive.download({ path: `${folder}/late.txt` })).text()).toBe('late');
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

/** Reads a job at `url` until it is done; Jest's timeout is the backstop for one that never is. */
async function jobDone(url: string): Promise<void> {
  for (;;) {
    const res = await fetch(url, { headers: { Authorization: `Bearer ${drive.key}` } });
    if (((await res.json()) as { data: { job: { status: string } } }).data.job.status === 'done') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

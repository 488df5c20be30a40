import { DriveClient, type ErrorJson, type FileEntryJson, type FolderEntryJson, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { FINAL_DELETES } from '../support/trash';

// POST /drive/copy (an extension of the spec): a new file, its bytes copied in S3, made as an upload is.
// DRIVE_SINGLE_COPY_MAX_BYTES lowers the size above which an object is copied in parts (S3's 5 GiB), so
// that the multipart copy runs on a small file.

const ADMIN = 'copy-admin-f6UrpcrOhwuH2C8YgGgAiPrZeO';
const READER = 'copy-reader-CPmWEFPSAyKFHbhBD0xtiQ3p6';
const CONFINED = 'copy-confined-H2WYbhMyZ9SZaRESTDG4FsW';
const OTHER = 'copy-other-f6UrpcrOhwuH2C8YgGgAiPrZeO';

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost({
    ...FINAL_DELETES,
    DRIVE_API_KEYS: [`c:${ADMIN}:admin`, `c:${READER}:read-only`, `c:${CONFINED}:read-write:/team`, `d:${OTHER}`].join(','),
    DRIVE_RATE_LIMITS: 'off',
    DRIVE_SINGLE_COPY_MAX_BYTES: String(64 * 1024),
  });
  drive = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

interface CopyJob {
  id: string;
  type: string;
  status: 'running' | 'done';
  files_copied: number;
  url: string;
  result: FolderEntryJson | null;
}

function copy(client: DriveClient, body: unknown) {
  return json<{ data: FileEntryJson & { job: CopyJob } } & ErrorJson>(client.request('POST', '/drive/copy', { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
}

async function put(path: string, data: string | Buffer = `bytes of ${path}`): Promise<void> {
  expect((await drive.upload([{ data, filename: 'x' }], [{ path }])).status).toBe(200);
}

async function etagOf(path: string): Promise<string> {
  const res = await drive.download({ path });
  await res.arrayBuffer();
  return res.headers.get('etag') ?? '';
}

async function expectFsckClean(): Promise<void> {
  expect(await runFsck(host.dataDir)).toEqual({ code: 0, output: expect.stringContaining('clean') });
}

describe('POST /drive/copy', () => {
  it('makes a new file with its own id and bytes, leaving the original as it was', async () => {
    await put('/cp/a.txt');
    const original = (await json<{ data: ListingJson }>(drive.list({ folder: '/cp' }))).body.data.files[0];
    const objects = (await storedState(host.dataDir)).objectKeys.length;

    const res = await copy(drive, { from: '/cp/a.txt', to: '/backup/2026/a.txt' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: expect.any(String), name: 'a.txt', path: '/backup/2026/a.txt', size: original.size, created_at: expect.any(String) });
    expect(res.body.data.id).not.toBe(original.id);
    expect(await (await drive.download({ path: '/backup/2026/a.txt' })).text()).toBe('bytes of /cp/a.txt');
    expect(await (await drive.download({ path: '/cp/a.txt' })).text()).toBe('bytes of /cp/a.txt');
    expect((await storedState(host.dataDir)).objectKeys.length).toBe(objects + 1);
    // The copy's bytes are its own: deleting the original leaves the copy whole.
    await drive.request('DELETE', '/drive/files?path=/cp/a.txt');
    expect(await (await drive.download({ path: '/backup/2026/a.txt' })).text()).toBe('bytes of /cp/a.txt');
    await expectFsckClean();
  });

  it('copies a file above the single-copy limit in parts, bytes and content hash intact', async () => {
    const big = Buffer.alloc(300 * 1024, 7);
    big.write('start');
    await put('/cp/big.bin', big);
    const res = await copy(drive, { from: '/cp/big.bin', to: '/cp/big copy.bin' });
    expect(res.status).toBe(200);
    const copied = Buffer.from(await (await drive.download({ path: '/cp/big copy.bin' })).arrayBuffer());
    expect(copied.equals(big)).toBe(true);
    // Copied in parts: S3's ETag of an assembled object, `-<parts>`.
    expect(await etagOf('/cp/big copy.bin')).toMatch(/-1"$/);
    await expectFsckClean();
  });

  it('refuses a taken destination with 409, and replaces a file with overwrite (its old bytes deleted)', async () => {
    await put('/ow/a.txt');
    await put('/ow/b.txt');
    expect(await copy(drive, { from: '/ow/a.txt', to: '/ow/b.txt' })).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    const objects = (await storedState(host.dataDir)).objectKeys.length;
    expect((await copy(drive, { from: '/ow/a.txt', to: '/ow/b.txt', overwrite: true })).status).toBe(200);
    expect(await (await drive.download({ path: '/ow/b.txt' })).text()).toBe('bytes of /ow/a.txt');
    // One object in (the copy), one out (what it replaced).
    expect((await storedState(host.dataDir)).objectKeys.length).toBe(objects);
    await expectFsckClean();
  });

  it('answers every error row with its status, copying nothing', async () => {
    await put('/err/f.txt');
    await drive.createFolder({ path: '/err/sub' });
    const objects = (await storedState(host.dataDir)).objectKeys.length;
    const cases: [unknown, number, string][] = [
      [{ from: '/err/missing.txt', to: '/err/x.txt' }, 404, 'not_found'],
      [{ from: '/err/f.txt', to: '/err/sub', overwrite: true }, 409, 'conflict'],
      [{ from: '/err/f.txt', to: '/err/f.txt/x.txt' }, 409, 'conflict'],
      [{ from: '/err/f.txt', to: '/err/f.txt', overwrite: true }, 422, 'validation_error'],
      [{ from: '/err/sub', to: '/err/sub/inner' }, 422, 'validation_error'],
      [{ from: '/err/sub', to: '/err/f.txt' }, 409, 'conflict'],
      [{ from: '/err/f.txt', to: '/' }, 422, 'validation_error'],
      [{ from: '/err/f.txt' }, 400, 'bad_request'],
      [{ from: '/err/f.txt', to: '/err/y.txt', overwrite: 1 }, 400, 'bad_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await copy(drive, body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status, code });
    }
    expect((await storedState(host.dataDir)).objectKeys.length).toBe(objects);
    await expectFsckClean();
  });

  it('takes keys that may write, within their folder, and never another drive\'s files', async () => {
    await put('/team/t.txt');
    await put('/private/p.txt');
    expect((await copy(new DriveClient(host.url, READER), { from: '/team/t.txt', to: '/team/u.txt' })).status).toBe(403);
    const confined = new DriveClient(host.url, CONFINED);
    expect((await copy(confined, { from: '/private/p.txt', to: '/team/p.txt' })).status).toBe(403);
    expect((await copy(confined, { from: '/team/t.txt', to: '/private/t.txt' })).status).toBe(403);
    expect((await copy(confined, { from: '/team/t.txt', to: '/team/u.txt' })).status).toBe(200);
    expect((await copy(new DriveClient(host.url, OTHER), { from: '/private/p.txt', to: '/stolen.txt' })).status).toBe(404);
  });

  it('copies racing deletes of the original and uploads to the copy\'s path leave fsck clean', async () => {
    for (let round = 0; round < 5; round++) {
      await put(`/race${round}/a.txt`);
      const results = await Promise.all([
        copy(drive, { from: `/race${round}/a.txt`, to: `/race${round}/b.txt`, overwrite: true }),
        json(drive.request('DELETE', `/drive/files?path=/race${round}/a.txt`)),
        drive.upload([{ data: 'other', filename: 'b.txt' }], [{ folder: `/race${round}` }]).then((r) => ({ status: r.status })),
        json(drive.request('DELETE', `/drive/folders?path=/race${round}&recursive=true`)),
      ]);
      for (const result of results) expect([200, 202, 404, 409]).toContain(result.status);
    }
    // Once, after the last round: each round has its own folder, and an orphan stays one.
    await expectFsckClean();
  });
});

async function tree(client: DriveClient, folder: string): Promise<string[] | number> {
  const res = await json<{ data: ListingJson }>(client.list({ folder, recursive: 'true' }));
  if (res.status !== 200) return res.status;
  return [...res.body.data.files.map((f) => f.path), ...res.body.data.folders.map((f) => `${f.path}/`)].sort();
}

/** Reads the job at `url` until it is done; Jest's timeout is the backstop for one that never is. */
async function until(url: string, client: DriveClient): Promise<CopyJob> {
  for (;;) {
    const res = await json<{ data: { job: CopyJob } }>(fetch(url, { headers: { Authorization: `Bearer ${client.key}` } }));
    if (res.body.data.job.status === 'done') return res.body.data.job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('POST /drive/copy of a folder', () => {
  it('copies everything in it, empty folders too, with new ids, and answers the new Folder entry', async () => {
    await put('/tpl/a.txt');
    await put('/tpl/src/b.txt');
    await drive.createFolder({ path: '/tpl/empty' });
    const res = await copy(drive, { from: '/tpl', to: '/proj/one' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: expect.any(String), name: 'one', path: '/proj/one' });
    expect(await tree(drive, '/proj/one')).toEqual(['/proj/one/a.txt', '/proj/one/empty/', '/proj/one/src/', '/proj/one/src/b.txt']);
    expect(await tree(drive, '/tpl')).toEqual(['/tpl/a.txt', '/tpl/empty/', '/tpl/src/', '/tpl/src/b.txt']);
    expect(await (await drive.download({ path: '/proj/one/src/b.txt' })).text()).toBe('bytes of /tpl/src/b.txt');
    await expectFsckClean();
  });

  it('past the request budget, answers 202 with a job the worker finishes', async () => {
    // DRIVE_JOB_STEP_MS=0: each step copies one page and sends the job on, whatever the machine's speed. A
    // host killed mid-copy is in test/chaos/move-copy-crash.test.ts.
    const env = { ...FINAL_DELETES, DRIVE_API_KEYS: `c:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_COPY_BUDGET_MS: '0', DRIVE_JOB_STEP_MS: '0' };
    const paths = Array.from({ length: 24 }, (_, i) => `/src/d${i % 3}/f${i}.txt`);
    const running = await startHost(env);
    try {
      const client = new DriveClient(running.url, ADMIN);
      expect((await client.upload(paths.map((path) => ({ data: `bytes of ${path}`, filename: 'x' })), paths.map((path) => ({ path })))).status).toBe(200);
      const res = await copy(client, { from: '/src', to: '/dst' });
      expect(res.status).toBe(202);
      expect(res.body.data.job).toMatchObject({ type: 'copy-folder', status: 'running' });
      const done = await until(res.body.data.job.url, client);
      expect(done).toMatchObject({ status: 'done', result: { path: '/dst' } });
      const copied = (await tree(client, '/dst')) as string[];
      expect(copied.filter((path) => !path.endsWith('/'))).toEqual(paths.map((path) => path.replace('/src', '/dst')).sort());
      expect(await (await client.download({ path: '/dst/d2/f23.txt' })).text()).toBe('bytes of /src/d2/f23.txt');
      expect(await runFsck(running.dataDir)).toEqual({ code: 0, output: expect.stringContaining('clean') });
    } finally {
      await stopHost(running);
    }
  });
});

import { DriveClient, type FileJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { expectFsckClean, putFiles } from '../support/seeding';
import { trashPage } from '../support/trash';

// Emptying the trash of a subtree as a job (issue 28: `DELETE /drive/trash?path=` "as a job when big") on the
// local host, against its embedded S3 and DynamoDB. No request budget (DRIVE_DELETE_BUDGET_MS=0) makes every
// emptying of a non-empty trash a job, whatever the machine's speed, and DRIVE_JOB_STEP_MS=0 makes each worker
// step purge one item (or a page of a folder item's members) and send the job on: ~30 items cross ~30 steps.

const ADMIN = 'empty-admin-R5tYq8WcZ2nVb7Kx0pLs3Dm';
const WRITER = 'empty-writer-Hn4Jx9QeT1aZ6cVb8MwP2s';
const DRIVE = 'empty';

type EmptiedJson = { purged: true; path: string; items: number; files: number; bytes: number };
type EmptyJobJson = { id: string; type: string; status: string; url: string; path: string; files_purged: number; result: EmptiedJson | null };

let host: RunningHost;
let admin: DriveClient;

beforeAll(async () => {
  host = await startHost({
    DRIVE_API_KEYS: [`${DRIVE}:${ADMIN}:admin`, `${DRIVE}:${WRITER}:read-write`].join(','),
    DRIVE_RATE_LIMITS: 'off',
    DRIVE_TRASH_DAYS: '7',
    DRIVE_DELETE_BUDGET_MS: '0',
    DRIVE_JOB_STEP_MS: '0',
  });
  admin = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

/**
 * Reads the job at `url` until it is done: a cap on reads (far above what a job of ~30 steps needs on a slow
 * machine), so that a job that never ends fails here, never a deadline.
 */
async function untilDone(url: string, cap = 20_000): Promise<EmptyJobJson> {
  for (let reads = 0; reads < cap; reads++) {
    const res = await json<{ data: { job: EmptyJobJson } }>(fetch(url, { headers: { Authorization: `Bearer ${ADMIN}` } }));
    expect(res.status).toBe(200);
    if (res.body.data.job.status === 'done') return res.body.data.job;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the job at ${url} was not done after ${cap} reads`);
}

/** The files at or below `top`, as the recursive listing has them. */
async function filesAt(top: string): Promise<FileJson[]> {
  const res = await json<{ data: { files: FileJson[] } }>(admin.list({ folder: top, recursive: 'true' }));
  expect(res.status).toBe(200);
  return res.body.data.files;
}

async function deleteFiles(paths: string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 10) {
    const query = paths.slice(i, i + 10).map((path) => `path=${encodeURIComponent(path)}`).join('&');
    expect((await admin.request('DELETE', `/drive/files?${query}`)).status).toBe(200);
  }
}

const keyOf = (file: Pick<FileJson, 'id'>) => `${DRIVE}/${file.id}`;

describe('DELETE /drive/trash?path= past the request budget', () => {
  it('answers 202 with an empty-trash job that purges the subtree’s trash: bytes gone, the rest kept, fsck clean', async () => {
    // Prepare: below /t, 28 files deleted one by one and a folder of 6 deleted as a job (29 items); /t/live
    // stays live; outside it, /keep's two deleted files stay in the trash and /keep/live stays live.
    const single = Array.from({ length: 28 }, (_, i) => `/t/s${i % 4}/f${String(i).padStart(2, '0')}.txt`);
    const folder = Array.from({ length: 6 }, (_, i) => `/t/dir/sub${i % 2}/g${i}.txt`);
    await putFiles(admin, [...single, ...folder, '/t/live.txt', '/keep/a.txt', '/keep/b.txt', '/keep/live.txt']);
    const trashed = (await filesAt('/t')).filter((file) => file.path !== '/t/live.txt');
    const kept = (await filesAt('/keep')).filter((file) => file.path !== '/keep/live.txt');
    const live = [...(await filesAt('/t')), ...(await filesAt('/keep'))].filter((file) => file.path.endsWith('/live.txt'));
    expect(trashed).toHaveLength(34);
    await deleteFiles([...single, '/keep/a.txt', '/keep/b.txt']);
    const deleted = await json<{ data: { job: { url: string } } }>(admin.deleteFolder({ path: '/t/dir', recursive: 'true' }));
    expect(deleted.status).toBe(202);
    await untilDone(deleted.body.data.job.url);
    const bytes = trashed.reduce((sum, file) => sum + file.size, 0);
    expect((await trashPage(admin, { path: '/t' })).body.data.usage).toEqual({ items: 29, files: 34, bytes });

    // Act
    const res = await admin.request('DELETE', '/drive/trash?path=/t');
    const body = (await res.json()) as { data: { job: EmptyJobJson } };

    // Assess: the job, then its end.
    expect(res.status).toBe(202);
    const { job } = body.data;
    expect(job).toMatchObject({ type: 'empty-trash', status: 'running', path: '/t', result: null });
    expect(job.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(res.headers.get('location')).toBe(`${host.url}/drive/jobs/${job.id}`);
    expect(job.url).toBe(res.headers.get('location'));
    const done = await untilDone(job.url);
    expect(done).toMatchObject({ type: 'empty-trash', status: 'done', path: '/t', files_purged: 34, result: { purged: true, path: '/t', items: 29, files: 34, bytes } });
    // Several worker steps (one item or one page of members each), each sent on by the last through the queue.
    const steps = host.output().split('\n').filter((line) => line.includes('advanced a job') && line.includes(job.id));
    expect(steps.length).toBeGreaterThan(1);

    const below = await trashPage(admin, { path: '/t' });
    expect(below.body.data.items).toEqual([]);
    expect(below.body.data.usage).toEqual({ items: 0, files: 0, bytes: 0 });
    expect((await trashPage(admin, { path: '/keep' })).body.data.items.map((item) => item.path).sort()).toEqual(['/keep/a.txt', '/keep/b.txt']);
    const { objectKeys } = await storedState(host.dataDir);
    for (const file of trashed) expect(objectKeys).not.toContain(keyOf(file));
    for (const file of [...kept, ...live]) expect(objectKeys).toContain(keyOf(file));
    expect((await admin.download({ path: '/t/live.txt' })).status).toBe(200);
    await expectFsckClean(host.dataDir);
  });

  it('answers 200 with zero totals when there is nothing below the path, even with no budget', async () => {
    const res = await json<{ data: EmptiedJson }>(admin.request('DELETE', '/drive/trash?path=/nothing/here'));
    expect(res).toMatchObject({ status: 200, body: { data: { purged: true, path: '/nothing/here', items: 0, files: 0, bytes: 0 } } });
  });

  it('answers a retry with the same Idempotency-Key with the same job', async () => {
    await putFiles(admin, ['/idem/a.txt', '/idem/b.txt']);
    await deleteFiles(['/idem/a.txt', '/idem/b.txt']);
    const headers = { 'Idempotency-Key': 'empty-idem-1' };

    const first = await admin.request('DELETE', '/drive/trash?path=/idem', { headers });
    const firstBody = (await first.json()) as { data: { job: EmptyJobJson } };
    const again = await admin.request('DELETE', '/drive/trash?path=/idem', { headers });
    const againBody = (await again.json()) as { data: { job: EmptyJobJson } };

    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(againBody.data.job.id).toBe(firstBody.data.job.id);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect((await untilDone(firstBody.data.job.url)).result).toEqual({ purged: true, path: '/idem', items: 2, files: 2, bytes: 'bytes of /idem/a.txt'.length * 2 });
    expect((await trashPage(admin, { path: '/idem' })).body.data.items).toEqual([]);
  });

  it('is refused to a key that is not admin (403)', async () => {
    const writer = new DriveClient(host.url, WRITER);
    const res = await json<{ error: { code: string } }>(writer.request('DELETE', '/drive/trash?path=/'));
    expect(res).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
  });
});

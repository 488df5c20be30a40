import type { DeleteJob } from '../../client/src/types';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { FINAL_DELETES } from '../support/trash';
import { seedFolders, untilDone } from '../support/seeding';

// Deletes of any size (an extension): a recursive delete answers the spec's 200 when the tree goes within
// the request's budget, else 202 with a job that the worker (fed by the host's embedded SQS) finishes.
// DRIVE_DELETE_BUDGET_MS=0 makes every recursive delete of a non-empty tree a job, and DRIVE_JOB_STEP_MS=0
// makes each worker step do one thing (a page of files, or a folder) and send the job on, so a job crosses a
// step per folder whatever the machine's speed: tens of files in a dozen folders prove what hundreds did.
// A host killed mid-job is in test/chaos/delete-jobs-crash.test.ts.

const ADMIN = 'jobs-admin-f6UrpcrOhwuH2C8YgGgAiPrZeO';
const READER = 'jobs-reader-CPmWEFPSAyKFHbhBD0xtiQ3p6';
const CONFINED = 'jobs-confined-H2WYbhMyZ9SZaRESTDG4FsW';
const STRANGER = 'jobs-stranger-H2WYbhMyZ9SZaRESTDG4FsW';

type JobJson = DeleteJob;

const env = {
  DRIVE_API_KEYS: [`jobs:${ADMIN}:admin`, `jobs:${READER}:read-only`, `jobs:${CONFINED}:read-write:/mine`, `other:${STRANGER}:admin`].join(','),
  DRIVE_RATE_LIMITS: 'off',
  ...FINAL_DELETES,
  DRIVE_DELETE_BUDGET_MS: '0',
  DRIVE_JOB_STEP_MS: '0',
  // Every folder copy a job too: a copy's job has two ends, which a confined key must both reach.
  DRIVE_COPY_BUDGET_MS: '0',
};

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost(env);
  drive = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

describe('DELETE /drive/folders?recursive=true past the request budget', () => {
  it('answers 202 with the job and its Location; the job reports progress, then the spec result, over several worker steps', async () => {
    await seedFolders(drive, '/big', 48, 4);

    const res = await drive.deleteFolder({ path: '/big', recursive: 'true' });
    const body = (await res.json()) as { data: { job: JobJson } };

    expect(res.status).toBe(202);
    const job = body.data.job;
    expect(job).toMatchObject({ type: 'delete-folder', status: 'running', path: '/big', result: null });
    expect(job.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(res.headers.get('location')).toBe(`${host.url}/drive/jobs/${job.id}`);
    expect(job.url).toBe(res.headers.get('location'));

    const done = await untilDone<JobJson>(job.url, drive);
    expect(done.result).toEqual({ deleted: true, path: '/big', files_deleted: 48 });
    expect(done.files_deleted).toBe(48);
    // A step for each of the 12 folders that hold files at least (29 in all today: a page of files or a
    // folder each), each sent on by the last through the queue.
    const steps = host.output().split('\n').filter((line) => line.includes('advanced a job') && line.includes(job.id));
    expect(steps.length).toBeGreaterThanOrEqual(12);

    const { objectKeys, nodeItems } = await storedState(host.dataDir);
    expect(objectKeys).toEqual([]);
    expect(nodeItems.filter((item) => item.path?.S?.startsWith('/big'))).toEqual([]);
  });

  it('takes the folder away from readers and writers from the moment it answers', async () => {
    await seedFolders(drive, '/gone', 30, 3);
    const res = await json<{ data: { job: JobJson } }>(drive.deleteFolder({ path: '/gone', recursive: 'true' }));
    expect(res.status).toBe(202);

    // Whatever the worker has done so far, the folder is not there for anyone.
    expect((await drive.list({ folder: '/gone' })).status).toBe(404);
    expect((await drive.list({ folder: '/gone/d0' })).status).toBe(404);
    const root = await json<{ data: { folders: { path: string }[] } }>(drive.list({ folder: '/' }));
    expect(root.body.data.folders.map((folder) => folder.path)).not.toContain('/gone');
    expect((await drive.upload([{ data: 'late', filename: 'late.txt' }], [{ folder: '/gone/d1' }])).status).toBe(409);
    expect((await drive.createFolder({ path: '/gone/d2/new' })).status).toBe(409);
    expect((await drive.download({ path: '/gone/d0/e0/f0.txt' })).status).toBe(404);
    // A folder below it is gone too, for deletes as for readers.
    expect((await drive.deleteFolder({ path: '/gone/d1', recursive: 'true' })).status).toBe(404);
    expect((await drive.deleteFolder({ path: '/gone/d2/e0' })).status).toBe(404);

    const done = await untilDone<JobJson>(res.body.data.job.url, drive);
    expect(done.result).toEqual({ deleted: true, path: '/gone', files_deleted: 30 });
    // Once it is gone, the path is free again.
    expect((await drive.createFolder({ path: '/gone' })).status).toBe(200);
  });

  it('still deletes an empty tree, and a folder without recursive, in the request, as the spec says', async () => {
    expect((await drive.createFolder({ path: '/hollow/a/b' })).status).toBe(200);
    const hollow = await json<{ data: unknown }>(drive.deleteFolder({ path: '/hollow', recursive: 'true' }));
    // No file to delete: folders only, each removed in the request's first pages (the budget is checked between pages).
    expect([200, 202]).toContain(hollow.status);
    expect((await drive.createFolder({ path: '/empty' })).status).toBe(200);
    const empty = await json<{ data: unknown }>(drive.deleteFolder({ path: '/empty' }));
    expect(empty).toMatchObject({ status: 200, body: { data: { deleted: true, path: '/empty', files_deleted: 0 } } });
  });

  it('shows a job only to keys that may see its folder: another drive, a read-only key, a key confined elsewhere', async () => {
    await seedFolders(drive, '/secret', 12, 2);
    const res = await json<{ data: { job: JobJson } }>(drive.deleteFolder({ path: '/secret', recursive: 'true' }));
    expect(res.status).toBe(202);
    const url = res.body.data.job.url;
    const as = (key: string) => json<ErrorJson>(fetch(url, { headers: { Authorization: `Bearer ${key}` } }));

    const stranger = await as(STRANGER);
    expect(stranger).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(stranger.body.error.message).not.toContain('/secret');
    expect((await as(READER)).status).toBe(403);
    expect((await as(CONFINED)).status).toBe(404);
    await untilDone<JobJson>(url, drive);
    expect(await json<ErrorJson>(fetch(`${host.url}/drive/jobs/not-a-job`, { headers: { Authorization: `Bearer ${ADMIN}` } }))).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    expect((await fetch(url)).status).toBe(401);
  });

  it('shows a copy or move job to a confined key only when both its ends lie within the key\'s folder', async () => {
    await seedFolders(drive, '/mine/src', 20, 1); // more than a copy's first few, which go within the request
    const as = (key: string, url: string) => json<ErrorJson>(fetch(url, { headers: { Authorization: `Bearer ${key}` } }));
    const copy = (to: string) =>
      json<{ data: { job: JobJson & { url: string } } }>(
        drive.request('POST', '/drive/copy', { body: JSON.stringify({ from: '/mine/src', to }), headers: { 'Content-Type': 'application/json' } }),
      );

    const out = await copy('/elsewhere/src'); // from the key's folder to outside it
    expect(out.status).toBe(202);
    const inside = await copy('/mine/copy'); // both ends inside
    expect(inside.status).toBe(202);

    const unseen = await as(CONFINED, out.body.data.job.url);
    expect(unseen).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: `no job ${out.body.data.job.id}` } } });
    expect(JSON.stringify(unseen.body)).not.toContain('/elsewhere');
    expect((await as(CONFINED, inside.body.data.job.url)).status).toBe(200);
    await untilDone<JobJson>(out.body.data.job.url, drive);
    await untilDone<JobJson>(inside.body.data.job.url, drive);
    expect((await as(CONFINED, out.body.data.job.url)).status).toBe(404);
  });

  it('answers the spec 200 within the budget when there is one (a test host has 10 minutes: test/setup-env.ts)', async () => {
    const quick = await startHost({ DRIVE_API_KEYS: `quick:${ADMIN}`, DRIVE_RATE_LIMITS: 'off', ...FINAL_DELETES });
    try {
      const client = new DriveClient(quick.url, ADMIN);
      await seedFolders(client, '/small', 20, 2);
      const res = await json<{ data: unknown }>(client.deleteFolder({ path: '/small', recursive: 'true' }));
      expect(res).toMatchObject({ status: 200, body: { data: { deleted: true, path: '/small', files_deleted: 20 } } });
    } finally {
      await stopHost(quick);
    }
  });
});

import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeleteJob } from '../../client/src/types';
import { DriveClient, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { removeDataDir, startHost, storedState } from '../support/local-host';
import { expectNoOrphans, seedFolders, untilDone } from '../support/seeding';
import { FINAL_DELETES } from '../support/trash';

// Recursive delete jobs across a host killed with SIGKILL (moved here from test/integration/delete-jobs.test.ts,
// which keeps the jobs' answers, visibility and steps): the job goes on after a restart, a dead step's claim
// goes with it, and a job whose request died before it reached the queue is sent again by the sweep.

const ADMIN = 'jobs-admin-f6UrpcrOhwuH2C8YgGgAiPrZeO';

type JobJson = DeleteJob;

// Final deletes: the tests find the deleted tree's bytes gone from the bucket (with the trash on, the job
// keeps them for the trash, and test/integration/trash.test.ts checks that).
const env = {
  ...FINAL_DELETES,
  DRIVE_API_KEYS: `jobs:${ADMIN}:admin`,
  DRIVE_RATE_LIMITS: 'off',
  DRIVE_DELETE_BUDGET_MS: '0',
  DRIVE_JOB_STEP_MS: '30',
};

describe('a delete job across a crash', () => {
  it('goes on after the host is killed mid-job and started again, and leaves fsck clean', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-jobs-'));
    try {
      let running = await startHost({ ...env, DRIVE_JOB_STEP_MS: '10' }, dataDir);
      const client = new DriveClient(running.url, ADMIN);
      await seedFolders(client, '/doomed', 300, 6);
      const res = await json<{ data: { job: JobJson } }>(client.deleteFolder({ path: '/doomed', recursive: 'true' }));
      expect(res.status).toBe(202);
      // Killed as soon as the worker has taken a step: the job's message is still in the queue's folder.
      for (let i = 0; i < 200 && !running.output().includes('advanced a job'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await running.stop('SIGKILL')).toBeNull();

      running = await startHost(env, dataDir);
      try {
        const url = res.body.data.job.url.replace(/^http:\/\/127\.0\.0\.1:\d+/, running.url);
        const done = await untilDone<JobJson>(url, new DriveClient(running.url, ADMIN));
        // A step killed between deleting files and counting them leaves those uncounted (docs/api.md): the
        // count may fall short after a crash, never over; what is guaranteed is that all went.
        expect(done.result).toEqual({ deleted: true, path: '/doomed', files_deleted: expect.any(Number) });
        expect((done.result as { files_deleted: number }).files_deleted).toBeLessThanOrEqual(300);
        expect((await new DriveClient(running.url, ADMIN).list({ folder: '/doomed' })).status).toBe(404);
      } finally {
        await running.stop();
      }
      await expectNoOrphans(dataDir);
    } finally {
      await removeDataDir(dataDir);
    }
  });

  it('goes on at once after a host killed in the middle of a long step starts again: the dead step\'s claim goes with it', async () => {
    const long = { ...env, DRIVE_JOB_STEP_MS: '600000' };
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-jobs-'));
    try {
      let running = await startHost(long, dataDir);
      const client = new DriveClient(running.url, ADMIN);
      await seedFolders(client, '/long', 2000, 2);
      const res = await json<{ data: { job: JobJson } }>(client.deleteFolder({ path: '/long', recursive: 'true' }));
      expect(res.status).toBe(202);
      // Killed once the step has deleted a page, while it still holds the job (its claim would last 750 s).
      let job = res.body.data.job;
      for (let i = 0; i < 500 && job.files_deleted === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        job = (await json<{ data: { job: JobJson } }>(client.request('GET', `/drive/jobs/${job.id}`))).body.data.job;
      }
      expect({ status: job.status, started: job.files_deleted > 0 }).toEqual({ status: 'running', started: true });
      expect(await running.stop('SIGKILL')).toBeNull();

      running = await startHost(long, dataDir);
      try {
        const done = await untilDone<JobJson>(res.body.data.job.url.replace(/^http:\/\/127\.0\.0\.1:\d+/, running.url), new DriveClient(running.url, ADMIN));
        expect(done.status).toBe('done');
      } finally {
        await running.stop();
      }
      expect(await runFsck(dataDir)).toMatchObject({ code: 0 });
    } finally {
      await removeDataDir(dataDir);
    }
  });

  it('is sent again by the sweep when the request died before handing it to the queue', async () => {
    // The request's budget outlasts the kill: it dies deleting, with its job noted and no message sent.
    const slow = { ...env, DRIVE_DELETE_BUDGET_MS: '600000' };
    let running = await startHost(slow);
    const dataDir = running.dataDir;
    try {
      const client = new DriveClient(running.url, ADMIN);
      await seedFolders(client, '/cut', 400, 8);
      const pending = client.deleteFolder({ path: '/cut', recursive: 'true' }).catch(() => undefined);
      for (let i = 0; i < 500 && !/DELETE|deleted/.test(await storedDeleteProgress(dataDir)); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await running.stop('SIGKILL')).toBeNull();
      await pending;

      // The sweep sends every running job that has not advanced for DRIVE_JOB_STALL_MS.
      running = await startHost({ ...env, DRIVE_JOB_STALL_MS: '0', DRIVE_LOCAL_SWEEP_SECONDS: '0.2' }, dataDir);
      for (let i = 0; i < 600; i++) {
        const { nodeItems, objectKeys } = await storedState(dataDir);
        if (objectKeys.length === 0 && !nodeItems.some((item) => item.path?.S?.startsWith('/cut'))) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const { nodeItems, objectKeys } = await storedState(dataDir);
      expect(objectKeys).toEqual([]);
      expect(nodeItems.filter((item) => item.path?.S?.startsWith('/cut'))).toEqual([]);
      expect(running.output()).toContain('sent stalled delete jobs to the worker again');
      await running.stop();
      const fsck = await runFsck(dataDir);
      expect(fsck).toMatchObject({ code: 0 });
    } finally {
      await running.stop();
      await removeDataDir(dataDir);
    }
  });
});

/** A marker that the delete has started: the folder's mark, read from the stored records. */
async function storedDeleteProgress(dataDir: string): Promise<string> {
  try {
    const { nodeItems } = await storedState(dataDir);
    return nodeItems.some((item) => item.path?.S === '/cut' && item.deleting?.S === 'recursive') ? 'deleted' : '';
  } catch {
    return '';
  }
}

import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DriveClient, type ErrorJson, type FileEntryJson, type FolderEntryJson, json } from '../support/api-client';
import { removeDataDir, startHost } from '../support/local-host';
import { expectFsckClean, expectNoOrphans, putFiles, textAt, treeOf, untilDone } from '../support/seeding';

// Folder moves and copies as jobs across a host killed with SIGKILL after the worker's first step, then
// started again (moved here from test/integration/move.test.ts and copy.test.ts, which keep the jobs
// themselves): every file at its new path, its bytes whole, fsck clean.

const ADMIN = 'move-admin-f6UrpcrOhwuH2C8YgGgAiPrZeO';
const KEYS = `m:${ADMIN}:admin`;

interface Job {
  id: string;
  type: string;
  status: 'running' | 'done';
  url: string;
  result: FolderEntryJson | null;
}

function move(client: DriveClient, body: unknown) {
  return json<{ data: FileEntryJson & FolderEntryJson & { job: Job } } & ErrorJson>(
    client.request('POST', '/drive/move', { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  );
}

function copy(client: DriveClient, body: unknown) {
  return json<{ data: FileEntryJson & { job: Job } } & ErrorJson>(client.request('POST', '/drive/copy', { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
}

describe('a folder move past the request budget', () => {
  const env = { DRIVE_API_KEYS: KEYS, DRIVE_RATE_LIMITS: 'off', DRIVE_MOVE_BUDGET_MS: '0', DRIVE_JOB_STEP_MS: '100' };
  const paths = Array.from({ length: 240 }, (_, i) => `/big/d${i % 4}/e${i % 3}/f${i}.txt`);

  it('goes on after the host is killed mid-move and started again: every file at its new path, fsck clean', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-move-'));
    try {
      let running = await startHost({ ...env, DRIVE_JOB_STEP_MS: '10' }, dataDir);
      let client = new DriveClient(running.url, ADMIN);
      await putFiles(client, paths);
      const res = await move(client, { from: '/big', to: '/moved/big' });
      expect(res.status).toBe(202);
      for (let i = 0; i < 500 && !running.output().includes('advanced a job'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await running.stop('SIGKILL')).toBeNull();

      running = await startHost({ ...env, DRIVE_JOB_STEP_MS: '200' }, dataDir);
      try {
        client = new DriveClient(running.url, ADMIN);
        const done = await untilDone<Job>(res.body.data.job.url.replace(/^http:\/\/127\.0\.0\.1:\d+/, running.url), client);
        expect(done).toMatchObject({ status: 'done', result: { path: '/moved/big' } });
        const moved = await treeOf(client, '/moved/big');
        expect((moved as string[]).filter((path) => !path.endsWith('/'))).toEqual(paths.map((path) => `/moved${path}`).sort());
        expect(await treeOf(client, '/big')).toBe(404);
        for (const path of [paths[0], paths[239]]) expect(await textAt(client, `/moved${path}`)).toBe(`bytes of ${path}`);
      } finally {
        await running.stop();
      }
      await expectFsckClean(dataDir);
    } finally {
      await removeDataDir(dataDir);
    }
  });
});

describe('POST /drive/copy of a folder', () => {
  it('a copy job goes on after the host is killed mid-copy and started again: every file copied, fsck clean', async () => {
    const env = { DRIVE_API_KEYS: KEYS, DRIVE_RATE_LIMITS: 'off', DRIVE_COPY_BUDGET_MS: '0', DRIVE_JOB_STEP_MS: '10' };
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-copy-'));
    const paths = Array.from({ length: 450 }, (_, i) => `/src/d${i % 3}/f${i}.txt`);
    try {
      let running = await startHost(env, dataDir);
      let client = new DriveClient(running.url, ADMIN);
      await putFiles(client, paths);
      const res = await copy(client, { from: '/src', to: '/dst' });
      expect(res.status).toBe(202);
      expect(res.body.data.job).toMatchObject({ type: 'copy-folder', status: 'running' });
      for (let i = 0; i < 500 && !running.output().includes('advanced a job'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await running.stop('SIGKILL')).toBeNull();

      running = await startHost(env, dataDir);
      try {
        client = new DriveClient(running.url, ADMIN);
        const done = await untilDone<Job>(res.body.data.job.url.replace(/^http:\/\/127\.0\.0\.1:\d+/, running.url), client);
        expect(done).toMatchObject({ status: 'done', result: { path: '/dst' } });
        const copied = (await treeOf(client, '/dst')) as string[];
        expect(copied.filter((path) => !path.endsWith('/'))).toEqual(paths.map((path) => path.replace('/src', '/dst')).sort());
        expect(await (await client.download({ path: '/dst/d2/f449.txt' })).text()).toBe('bytes of /src/d2/f449.txt');
      } finally {
        await running.stop();
      }
      // The sweep has not run: bytes a killed step copied and never recorded are in flight, not orphaned.
      await expectNoOrphans(dataDir);
    } finally {
      await removeDataDir(dataDir);
    }
  });
});

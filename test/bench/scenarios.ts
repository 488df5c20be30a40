import { randomBytes } from 'node:crypto';
import type { BenchEnvironment } from './environment';
import { DRIVE, FLOOR_DRIVE } from './environment';

/** One line of the benchmark: the same job done through Drive's API and by the floor. */
export interface Scenario {
  /** What `npm run bench -- --only=<id>,…` names it by. */
  id: string;
  name: string;
  /** The largest Drive / floor ratio the issue allows at concurrency 16, where it sets one. */
  target?: number;
  /**
   * Issue 24's target for the whole system's CPU per operation at concurrency 16 (Drive's client, host and
   * storage over the floor's client and storage), where it sets one: steadier than time on a shared machine.
   */
  cpuTarget?: number;
  budget: Record<1 | 16, { maxOps: number; seconds: number; warmup: number }>;
  /** Makes what `ops` runs of each side at this concurrency need (run before measuring). */
  prepare?(env: BenchEnvironment, concurrency: number, ops: number): Promise<void>;
  drive(env: BenchEnvironment, i: number, concurrency: number): Promise<void>;
  floor(env: BenchEnvironment, i: number, concurrency: number): Promise<void>;
}

const KiB4 = randomBytes(4 * 1024);
const MiB1 = randomBytes(1024 * 1024);
const quick = { maxOps: 2000, seconds: 3, warmup: 10 };

/** Fails the run on anything but 200: a benchmark of errors measures nothing. */
export async function expectOk(response: Promise<{ status: number; text?: string }>): Promise<void> {
  const res = await response;
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
}

/** Datasets every scenario reads, in both drives. */
export async function seedShared(env: BenchEnvironment): Promise<void> {
  await expectOk(env.api.createFolder('/up'));
  await env.floor.createFolders(FLOOR_DRIVE, ['/up']);
  await expectOk(env.api.upload([{ data: KiB4, filename: '4k.bin' }, { data: MiB1, filename: '1m.bin' }], [{ folder: '/dl' }, { folder: '/dl' }]));
  await env.floor.upload(FLOOR_DRIVE, '/dl', [{ name: '4k.bin', data: KiB4 }, { name: '1m.bin', data: MiB1 }]);
  for (const drive of [DRIVE, FLOOR_DRIVE]) {
    await env.seeder.flat(drive, '/list400', 400);
    await env.seeder.flat(drive, '/list1000', 1000);
    await env.seeder.tree(drive, '/tree10k', 1000, 10);
  }
}

/**
 * Each recursive delete gets a drive of its own: the emulated S3 lists an object's folder on disk for every
 * object it deletes, so one folder of many objects would make deletes quadratic, which real S3 is not.
 */
const deleteDrive = (side: string, concurrency: number, i: number) => `${side}-del-${concurrency}-${i}`;

export const SCENARIOS: Scenario[] = [
  {
    id: 'upload-4kib',
    name: 'upload 4 KiB',
    target: 2.0,
    cpuTarget: 2.0,
    budget: { 1: quick, 16: quick },
    drive: (env, i, c) => expectOk(env.api.upload([{ data: KiB4, filename: `4k-${c}-${i}.bin` }], [{ folder: '/up' }])),
    floor: (env, i, c) => env.floor.upload(FLOOR_DRIVE, '/up', [{ name: `4k-${c}-${i}.bin`, data: KiB4 }]),
  },
  {
    id: 'upload-1mib',
    name: 'upload 1 MiB',
    target: 1.5,
    cpuTarget: 1.5,
    budget: { 1: { maxOps: 200, seconds: 3, warmup: 3 }, 16: { maxOps: 400, seconds: 4, warmup: 3 } },
    drive: (env, i, c) => expectOk(env.api.upload([{ data: MiB1, filename: `1m-${c}-${i}.bin` }], [{ folder: '/up' }])),
    floor: (env, i, c) => env.floor.upload(FLOOR_DRIVE, '/up', [{ name: `1m-${c}-${i}.bin`, data: MiB1 }]),
  },
  {
    id: 'upload-20x4kib',
    name: 'upload 20 × 4 KiB',
    target: 2.0,
    budget: { 1: quick, 16: quick },
    drive: async (env, i, c) => {
      const files = Array.from({ length: 20 }, (_, k) => ({ data: KiB4, filename: `b-${c}-${i}-${k}.bin` }));
      await expectOk(env.api.upload(files, files.map(() => ({ folder: '/up' }))));
    },
    floor: (env, i, c) => env.floor.upload(FLOOR_DRIVE, '/up', Array.from({ length: 20 }, (_, k) => ({ name: `b-${c}-${i}-${k}.bin`, data: KiB4 }))),
  },
  {
    id: 'download-4kib',
    name: 'download 4 KiB',
    target: 2.0,
    cpuTarget: 1.5,
    budget: { 1: quick, 16: quick },
    drive: (env) => expectOk(env.api.get('/drive/download', { path: '/dl/4k.bin' })),
    floor: async (env) => void (await env.floor.download(FLOOR_DRIVE, '/dl/4k.bin')),
  },
  {
    id: 'download-1mib',
    name: 'download 1 MiB',
    target: 1.5,
    cpuTarget: 1.5,
    budget: { 1: quick, 16: quick },
    drive: (env) => expectOk(env.api.get('/drive/download', { path: '/dl/1m.bin' })),
    floor: async (env) => void (await env.floor.download(FLOOR_DRIVE, '/dl/1m.bin')),
  },
  {
    id: 'list-400',
    name: 'list a folder of 400 files',
    target: 1.5,
    cpuTarget: 1.5,
    budget: { 1: quick, 16: quick },
    drive: (env) => expectOk(env.api.get('/drive/list', { folder: '/list400' })),
    floor: async (env) => void (await env.floor.list(FLOOR_DRIVE, '/list400')),
  },
  {
    id: 'list-1000',
    name: 'list a folder of 1,000 files',
    budget: { 1: { maxOps: 200, seconds: 4, warmup: 2 }, 16: { maxOps: 400, seconds: 5, warmup: 2 } },
    drive: (env) => expectOk(env.api.get('/drive/list', { folder: '/list1000' })),
    floor: async (env) => void (await env.floor.list(FLOOR_DRIVE, '/list1000')),
  },
  {
    id: 'list-recursive-10k',
    name: 'recursive list, 10,000 files in 1,000 folders',
    budget: { 1: { maxOps: 10, seconds: 6, warmup: 1 }, 16: { maxOps: 16, seconds: 10, warmup: 0 } },
    drive: (env) => expectOk(env.api.get('/drive/list', { folder: '/tree10k', recursive: 'true' })),
    floor: async (env) => void (await env.floor.listRecursive(FLOOR_DRIVE, '/tree10k')),
  },
  {
    id: 'create-folder-5',
    name: 'create a 5-deep folder',
    budget: { 1: quick, 16: quick },
    drive: (env, i, c) => expectOk(env.api.createFolder(`/mk-${c}-${i}/a/b/c/d`)),
    floor: (env, i, c) => env.floor.createFolders(FLOOR_DRIVE, ['', '/a', '/a/b', '/a/b/c', '/a/b/c/d'].map((rest) => `/mk-${c}-${i}${rest}`)),
  },
  {
    id: 'delete-recursive-1000',
    name: 'recursive delete of 1,000 files',
    budget: { 1: { maxOps: 3, seconds: 60, warmup: 0 }, 16: { maxOps: 16, seconds: 60, warmup: 0 } },
    // 1,000 files of 16 bytes in 10 folders per run, made fresh for each run of each side.
    prepare: async (env, c, ops) => {
      for (let i = 0; i < ops; i++) {
        await env.seeder.tree(deleteDrive('drive', c, i), '/tree', 10, 100, 16);
        await env.seeder.tree(deleteDrive('floor', c, i), '/tree', 10, 100, 16);
        await env.clientFor(deleteDrive('drive', c, i));
      }
    },
    // A tree that does not go within the request's 10 s answers 202 with a job: timed until the job is done, as a client waits.
    drive: async (env, i, c) => {
      const client = await env.clientFor(deleteDrive('drive', c, i));
      const res = await client.deleteFolder('/tree');
      if (res.status === 200) return;
      if (res.status !== 202) throw new Error(`${res.status} ${res.text}`);
      const { job } = (JSON.parse(res.text ?? '{}') as { data: { job: { id: string } } }).data;
      while (!(await client.jobDone(job.id))) await new Promise((resolve) => setTimeout(resolve, 100));
    },
    floor: (env, i, c) => env.floor.deleteTree(deleteDrive('floor', c, i), '/tree'),
  },
];

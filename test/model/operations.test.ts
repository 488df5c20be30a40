import { Readable } from 'node:stream';
import { MAX_BACKGROUND_JOBS, admitJob } from '../../functions/core/background-jobs';
import { acceptCopy } from '../../functions/core/copy';
import { acceptDelete } from '../../functions/core/delete-folder';
import { DriveError } from '../../functions/core/errors';
import { ensureFolders, recheckFolders, removeUnused } from '../../functions/core/folders';
import { LiveFolders } from '../../functions/core/live-folders';
import { advanceJob, resumeStalledJobs } from '../../functions/core/jobs';
import { JOURNAL_SWEEP_AFTER_MS, sweepJournal } from '../../functions/core/journal';
import { acceptMove } from '../../functions/core/move';
import { parentOf } from '../../functions/core/paths';
import type { FileNode, FolderNode, Job } from '../../functions/core/ports';
import { folderState, jobState } from '../../functions/core/protocol/states';
import { uploadFiles } from '../../functions/core/upload';
import { reachable } from '../../functions/core/visibility';
import { type MemoryPorts, gatePorts, memoryPorts } from './memory-ports';

// The operations on the in-memory ports, one request at a time: what each promises when nothing races it.
// The races are test/model/interleavings.test.ts's.

const DRIVE = 'd';
const BIG = 1e12;
let ports: MemoryPorts;

beforeEach(() => {
  ports = memoryPorts();
});

/** Uploads `paths` (each file's bytes are its path) and returns the records. */
async function upload(...paths: string[]): Promise<FileNode[]> {
  return uploadFiles(ports, DRIVE, paths.map((path) => ({ filename: 'x', data: Buffer.from(path) })), paths.map((path) => ({ path })));
}

async function bytesOf(file: FileNode): Promise<string | undefined> {
  const opened = await ports.objects.open(file.objectKey);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

const paths = () => ports.nodes.all(DRIVE).map((node) => node.path).sort();
const folder = async (path: string) => (await ports.nodes.get(DRIVE, path)) as FolderNode;

/** Steps every queued job until the queue is empty. */
async function drainJobs(budgetMs = 0): Promise<void> {
  for (let message = ports.queue.take(), steps = 0; message && steps < 100; message = ports.queue.take(), steps++) await advanceJob(ports, message.id, message.drive, budgetMs);
}

const onlyJob = (): Job => [...ports.jobs.jobs.values()][0];

describe('folders', () => {
  it('makes missing folders top-down and reports each, a file in the way a 409', async () => {
    const { created, folders } = await ensureFolders(ports.nodes, DRIVE, ['/a/b/c'], 'now');
    expect(created.map((f) => f.path)).toEqual(['/a', '/a/b', '/a/b/c']);
    expect([...folders.keys()].sort()).toEqual(['/a', '/a/b', '/a/b/c']);
    await upload('/a/f');
    await expect(ensureFolders(ports.nodes, DRIVE, ['/a/f/g'], 'now')).rejects.toThrow('/a/f is a file, so nothing can be stored below it');
  });

  it('reads again which folders are missing, deleting (and which of those recursively) or moving', async () => {
    await ensureFolders(ports.nodes, DRIVE, ['/a/b', '/d/e', '/k/l'], 'now');
    await ports.nodes.markDeleting(DRIVE, await folder('/a'), 'recursive');
    await ports.nodes.markDeleting(DRIVE, await folder('/k'), 'empty');
    await ports.nodes.markMoving(DRIVE, await folder('/d/e'), 'job');
    // An `empty` mark refuses writers as a recursive one does, but takes nothing below it.
    expect(await recheckFolders(ports.nodes, DRIVE, ['/a/b', '/d/e', '/k/l', '/x'])).toEqual({ missing: ['/x'], deleting: ['/a', '/k'], recursive: ['/a'], moving: ['/d/e'] });
  });

  it('removes the folders a failed request made, but puts back one that a writer stored into', async () => {
    const { created } = await ensureFolders(ports.nodes, DRIVE, ['/a/b/c'], 'now');
    await ports.nodes.putFile(DRIVE, { kind: 'file', id: 'f', path: '/a/b/f', size: 1, contentType: 'text/plain', createdAt: 'now', objectKey: 'k', etag: 'e' });
    await removeUnused(ports, DRIVE, created);
    expect(paths()).toEqual(['/a', '/a/b', '/a/b/f']);
  });
});

describe('recursive and empty deletes', () => {
  it('deletes a tree within its budget: records, bytes and folders, and the job ends', async () => {
    const files = await upload('/a/f', '/a/b/g', '/a/b/c/h', '/z');
    const outcome = await acceptDelete(ports, DRIVE, '/a', true, BIG);
    expect(outcome).toEqual({ done: true, filesDeleted: 3 });
    expect(paths()).toEqual(['/z']);
    expect(await Promise.all(files.map(bytesOf))).toEqual([undefined, undefined, undefined, '/z']);
    expect(jobState(onlyJob())).toEqual({ state: 'done', ended: 'deleted' });
    expect(await ports.jobs.inBackground(DRIVE)).toEqual([]);
  });

  it('hands a tree to the worker with no budget: hidden at once, gone once the job ends', async () => {
    await upload('/a/f', '/a/b/g');
    const outcome = await acceptDelete(ports, DRIVE, '/a', true, 0);
    expect(outcome.done).toBe(false);
    expect(folderState(await folder('/a'))).toEqual({ state: 'deleting', mode: 'recursive' });
    expect(await reachable(ports.nodes, DRIVE, '/a/b/g')).toBe(false);
    await drainJobs();
    expect(paths()).toEqual([]);
    expect(onlyJob()).toMatchObject({ status: 'done', files: 2 });
    expect(await ports.jobs.inBackground(DRIVE)).toEqual([]);
  });

  it('refuses an empty delete of a folder with children, and leaves it unmarked', async () => {
    await upload('/a/f');
    await expect(acceptDelete(ports, DRIVE, '/a', false, BIG)).rejects.toThrow('folder /a is not empty; pass recursive=true to delete it and everything in it');
    expect(folderState(await folder('/a'))).toEqual({ state: 'live' });
  });

  it('waits for a move that holds the folder: 409, and nothing marked', async () => {
    await upload('/a/f');
    await ports.nodes.markMoving(DRIVE, await folder('/a'), 'move-job');
    const refused = acceptDelete(ports, DRIVE, '/a', true, BIG);
    await expect(refused).rejects.toThrow('folder /a is being moved; it takes no new files or folders until the move is done');
    expect(folderState(await folder('/a'))).toEqual({ state: 'moving', job: 'move-job' });
    expect(onlyJob().status).toBe('done');
  });
});

describe('moves', () => {
  it('moves a file in one write: its id and bytes kept, its pending note dropped', async () => {
    const [file] = await upload('/a/f');
    const outcome = await acceptMove(ports, DRIVE, '/a/f', '/b/g', {}, BIG);
    expect(outcome.done && outcome.node).toMatchObject({ id: file.id, path: '/b/g', objectKey: file.objectKey });
    const moved = (await ports.nodes.get(DRIVE, '/b/g')) as FileNode;
    expect(moved.pending).toBeUndefined();
    expect(moved.movedAt).toBeDefined();
    expect(paths()).toEqual(['/a', '/b', '/b/g']);
  });

  it('keeps a record whose upload has not closed its journal entry where it is', async () => {
    const [file] = await upload('/a/f');
    // As an upload that died before closing its entry leaves it.
    const entry = ports.journal.add(DRIVE, [file], new Date());
    await ports.nodes.putFile(DRIVE, { ...file, pending: entry });
    await expect(acceptMove(ports, DRIVE, '/a/f', '/b', {}, BIG)).rejects.toThrow('/a/f is still being stored by the upload that wrote it; try again in a minute');
  });

  it('moves a folder within its budget: every file at its new path with its id, nothing left at the source, no mark', async () => {
    const files = await upload('/a/f', '/a/b/g', '/a/b/c/h');
    const outcome = await acceptMove(ports, DRIVE, '/a', '/m/n', {}, BIG);
    expect(outcome.done).toBe(true);
    expect(paths()).toEqual(['/m', '/m/n', '/m/n/b', '/m/n/b/c', '/m/n/b/c/h', '/m/n/b/g', '/m/n/f']);
    const now = ports.nodes.all(DRIVE).filter((node): node is FileNode => node.kind === 'file');
    expect(now.map((file) => file.id).sort()).toEqual(files.map((file) => file.id).sort());
    expect(ports.nodes.all(DRIVE).every((node) => node.kind === 'file' || folderState(node).state === 'live')).toBe(true);
    expect(onlyJob()).toMatchObject({ status: 'done', ended: 'moved', files: 3 });
  });

  it('hands a folder move to the worker with no budget, which ends it', async () => {
    await upload('/a/f', '/a/b/g');
    const outcome = await acceptMove(ports, DRIVE, '/a', '/m', {}, 0);
    expect(outcome.done).toBe(false);
    expect(folderState(await folder('/m')).state).toBe('moving');
    await drainJobs();
    expect(paths()).toEqual(['/m', '/m/b', '/m/b/g', '/m/f']);
    expect(onlyJob()).toMatchObject({ status: 'done', ended: 'moved' });
    expect(await ports.jobs.inBackground(DRIVE)).toEqual([]);
  });

  it('refuses a folder moved into itself, and a destination that is taken', async () => {
    await upload('/a/f', '/b/g');
    await expect(acceptMove(ports, DRIVE, '/a', '/a/x', {}, BIG)).rejects.toThrow('cannot move folder /a into itself (/a/x)');
    await expect(acceptMove(ports, DRIVE, '/a', '/b', {}, BIG)).rejects.toThrow('/b is taken; a folder replaces nothing, so move it to a path where nothing stands');
    expect(ports.jobs.jobs.size).toBe(0);
  });
});

describe('copies', () => {
  it('copies a folder: new ids and objects with the same bytes, the source untouched', async () => {
    const files = await upload('/a/f', '/a/b/g');
    const outcome = await acceptCopy(ports, DRIVE, '/a', '/c', {}, BIG);
    expect(outcome.done).toBe(true);
    expect(paths()).toEqual(['/a', '/a/b', '/a/b/g', '/a/f', '/c', '/c/b', '/c/b/g', '/c/f']);
    const copy = (await ports.nodes.get(DRIVE, '/c/b/g')) as FileNode;
    expect(copy.id).not.toBe(files[1].id);
    expect(await bytesOf(copy)).toBe('/a/b/g');
    expect(ports.journal.entries.size).toBe(0);
    expect(onlyJob()).toMatchObject({ status: 'done', ended: 'copied', files: 2 });
  });

  it('goes on in the worker from its cursor with no budget', async () => {
    // More files than one run of copies (8), so that a request with no budget stops after the first run.
    const names = Array.from({ length: 10 }, (_, i) => `f${i}`);
    await upload(...names.map((name) => `/a/${name}`));
    const outcome = await acceptCopy(ports, DRIVE, '/a', '/c', {}, 0);
    expect(outcome.done).toBe(false);
    expect(onlyJob().cursor).toBe('/a/f7');
    await drainJobs();
    expect(paths().filter((path) => path.startsWith('/c/'))).toEqual(names.map((name) => `/c/${name}`));
    expect(onlyJob()).toMatchObject({ status: 'done', ended: 'copied', files: 10 });
  });
});

describe('jobs', () => {
  it('sends a job another step holds back to the queue, to come back once the claim lapses', async () => {
    await upload('/a/f');
    const outcome = await acceptDelete(ports, DRIVE, '/a', true, 0);
    const job = outcome.done ? undefined : outcome.job;
    ports.queue.take();
    await ports.jobs.claim(DRIVE, job!.id, 60_000);
    const step = await advanceJob(ports, job!.id, DRIVE, 0);
    expect(step?.status).toBe('running');
    expect(ports.queue.messages).toEqual([{ id: job!.id, drive: DRIVE, delaySeconds: 5 }]);
  });

  it('resumes jobs that stopped advancing', async () => {
    await upload('/a/f');
    await acceptDelete(ports, DRIVE, '/a', true, 0);
    ports.queue.take();
    expect(await resumeStalledJobs(ports, new Date(Date.now() + 10 * 60_000))).toBe(1);
    await drainJobs();
    expect(onlyJob().status).toBe('done');
  });

  it(`refuses a job past ${MAX_BACKGROUND_JOBS} running in a drive, and admits one once a place is free`, async () => {
    for (let i = 0; i < MAX_BACKGROUND_JOBS; i++) await upload(`/f${i}/x`);
    for (let i = 0; i < MAX_BACKGROUND_JOBS; i++) await acceptDelete(ports, DRIVE, `/f${i}`, true, 0);
    const refused = admitJob(ports.jobs, { id: 'late', drive: DRIVE });
    await expect(refused).rejects.toBeInstanceOf(DriveError);
    await expect(refused).rejects.toMatchObject({ code: 'rate_limited' });
    await drainJobs();
    await expect(admitJob(ports.jobs, { id: 'late', drive: DRIVE })).resolves.toBeUndefined();
  });
});

describe('the hot path (docs/hot-path-design.md)', () => {
  /** The port calls `work` makes, in rounds: the calls of a round are in flight at once (one round trip). */
  async function rounds(work: (gated: MemoryPorts) => Promise<unknown>): Promise<string[][]> {
    let waiting: { label: string; go: () => void }[] = [];
    const gated = gatePorts(ports, (label) => new Promise<void>((go) => waiting.push({ label, go })));
    let settled = false;
    const done = work(gated).finally(() => (settled = true));
    const seen: string[][] = [];
    while (!settled) {
      // Every call the work can make before a reply has been made once the microtasks have run.
      await new Promise((resolve) => setImmediate(resolve));
      if (waiting.length === 0) continue;
      seen.push(waiting.map((call) => call.label.replace(/\(.*/, '')).sort());
      const round = waiting;
      waiting = [];
      round.forEach((call) => call.go());
    }
    await done;
    return seen;
  }

  it('stores one file into an existing folder in 4 calls, 3 round trips: bytes with the folder read, record, read again', async () => {
    await upload('/a/first');
    const seen = await rounds((gated) => uploadFiles(gated, DRIVE, [{ filename: 'x', data: Buffer.from('x') }], [{ path: '/a/x' }]));
    expect(seen).toEqual([['nodes.getMany', 'objects.put'], ['nodes.putFile'], ['nodes.getMany']]);
    expect(((await ports.nodes.get(DRIVE, '/a/x')) as FileNode).pending).toBeUndefined();
  });

  it('stores one file into a folder found live after a recent write in 3 calls, 3 round trips: bytes, record, read again', async () => {
    const liveFolders = new LiveFolders(60_000);
    await uploadFiles({ ...ports, liveFolders }, DRIVE, [{ filename: 'x', data: Buffer.from('x') }], [{ path: '/a/first' }]);
    expect(liveFolders.has(DRIVE, '/a')).toBe(true);
    const seen = await rounds((gated) => uploadFiles({ ...gated, liveFolders }, DRIVE, [{ filename: 'x', data: Buffer.from('x') }], [{ path: '/a/x' }]));
    expect(seen).toEqual([['objects.put'], ['nodes.putFile'], ['nodes.getMany']]);
    // Into the root, which always stands: no folder to read before or after.
    expect(await rounds((gated) => uploadFiles(gated, DRIVE, [{ filename: 'x', data: Buffer.from('x') }], [{ path: '/top' }]))).toEqual([['objects.put'], ['nodes.putFile']]);
  });

  it('answers a warm upload as the first read would have, with nothing of it left', async () => {
    const liveFolders = new LiveFolders(60_000);
    const [old] = await uploadFiles({ ...ports, liveFolders }, DRIVE, [{ filename: 'x', data: Buffer.from('old') }], [{ path: '/a/f' }]);
    await ensureFolders(ports.nodes, DRIVE, ['/a/sub'], 'now');
    liveFolders.note(DRIVE, ['/a/sub', '/gone']);
    const warm = (path: string, data: string, target: { path: string; ifMatch?: string; ifNoneMatch?: '*' } = { path }, replace?: boolean) =>
      uploadFiles({ ...ports, liveFolders }, DRIVE, [{ filename: 'x', data: Buffer.from(data) }], [target], undefined, replace === undefined ? {} : { replace });
    const objectsBefore = new Set(ports.objects.objects.keys());
    // A folder at the path, a stale if_match, if_none_match over a file, a key that may not replace.
    await expect(warm('/a/sub', 'a')).rejects.toThrow('/a/sub is a folder, so a file cannot be stored there');
    await expect(warm('/a/f', 'b', { path: '/a/f', ifMatch: 'stale' })).rejects.toMatchObject({ code: 'precondition_failed' });
    await expect(warm('/a/f', 'c', { path: '/a/f', ifNoneMatch: '*' })).rejects.toMatchObject({ code: 'precondition_failed' });
    await expect(warm('/a/f', 'd', { path: '/a/f' }, false)).rejects.toThrow('/a/f is taken; this key may not replace what is there');
    // A folder marked by a delete since it was cached: written, read again, withdrawn; the cache forgets it.
    await ports.nodes.markDeleting(DRIVE, await folder('/a'), 'recursive');
    await expect(warm('/a/g', 'e')).rejects.toThrow('folder /a is being deleted');
    expect(liveFolders.has(DRIVE, '/a')).toBe(false);
    expect(await ports.nodes.get(DRIVE, '/a/g')).toBeUndefined();
    expect((await ports.nodes.get(DRIVE, '/a/f'))?.id).toBe(old.id);
    expect(new Set(ports.objects.objects.keys())).toEqual(objectsBefore);
    // A cached folder deleted since: the read after the write finds it missing and makes it.
    const [made] = await warm('/gone/h', 'f');
    expect((await ports.nodes.get(DRIVE, '/gone'))?.kind).toBe('folder');
    expect(await bytesOf(made)).toBe('f');
  });

  // Review of the warm upload: a refused write, which wrote nothing, makes the first read then and answers as it
  // does (before the fix: a folder at the path with a condition answered 412 "a file is there"; a marked folder
  // above with a condition, 412; a file above with a condition, 412; a no-replace key under a mark, "is taken").
  it('answers a refused warm or root upload as the first read does: marks and files above first, then a folder, then the condition', async () => {
    const liveFolders = new LiveFolders(60_000);
    await upload('/a/f', '/a/g');
    await ensureFolders(ports.nodes, DRIVE, ['/docs', '/a/sub'], 'now');
    const send = (path: string, target: { ifMatch?: string; ifNoneMatch?: '*' } = {}, replace?: boolean) => {
      liveFolders.note(DRIVE, [parentOf(path)]);
      return uploadFiles({ ...ports, liveFolders }, DRIVE, [{ filename: 'x', data: Buffer.from('new') }], [{ path, ...target }], undefined, replace === undefined ? {} : { replace });
    };
    const objectsBefore = new Set(ports.objects.objects.keys());
    await expect(send('/docs', { ifNoneMatch: '*' })).rejects.toThrow('/docs is a folder, so a file cannot be stored there');
    await expect(send('/docs', { ifMatch: 'abc' })).rejects.toThrow('/docs is a folder, so a file cannot be stored there');
    await expect(send('/a/sub', { ifNoneMatch: '*' })).rejects.toThrow('/a/sub is a folder, so a file cannot be stored there');
    await expect(send('/a/g/x', { ifMatch: 'abc' })).rejects.toThrow('/a/g is a file, so it cannot be a folder');
    await ports.nodes.markDeleting(DRIVE, await folder('/a'), 'recursive');
    await expect(send('/a/f', { ifNoneMatch: '*' })).rejects.toThrow('folder /a is being deleted');
    await expect(send('/a/f', {}, false)).rejects.toThrow('folder /a is being deleted');
    await expect(send('/a/sub')).rejects.toThrow('folder /a is being deleted');
    expect(new Set(ports.objects.objects.keys())).toEqual(objectsBefore);
  });

  it('names the shallowest mark above a record it wrote, as the first read does', async () => {
    await upload('/a/b/first');
    const liveFolders = new LiveFolders(60_000);
    liveFolders.note(DRIVE, ['/a/b']);
    await ports.nodes.markDeleting(DRIVE, await folder('/a/b'), 'recursive');
    await ports.nodes.markMoving(DRIVE, await folder('/a'), 'job-1');
    await expect(uploadFiles({ ...ports, liveFolders }, DRIVE, [{ filename: 'x', data: Buffer.from('x') }], [{ path: '/a/b/x' }])).rejects.toThrow('folder /a is being moved');
  });

  it('makes missing folders of a one-file upload after its bytes are stored, top-down: one chain of calls', async () => {
    const seen = await rounds((gated) => uploadFiles(gated, DRIVE, [{ filename: 'x', data: Buffer.from('x') }], [{ path: '/n/m/x' }]));
    expect(seen).toEqual([['nodes.getMany', 'objects.put'], ['nodes.createFolder'], ['nodes.createFolder'], ['nodes.putFile'], ['nodes.getMany']]);
  });

  it('makes no folder when the put of a one-file upload fails, and fails the request', async () => {
    const failing = { ...ports, objects: { ...ports.objects, put: () => Promise.reject(new Error('S3 down')), deleteMany: (keys: readonly string[]) => ports.objects.deleteMany(keys) } };
    const calls: string[] = [];
    const gated = gatePorts(failing as unknown as MemoryPorts, async (label) => void calls.push(label.replace(/\(.*/, '')));
    await expect(uploadFiles(gated, DRIVE, [{ filename: 'x', data: Buffer.from('x') }], [{ path: '/n/m/x' }])).rejects.toThrow('S3 down');
    // Not made and removed again: never made.
    expect(calls.filter((call) => call.startsWith('nodes.'))).toEqual(['nodes.getMany']);
    expect(await ports.nodes.get(DRIVE, '/n')).toBeUndefined();
  });

  it('journals an upload of several files: the entry before the bytes, closed at the end', async () => {
    await upload('/a/first');
    const seen = await rounds((gated) => uploadFiles(gated, DRIVE, [{ filename: 'x', data: Buffer.from('x') }, { filename: 'y', data: Buffer.from('y') }], [{ path: '/a/x' }, { path: '/a/y' }]));
    expect(seen).toEqual([['journal.open'], ['objects.put', 'objects.put'], ['nodes.getMany'], ['nodes.putFile', 'nodes.putFile'], ['nodes.getMany'], ['journal.close']]);
  });

  it('moves a file at once after its upload answered', async () => {
    const [file] = await uploadFiles(ports, DRIVE, [{ filename: 'f', data: Buffer.from('x') }], [{ path: '/a/f' }]);
    const outcome = await acceptMove(ports, DRIVE, '/a/f', '/b', {}, BIG);
    expect(outcome.done && outcome.node).toMatchObject({ id: file.id, path: '/b' });
  });

  it('answers a one-file upload as stored when its record was taken before it withdrew, and frees what it replaced', async () => {
    const [old] = await upload('/a/f');
    // The upload's record is written; then, before the upload reads /a again, a move takes the record and an
    // empty-folder delete marks /a: the upload withdraws, and finds its record gone.
    let written = false;
    const gated = gatePorts(ports, async (_label, call) => {
      if (call.method === 'putFile') written = true;
      if (!written || call.method !== 'getMany') return;
      written = false;
      const record = (await ports.nodes.get(DRIVE, '/a/f')) as FileNode;
      expect((await ports.records.move(DRIVE, record, '/g', { sourceParent: await folder('/a'), sweepAfter: new Date() })).moved).toBe(true);
      await ports.nodes.markDeleting(DRIVE, await folder('/a'), 'empty');
    });
    const [file] = await uploadFiles(gated, DRIVE, [{ filename: 'f', data: Buffer.from('new') }], [{ path: '/a/f' }]);
    expect(await ports.nodes.get(DRIVE, '/g')).toMatchObject({ id: file.id });
    expect(await bytesOf(file)).toBe('new');
    expect(ports.objects.objects.has(old.objectKey)).toBe(false);
  });
});

describe('the journal sweep of an entry noted withdrawn (gaps 12 and 13)', () => {
  const later = () => new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS);
  const record = (path: string, id: string, createdAt = '2026-11-20T00:00:00.000Z'): FileNode => ({ kind: 'file', id, path, size: 1, contentType: 'text/plain', createdAt, objectKey: `${DRIVE}/${id}`, etag: id });
  /** Stores `file` (record and bytes) as it was before the withdrawn writer's. */
  const store = async (file: FileNode) => {
    await ports.nodes.putFile(DRIVE, file);
    await ports.objects.put(file.objectKey, Buffer.from(file.id), 'text/plain');
  };
  /** A writer X of `/f` that replaced `earlier`, noted withdrawn: returns its entry and its own record. */
  const withdrawn = async (earlier: FileNode) => {
    const [entry] = await ports.journal.open(DRIVE, [{ path: '/f', objectKey: `${DRIVE}/x` }], new Date());
    const own = { ...record('/f', 'x'), pending: entry };
    await ports.objects.put(own.objectKey, Buffer.from('x'), 'text/plain');
    await ports.journal.withdraw([entry], [earlier]);
    return { entry, own };
  };

  it('puts back what a standing withdrawn record replaced, and frees that record\'s bytes', async () => {
    const earlier = record('/f', 'p');
    await store(earlier);
    const { own } = await withdrawn(earlier);
    // Another writer put X's record back and died before it read X's note.
    await ports.nodes.putFile(DRIVE, own);
    expect(await sweepJournal(ports, later())).toBe(1);
    expect(await ports.nodes.get(DRIVE, '/f')).toMatchObject({ id: 'p', objectKey: earlier.objectKey });
    expect([...ports.objects.objects.keys()]).toEqual([earlier.objectKey]);
  });

  it.each([
    ['a record at the path names them: kept', 'p', true],
    ['another record, old, stands there: deleted', 'q', false],
  ])('judges the bytes its writer left (its record taken): %s', async (_name, standing, kept) => {
    const earlier = record('/f', 'p');
    await store(earlier);
    const { entry } = await withdrawn(earlier);
    if (standing !== 'p') await store(record('/f', standing));
    await ports.journal.leave([entry], [{ path: '/f', objectKey: earlier.objectKey }]);
    expect(await ports.journal.openKeys()).toContain(earlier.objectKey);
    expect(await sweepJournal(ports, later())).toBe(1);
    expect(ports.objects.objects.has(earlier.objectKey)).toBe(kept);
    expect(await ports.nodes.get(DRIVE, '/f')).toMatchObject({ id: standing });
    expect(ports.journal.entries.size).toBe(0);
  });
});

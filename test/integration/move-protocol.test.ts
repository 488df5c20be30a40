import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { DynamoFileRecords } from '../../functions/aws/dynamo-file-records';
import { DynamoJobStore } from '../../functions/aws/dynamo-jobs';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { DynamoUploadJournal } from '../../functions/aws/dynamo-upload-journal';
import { acceptDelete, deleteFolder } from '../../functions/core/delete-folder';
import { deleteFiles } from '../../functions/core/delete-files';
import { createFolder } from '../../functions/core/create-folder';
import { advanceJob } from '../../functions/core/jobs';
import { acceptMove } from '../../functions/core/move';
import { acceptCopy, copyStep } from '../../functions/core/copy';
import { ROOT, parentOf } from '../../functions/core/paths';
import type { DriveNode, FileNode, FileRecords, MultipartStore, NodeStore, ObjectCopier, ObjectStore } from '../../functions/core/ports';
import { commitFiles, uploadFiles } from '../../functions/core/upload';
import { completeUpload, startUpload } from '../../functions/core/large-upload';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';
import { leasedSessions } from '../model/memory-ports';

// Folder moves against the write-ordering protocol (functions/core/ports.ts), forced step by step on the
// embedded DynamoDB: what a move refuses while it runs, a folder move racing a file move, a move job resumed
// after its request died, and a large upload completed during a move.

const dynamo = useEmbeddedDynamo('move-protocol');
let client: DynamoDBClient;
let store: DynamoNodeStore;
let records: DynamoFileRecords;
let journal: DynamoUploadJournal;
let jobs: DynamoJobStore;
let drive: string;
let driveCount = 0;
const queue = { send: async () => undefined };

beforeAll(async () => {
  client = dynamo.client;
  store = new DynamoNodeStore(client, LOCAL_RESOURCES.nodesTable);
  records = new DynamoFileRecords(client, LOCAL_RESOURCES.nodesTable, LOCAL_RESOURCES.uploadsTable, LOCAL_RESOURCES.changesTable);
  journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
  jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
});

beforeEach(() => {
  drive = `moves-${++driveCount}`;
});

function objectStore(): ObjectStore & ObjectCopier & { keys: Set<string> } {
  const keys = new Set<string>();
  return {
    keys,
    put: async (key) => void keys.add(key),
    open: async () => undefined,
    deleteMany: async (gone) => gone.forEach((key) => keys.delete(key)),
    copy: async (from, to) => (keys.has(from) ? (keys.add(to), 'copied') : undefined),
  };
}

function file(path: string, id = `id-${path}`): FileNode {
  return { kind: 'file', id, path, size: 1, contentType: 'text/plain', createdAt: '2026-11-21T00:00:00.000Z', objectKey: `${drive}/${id}`, etag: id };
}

async function upload(objects: ObjectStore, files: FileNode[]): Promise<void> {
  for (const f of files) await objects.put(f.objectKey, Buffer.from('x'), f.contentType);
  await commitFiles({ nodes: store, objects }, drive, files);
}

function hooked<T extends object>(target: T, before: (method: string, args: unknown[]) => Promise<void> | void): T {
  return new Proxy(target, {
    get(t, method: string) {
      const real = Reflect.get(t, method) as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        await before(method, args);
        return real.apply(t, args);
      };
    },
  });
}

/** Every record of the drive, and for each the folder above it (or '/'). */
async function orphans(): Promise<string[]> {
  const { Items = [] } = await client.send(new ScanCommand({ TableName: LOCAL_RESOURCES.nodesTable }));
  const nodes = (await Promise.all(Items.filter((item) => item.pk.S!.startsWith(`${drive}#`)).map((item) => store.get(drive, item.path.S!)))).filter((n): n is DriveNode => n !== undefined);
  const out: string[] = [];
  for (const node of nodes) {
    const parent = parentOf(node.path);
    if (parent !== ROOT && (await store.get(drive, parent))?.kind !== 'folder') out.push(node.path);
  }
  return out.sort();
}

describe('folder moves and the protocol', () => {
  it('refuses writers, deletes and moves at both ends while a folder moves, and takes them again once it is done', async () => {
    const objects = objectStore();
    await upload(objects, [file('/busy/a.txt'), file('/busy/sub/b.txt'), file('/other.txt')]);
    const sent: string[] = [];
    const holding = { send: async (job: { id: string }) => void sent.push(job.id) };
    // A budget of 0: the request marks both ends, answers with the job, and the job waits in the queue.
    const started = await acceptMove({ nodes: store, records, objects, journal, jobs, queue: holding }, drive, '/busy', '/elsewhere', {}, 0);
    expect(started.done).toBe(false);
    const busy = (promise: Promise<unknown>) => expect(promise).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('is being moved') });
    await busy(uploadFiles({ nodes: store, objects, journal }, drive, [{ filename: 'late.txt', data: Buffer.from('late') }], [{ folder: '/busy/sub' }]));
    await busy(uploadFiles({ nodes: store, objects, journal }, drive, [{ filename: 'late.txt', data: Buffer.from('late') }], [{ folder: '/elsewhere' }]));
    await busy(createFolder(store, drive, '/busy/new'));
    await busy(acceptMove({ nodes: store, records, objects, journal, jobs, queue: holding }, drive, '/busy', '/third', {}, 10_000));
    await busy(acceptMove({ nodes: store, records, objects, journal, jobs, queue: holding }, drive, '/other.txt', '/busy/other.txt', {}, 10_000));
    await busy(acceptMove({ nodes: store, records, objects, journal, jobs, queue: holding }, drive, '/busy/a.txt', '/a.txt', {}, 10_000));
    await busy(acceptDelete({ nodes: store, objects, jobs, queue: holding }, drive, '/busy', true, 10_000));
    await busy(acceptDelete({ nodes: store, objects, jobs, queue: holding }, drive, '/busy/sub', true, 10_000));
    await busy(deleteFiles({ nodes: store, objects, journal, records }, drive, ['/busy/a.txt']));
    expect(objects.keys.size).toBe(3);

    // The worker's step finishes it: everything at its new path, nothing left marked.
    const done = await advanceJob({ nodes: store, records, objects, journal, jobs, queue: holding }, (started as { job: { id: string } }).job.id, drive, 60_000);
    expect(done).toMatchObject({ status: 'done', ended: 'moved', files: 2 });
    expect(await store.get(drive, '/busy')).toBeUndefined();
    for (const path of ['/elsewhere', '/elsewhere/sub']) expect(await store.get(drive, path)).toEqual(expect.not.objectContaining({ moving: expect.anything() }));
    await uploadFiles({ nodes: store, objects, journal }, drive, [{ filename: 'late.txt', data: Buffer.from('late') }], [{ folder: '/elsewhere/sub' }]);
    expect(await orphans()).toEqual([]);
  });

  it('a recursive delete of a folder above a move waits for the move, then deletes what is left', async () => {
    const objects = objectStore();
    await upload(objects, [file('/top/busy/a.txt'), file('/top/busy/sub/b.txt'), file('/top/c.txt')]);
    const sent: { id: string; delaySeconds?: number }[] = [];
    const holding = { send: async (job: { id: string }, options: { delaySeconds?: number } = {}) => void sent.push({ id: job.id, ...options }) };
    const move = await acceptMove({ nodes: store, records, objects, journal, jobs, queue: holding }, drive, '/top/busy', '/kept', {}, 0);
    const doomed = await acceptDelete({ nodes: store, objects, jobs, queue: holding }, drive, '/top', true, 60_000);
    // Everything but the moving folder went; the delete's job comes back after a while.
    expect(doomed.done).toBe(false);
    const deleteJob = (doomed as { job: { id: string } }).job.id;
    expect(sent.find((message) => message.id === deleteJob)).toMatchObject({ delaySeconds: expect.any(Number) });
    expect(await store.get(drive, '/top/c.txt')).toBeUndefined();

    const deps = { nodes: store, records, objects, journal, jobs, queue: holding };
    expect(await advanceJob(deps, (move as { job: { id: string } }).job.id, drive, 60_000)).toMatchObject({ status: 'done', ended: 'moved', files: 2 });
    expect(await advanceJob(deps, deleteJob, drive, 60_000)).toMatchObject({ status: 'done' });
    expect(await store.get(drive, '/top')).toBeUndefined();
    expect(await store.get(drive, '/kept/sub/b.txt')).toMatchObject({ kind: 'file' });
    expect([...objects.keys].sort()).toEqual([`${drive}/id-/top/busy/a.txt`, `${drive}/id-/top/busy/sub/b.txt`]);
    expect(await orphans()).toEqual([]);
  });

  it('a folder copy step run again from the start copies no file twice: what is at the destination is skipped before its bytes are copied', async () => {
    const objects = objectStore();
    await upload(objects, [file('/cs/a.txt'), file('/cs/sub/b.txt')]);
    const copied = await acceptCopy({ nodes: store, objects, journal, jobs, queue }, drive, '/cs', '/cd', {}, 60_000);
    expect(copied).toMatchObject({ done: true, node: { path: '/cd' } });
    let copies = 0;
    const counting = { ...objects, copy: async (from: string, to: string, size: number) => (copies++, objects.copy(from, to, size)) };
    const job = { id: 'again', drive, kind: 'copy' as const, path: '/cs', folderId: 'x', to: '/cd', toId: (await store.get(drive, '/cd'))!.id, status: 'running' as const, files: 0, createdAt: '', updatedAt: '' };
    await jobs.create(job);
    await expect(copyStep({ nodes: store, objects: counting, journal, jobs }, job, 60_000)).resolves.toBe('done');
    expect(copies).toBe(0);
    expect(objects.keys.size).toBe(4);
    expect(await orphans()).toEqual([]);
  });

  it('a file move that read its destination folder before a folder move marked it, and writes after that move read it empty: the file keeps a parent', async () => {
    const objects = objectStore();
    await upload(objects, [file('/src/x.txt'), file('/D/keep.txt')]);
    await journal.close([]); // nothing pending
    // The file move /src/x.txt -> /D/x.txt reads everything, then waits at its transaction.
    let reachedTransaction!: () => void;
    const atTransaction = new Promise<void>((resolve) => (reachedTransaction = resolve));
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    const pausedRecords: FileRecords = hooked(records, async (method) => {
      if (method === 'move') {
        reachedTransaction();
        await gate;
      }
    });
    const fileMove = acceptMove({ nodes: store, records: pausedRecords, objects, journal, jobs, queue }, drive, '/src/x.txt', '/D/x.txt', {}, 10_000);
    await atTransaction;

    // The folder move /D -> /F: just before it removes the emptied /D, the file move's transaction lands.
    let once = false;
    const nodes: NodeStore = hooked(store as NodeStore, async (method, args) => {
      if (method === 'removeIfSame' && args[1] === '/D' && !once) {
        once = true;
        letGo();
        await fileMove.catch(() => undefined);
      }
    });
    const folderMove = await acceptMove({ nodes, records, objects, journal, jobs, queue }, drive, '/D', '/F', {}, 10_000);
    expect(folderMove.done).toBe(true);
    // The folder move marked /D before it read it: the file move's transaction, checking /D, is refused, and
    // so is its retry (it reads the mark): a 409, and the file stays where it was.
    await expect(fileMove).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('is being moved') });
    expect(await store.get(drive, '/src/x.txt')).toMatchObject({ kind: 'file' });
    expect(await orphans()).toEqual([]);
  });

  /** The paths of the drive's folders that carry a move's mark. */
  async function marked(): Promise<string[]> {
    const { Items = [] } = await client.send(new ScanCommand({ TableName: LOCAL_RESOURCES.nodesTable }));
    return Items.filter((item) => item.pk.S!.startsWith(`${drive}#`) && item.moving !== undefined).map((item) => item.path.S!).sort();
  }

  /**
   * A move of /M to /N that its next step will stop: a first step with no time to spare marks the top's
   * subfolders (and makes their marked copies), moves one file, marks a folder deeper down and hands the job
   * on; then another request takes /N/s2 (a folder of its own there).
   */
  async function moveAboutToStop(objects: ReturnType<typeof objectStore>): Promise<{ id: string; deps: Parameters<typeof advanceJob>[0] }> {
    await upload(objects, [file('/M/s1/a.txt'), file('/M/s1/deep/b.txt'), file('/M/s2/c.txt'), file('/M/s3/d.txt')]);
    const deps = { nodes: store, records, objects, journal, jobs, queue };
    const started = await acceptMove(deps, drive, '/M', '/N', {}, 0);
    const id = (started as { job: { id: string } }).job.id;
    expect(await advanceJob(deps, id, drive, 0)).toMatchObject({ status: 'running' });
    expect(await marked()).toEqual(expect.arrayContaining(['/M/s1/deep', '/M/s3', '/N/s3']));
    const copy = await store.get(drive, '/N/s2');
    await store.removeIfSame(drive, '/N/s2', copy!.id);
    await store.createFolder(drive, { kind: 'folder', id: 'someone-else', path: '/N/s2', createdAt: '2026-11-25T00:00:00.000Z' });
    return { id, deps };
  }

  it('a move that stops leaves no folder marked, at either end, whichever step marked it', async () => {
    const objects = objectStore();
    const { id, deps } = await moveAboutToStop(objects);

    expect(await advanceJob(deps, id, drive, 60_000)).toMatchObject({ status: 'done', ended: 'stopped' });

    // Every mark the move made is gone, so no folder at either end refuses a writer.
    expect(await marked()).toEqual([]);
    for (const folder of ['/M/s3', '/M/s1/deep', '/N/s1', '/N/s3']) {
      await uploadFiles({ nodes: store, objects, journal }, drive, [{ filename: 'after.txt', data: Buffer.from('after') }], [{ folder }]);
    }
    expect(await orphans()).toEqual([]);
  });

  it.each([1, 3, 5, 8])('a move whose stop dies after %i of its unmarks: the next step clears the rest, and the move ends', async (kills) => {
    const { id, deps } = await moveAboutToStop(objectStore());

    // The stopping step dies after `kills` unmarks.
    let unmarks = 0;
    const dying = hooked(store as NodeStore, (method) => {
      if (method === 'unmarkMoving' && ++unmarks > kills) throw new Error('killed');
    });
    await expect(advanceJob({ ...deps, nodes: dying }, id, drive, 60_000)).rejects.toThrow('killed');
    expect((await marked()).length).toBeGreaterThan(0);

    // The job is sent again (the queue's retry, or the sweep once its lease is out): it ends, with no mark left.
    await jobs.release(id);
    expect(await advanceJob(deps, id, drive, 60_000)).toMatchObject({ status: 'done' });
    expect(await marked()).toEqual([]);
    expect(await orphans()).toEqual([]);
  });

  it('a move job whose request died before marking: the worker must not move the tree under a destination whose parent was deleted meanwhile', async () => {
    const objects = objectStore();
    await upload(objects, [file('/X/a.txt'), file('/X/sub/b.txt'), file('/P/other.txt')]);
    // The request dies at its first mark (after noting the job).
    let dead = false;
    const dying: NodeStore = hooked(store as NodeStore, (method) => {
      if (method === 'markMoving') dead = true;
      if (dead) throw new Error('killed');
    });
    await expect(acceptMove({ nodes: dying, records, objects, journal, jobs, queue }, drive, '/X', '/P/B', {}, 10_000)).rejects.toThrow('killed');
    const [job] = (await jobs.stalled(new Date('9999-12-31T00:00:00.000Z'))).filter((one) => one.drive === drive && one.kind === 'move');
    expect(job).toMatchObject({ status: 'running', path: '/X', to: '/P/B' });

    // Meanwhile /P is deleted, whole.
    await deleteFolder({ nodes: store, objects }, drive, '/P', true);
    expect(await store.get(drive, '/P')).toBeUndefined();

    // The worker (queue or sweep) takes the job.
    await advanceJob({ nodes: store, records, objects, journal, jobs, queue }, job.id, drive, 60_000);
    // Either the move stopped (files still at /X) or they went somewhere a reader can reach: never below a missing folder.
    expect(await orphans()).toEqual([]);
  });

  it('two moves, each into the other\'s source, the second request killed before its read above: both jobs end, one moved, one stopped', async () => {
    const objects = objectStore();
    await upload(objects, [file('/a/x.txt'), file('/d/y.txt')]);
    const deps = { records, objects, journal, jobs, queue };
    let first: Awaited<ReturnType<typeof acceptMove>> | undefined;
    let made = false;
    const dying = hooked(store, async (method) => {
      // The second move has read /a live and noted its job; now the first marks /a, makes /d/b, reads above
      // (nothing marked yet) and hands its job on.
      if (method === 'markMoving' && !first) first = await acceptMove({ ...deps, nodes: store }, drive, '/a', '/d/b', {}, 0);
      // The second marks /d, makes /a/m inside the first's source, and dies before it reads the folders above.
      if (made && method === 'getMany') throw new Error('killed');
      if (method === 'createFolder') made = true;
    });
    await expect(acceptMove({ ...deps, nodes: dying }, drive, '/d', '/a/m', {}, 0)).rejects.toThrow('killed');
    if (!first || first.done) throw new Error('expected a job');
    const [second] = (await jobs.stalled(new Date('9999-12-31T00:00:00.000Z'))).filter((job) => job.drive === drive && job.path === '/d');
    expect(second).toMatchObject({ kind: 'move', status: 'running' });

    // The worker's steps, in turn: each job must end (without the fix, each waits for the other's mark for good).
    for (let round = 0; round < 6; round++) {
      for (const id of [first.job.id, second.id]) await advanceJob({ ...deps, nodes: store }, id, drive, 60_000);
    }
    expect(await jobs.get(drive, first.job.id)).toMatchObject({ status: 'done', ended: 'moved' });
    expect(await jobs.get(drive, second.id)).toMatchObject({ status: 'done', ended: 'stopped' });
    expect(await store.get(drive, '/a')).toBeUndefined();
    expect(await store.get(drive, '/d/b/x.txt')).toMatchObject({ kind: 'file' });
    expect(await store.get(drive, '/d/b/m')).toBeUndefined();
    expect(await store.get(drive, '/d')).not.toHaveProperty('moving');
    expect(await store.get(drive, '/d/b')).not.toHaveProperty('moving');
    expect(await orphans()).toEqual([]);
  });

  it('a large upload completed while a folder above its path is being moved: the 409 says to wait for the move, and then completing again stores the file', async () => {
    const MiB = 1024 * 1024;
    const held = new Map<string, number>();
    const objects: ObjectStore = { put: async () => undefined, open: async () => undefined, deleteMany: async (keys) => keys.forEach((key) => held.delete(key)) };
    const multipart = new Map<string, string>();
    const parts: MultipartStore = {
      begin: async (key) => (multipart.set('mp', key), 'mp'),
      partUrls: async (_key, _id, first, count) => Array.from({ length: count }, (_, i) => `https://s3.test/part${first + i}`),
      listParts: async (_key, id) => (multipart.has(id) ? [{ number: 1, etag: '"e1"', size: 8 * MiB }] : undefined),
      complete: async (key, id) => (multipart.delete(id) ? (held.set(key, 8 * MiB), 'done') : 'gone'),
      head: async (key) => (held.has(key) ? { size: held.get(key)!, etag: 'e-1' } : undefined),
      abort: async (_key, id) => void multipart.delete(id),
    };
    const sessions = leasedSessions();
    const small = objectStore();
    await upload(small, [file('/lu/other.txt')]);
    const { session } = await startUpload({ nodes: store, objects, parts, sessions }, drive, { path: '/lu/big.bin', size: 8 * MiB }, { maxFileBytes: 100 * MiB, expirySeconds: 3600 });

    // A move of /lu that goes on as a job (budget 0): /lu is marked while it runs.
    const started = await acceptMove({ nodes: store, records, objects: small, journal, jobs, queue }, drive, '/lu', '/lu-moved', {}, 0);
    expect(started.done).toBe(false);
    const sent = [{ number: 1, etag: '"e1"' }];
    await expect(completeUpload({ nodes: store, objects, parts, sessions }, drive, session.id, sent)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('until the move is done') });

    // The move ends; the client does as the 409 said.
    const job = started.done ? undefined : started.job;
    await advanceJob({ nodes: store, records, objects: small, journal, jobs, queue }, job!.id, drive, 60_000);
    expect(await store.get(drive, '/lu-moved/other.txt')).toMatchObject({ kind: 'file' });
    // 8 MiB of parts uploaded: the session and its assembled bytes should still be there for this retry.
    await expect(completeUpload({ nodes: store, objects, parts, sessions }, drive, session.id, sent)).resolves.toMatchObject({ path: '/lu/big.bin' });
  });
});

import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { DynamoFileRecords } from '../../functions/aws/dynamo-file-records';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { DynamoUploadJournal } from '../../functions/aws/dynamo-upload-journal';
import { JOURNAL_SWEEP_AFTER_MS, sweepJournal } from '../../functions/core/journal';
import { acceptDelete, deleteFolder } from '../../functions/core/delete-folder';
import { advanceJob } from '../../functions/core/jobs';
import { DynamoJobStore } from '../../functions/aws/dynamo-jobs';
import { deleteFiles } from '../../functions/core/delete-files';
import { openFile } from '../../functions/core/download';
import { Readable } from 'node:stream';
import { createFolder } from '../../functions/core/create-folder';
import { ensureFolders } from '../../functions/core/folders';
import { listFolder, listPage } from '../../functions/core/list-folder';
import { commitFiles, uploadFiles } from '../../functions/core/upload';
import { completeUpload, startUpload } from '../../functions/core/large-upload';
import { ROOT, parentOf } from '../../functions/core/paths';
import type { Job, DriveNode, FileNode, FolderNode, FileRecords, JobStore, MultipartStore, NodeStore, ObjectStore } from '../../functions/core/ports';
import { LOCAL_REGION, LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';
import { type Hook, intercepted, interceptedNodes, mortal as dyingProcess, objectStore } from '../support/interleave';
import { leasedSessions } from '../model/memory-ports';

// The rare interleavings of racing writers, forced step by step on the embedded DynamoDB: a store that
// runs a rival's calls at one exact point of the operation under test.

const dynamo = useEmbeddedDynamo('interleavings');
let client: DynamoDBClient;
let store: DynamoNodeStore;
let records: DynamoFileRecords;
let drive: string;
let driveCount = 0;

beforeAll(async () => {
  client = dynamo.client;
  store = new DynamoNodeStore(client, LOCAL_RESOURCES.nodesTable);
  records = new DynamoFileRecords(client, LOCAL_RESOURCES.nodesTable, LOCAL_RESOURCES.uploadsTable, LOCAL_RESOURCES.changesTable);
});

beforeEach(() => {
  drive = `interleave-${++driveCount}`;
});

/** The real store (by default), with `before` and `after` run around each call the operation makes (not the rival's own calls). */
function interceptedStore(before: Hook, after: Hook = () => undefined, target: NodeStore = store): NodeStore {
  return interceptedNodes(target, before, after);
}

function file(path: string, id = `id-${path}`): FileNode {
  return { kind: 'file', id, path, size: 1, contentType: 'text/plain', createdAt: '2026-11-21T00:00:00.000Z', objectKey: `${drive}/${id}`, etag: id };
}

/** Stores `files` as an upload does (bytes, then the commit): `nodes` is the store the commit runs on. */
async function upload(nodes: NodeStore, objects: ObjectStore, files: FileNode[]): Promise<FileNode[]> {
  for (const f of files) await objects.put(f.objectKey, Buffer.from('x'), f.contentType);
  return commitFiles({ nodes, objects }, drive, files);
}

/** Every node of the drive, and that each one's parent is `/` or a folder: no record a listing cannot reach. */
async function expectEveryParentAFolder(): Promise<DriveNode[]> {
  const { Items = [] } = await client.send(new ScanCommand({ TableName: LOCAL_RESOURCES.nodesTable }));
  const all = Items.filter((item) => item.pk.S!.startsWith(`${drive}#`)).map((item) => store.get(drive, item.path.S!));
  const nodes = (await Promise.all(all)).filter((node): node is DriveNode => node !== undefined);
  for (const node of nodes) {
    const parent = parentOf(node.path);
    if (parent !== ROOT) expect({ child: node.path, parent: await store.get(drive, parent) }).toMatchObject({ parent: { kind: 'folder', path: parent } });
  }
  return nodes;
}

/** No object without a record, and no record (outside folders being deleted) without its object. */
async function expectNothingOrphaned(objects: { keys: Set<string> }): Promise<void> {
  const nodes = await expectEveryParentAFolder();
  const referenced = new Set(nodes.flatMap((node) => (node.kind === 'file' ? [node.objectKey] : [])));
  expect([...objects.keys].filter((key) => !referenced.has(key))).toEqual([]);
}

/** A process that dies at a point (test/support/interleave.ts), its records the real adapter's by default. */
function mortal(nodes: NodeStore, objects: ObjectStore & { keys: Set<string> }, fileRecords: FileRecords = records) {
  return dyingProcess(nodes, objects, fileRecords);
}

describe('the write-ordering protocol (functions/core/ports.ts), forced step by step on the embedded DynamoDB', () => {
  it('a recursive delete that saw a file an upload then replaces: neither the new record nor its bytes outlive the delete', async () => {
    const objects = objectStore();
    await upload(store, objects, [file('/t/a.txt', 'old')]);
    // The upload finds /t before the delete marks it, and writes its record after the delete has read /t.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let written!: () => void;
    const replaced = new Promise<void>((resolve) => (written = resolve));
    let reached!: () => void;
    const atWrite = new Promise<void>((resolve) => (reached = resolve));
    const uploaderNodes = interceptedStore(
      async (method) => {
        if (method !== 'putFile') return;
        reached();
        await gate;
      },
      (method) => (method === 'putFile' ? written() : undefined),
    );
    const rival = upload(uploaderNodes, objects, [file('/t/a.txt', 'new')]);
    await atWrite;
    const deleterNodes = interceptedStore(
      () => undefined,
      async (method, args) => {
        if (method === 'childrenPage' && args[1] === '/t') {
          openGate();
          await replaced;
        }
      },
    );

    await deleteFolder({ nodes: deleterNodes, objects }, drive, '/t', true);

    await expect(rival).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('being deleted') });
    expect(await store.get(drive, '/t/a.txt')).toBeUndefined();
    expect(await store.get(drive, '/t')).toBeUndefined();
    await expectNothingOrphaned(objects);
  });

  it('a delete that answers with a job hides everything below its folder at once, before the worker reaches it', async () => {
    const objects = objectStore();
    const readable = { ...objects, open: async (key: string) => (objects.keys.has(key) ? { body: Readable.from([]), size: 0 } : undefined) };
    await upload(store, objects, [file('/job/a/b/deep.txt'), file('/job/top.txt')]);
    const jobs = new Map<string, Job>();
    const jobStore: JobStore = {
      create: async (job) => void jobs.set(job.id, job),
      get: async (_drive, id) => jobs.get(id),
      claim: async (_drive, id) => jobs.get(id),
      release: async () => undefined,
      advanced: async () => undefined,
      finish: async () => undefined,
      stalled: async () => [],
      reserveBackground: async () => true,
      toBackground: async () => undefined,
      fromBackground: async () => undefined,
      inBackground: async () => [],
    };
    const sent: string[] = [];

    // No time to delete anything: the request marks /job, notes the job and hands it on; no worker runs.
    const outcome = await acceptDelete({ nodes: store, objects, jobs: jobStore, queue: { send: async (job) => void sent.push(job.id) } }, drive, '/job', true, 0);

    expect(outcome.done).toBe(false);
    expect(sent).toHaveLength(1);
    expect(await store.get(drive, '/job/a/b/deep.txt')).toBeDefined();
    for (const folder of ['/job', '/job/a', '/job/a/b']) {
      await expect(listPage(store, drive, folder, { recursive: false, limit: 10 })).rejects.toMatchObject({ code: 'not_found' });
      await expect(listPage(store, drive, folder, { recursive: true, limit: 10 })).rejects.toMatchObject({ code: 'not_found' });
      await expect(listFolder(store, drive, folder, false)).rejects.toMatchObject({ code: 'not_found' });
    }
    for (const path of ['/job/a/b/deep.txt', '/job/top.txt']) {
      await expect(openFile({ nodes: store, objects: readable }, drive, path, () => ({ bytes: 'all' as const }))).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('a replacing upload that finishes before the delete looks into the folder: the delete takes the new file', async () => {
    const objects = objectStore();
    await upload(store, objects, [file('/t/a.txt', 'old')]);
    const nodes = interceptedStore(async (method, args) => {
      if (method === 'markDeleting' && (args[1] as DriveNode).path === '/t') await upload(store, objects, [file('/t/a.txt', 'new')]);
    });

    await expect(deleteFolder({ nodes, objects }, drive, '/t', true)).resolves.toBe(1);

    expect(await store.get(drive, '/t')).toBeUndefined();
    await expectNothingOrphaned(objects);
  });

  it('an upload killed right after its record leaves no record a listing cannot reach (folders come first)', async () => {
    const objects = objectStore();
    const process = mortal(store, objects);
    const nodes = interceptedStore(() => undefined, (method) => (method === 'putFile' ? process.kill() : undefined), process.nodes);

    await expect(upload(nodes, process.objects, [file('/n1/n2/n3/n4/deep.txt')])).rejects.toThrow('killed');

    const left = await expectEveryParentAFolder();
    expect(left.map((node) => node.path).sort()).toEqual(['/n1', '/n1/n2', '/n1/n2/n3', '/n1/n2/n3/n4', '/n1/n2/n3/n4/deep.txt']);
  });

  it('a recursive delete killed part-way leaves no bytes without a record, hides the folder, and the same delete again finishes it', async () => {
    const objects = objectStore();
    // More files than the delete sends at once, so some are still there when it dies.
    await upload(store, objects, Array.from({ length: 120 }, (_, i) => file(`/big/${i % 4}/f${i}.txt`)));
    const process = mortal(store, objects);
    let removed = 0;
    // Killed as the 15th record delete ends: those on their way finish (a few dozen at most), the rest never go.
    const nodes = interceptedStore(() => undefined, (method) => (method === 'removeIfSame' && ++removed === 15 ? process.kill() : undefined), process.nodes);

    await expect(deleteFolder({ nodes, objects: process.objects }, drive, '/big', true)).rejects.toThrow('killed');

    await expectNothingOrphaned(objects);
    expect((await listPage(store, drive, ROOT, { recursive: false, limit: 1000 })).folders.map((folder) => folder.path)).toEqual([]);
    await expect(listFolder(store, drive, '/big', true)).rejects.toMatchObject({ code: 'not_found' });
    await expect(upload(store, objects, [file('/big/0/new.txt')])).rejects.toMatchObject({ code: 'conflict' });

    const left = (await expectEveryParentAFolder()).filter((node) => node.kind === 'file');
    expect(left.length).toBeGreaterThan(0);
    await expect(deleteFolder({ nodes: store, objects }, drive, '/big', true)).resolves.toBe(left.length);
    expect(await expectEveryParentAFolder()).toEqual([]);
    expect([...objects.keys]).toEqual([]);
  });

  it('an empty-folder delete and an upload into that folder at once: never a file without its folder', async () => {
    const objects = objectStore();
    await ensureFolders(store, drive, ['/e'], 'now');
    let rival: Promise<FileNode[]> | undefined;
    // The upload writes its record just after the delete has marked the folder and found it empty.
    const nodes = interceptedStore(
      () => undefined,
      (method) => {
        if (method === 'hasChildren' && !rival) rival = upload(store, objects, [file('/e/late.txt')]).catch((error: unknown) => Promise.reject(error));
      },
    );

    const outcome = await deleteFolder({ nodes, objects }, drive, '/e', false).then(
      () => 'deleted',
      (error: { code: string }) => error.code,
    );
    const uploaded = await rival!.then(
      () => 'stored',
      (error: { code: string }) => error.code,
    );

    expect(['deleted', 'conflict']).toContain(outcome);
    expect(['stored', 'conflict']).toContain(uploaded);
    const left = await expectEveryParentAFolder();
    if (uploaded === 'stored') expect(left.map((node) => node.path).sort()).toEqual(['/e', '/e/late.txt']);
    await expectNothingOrphaned(objects);
  });

  // Review r1, finding 2: only a recursive delete's mark dooms what a withdrawing writer replaced. U stores
  // /a/b/u; V replaces it; an empty-folder delete of /a/b marks it `empty`; U sees the mark, finds its record
  // taken by V and answers 200 (taken counts as stored); V sees the mark and withdraws, putting U's record back
  // (an `empty` mark is cleared once the folder has children); the delete finds children and answers 409. Only
  // U succeeded, so U's file is what stands at /a/b/u, bytes and all.
  it('a withdrawing writer that replaced a file answered 200 puts it back under an empty-folder delete\'s mark', async () => {
    const objects = objectStore();
    await ensureFolders(store, drive, ['/a/b'], 'now');
    await upload(store, objects, [file('/a/b/g')]);
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      return { open, opened };
    };
    const vWrote = gate();
    const vGo = gate();
    const marked = gate();
    const dGo = gate();
    let rival: { v: Promise<unknown>; d: Promise<unknown> } | undefined;
    const part = (text: string) => [{ filename: 'u', contentType: 'text/plain', data: Buffer.from(text) }];
    const target = [{ path: '/a/b/u' }];
    const settled = (promise: Promise<unknown>) => promise.then(() => 'stored', (error: { code?: string; message: string }) => error.code ?? error.message);
    const vNodes = interceptedStore(
      () => undefined,
      async (method) => {
        if (method !== 'putFile') return;
        vWrote.open();
        await vGo.opened;
      },
    );
    const dNodes = interceptedStore(
      async (method) => {
        if (method === 'hasChildren') await dGo.opened;
      },
      (method) => {
        if (method === 'markDeleting') marked.open();
      },
    );
    // U's record is written: V replaces it, then the delete marks /a/b, before U reads the folders again.
    const uNodes = interceptedStore(
      () => undefined,
      async (method) => {
        if (method !== 'putFile' || rival) return;
        const v = settled(uploadFiles({ nodes: vNodes, objects }, drive, part('v'), target));
        await vWrote.opened;
        const d = settled(deleteFolder({ nodes: dNodes, objects }, drive, '/a/b', false));
        await marked.opened;
        rival = { v, d };
      },
    );

    const [u] = await uploadFiles({ nodes: uNodes, objects }, drive, part('u'), target);
    vGo.open();
    const v = await rival!.v;
    dGo.open();
    const d = await rival!.d;

    expect({ v, d }).toEqual({ v: 'conflict', d: 'conflict' });
    expect(await store.get(drive, '/a/b/u')).toMatchObject({ kind: 'file', id: u.id, objectKey: u.objectKey });
    expect(objects.keys.has(u.objectKey)).toBe(true);
    expect(await store.get(drive, '/a/b')).not.toHaveProperty('deleting');
    await expectNothingOrphaned(objects);
  });

  it('an upload whose folder a delete removes between its folders and its record makes the folder again', async () => {
    const objects = objectStore();
    await ensureFolders(store, drive, ['/g'], 'now');
    let raced = false;
    const nodes = interceptedStore(async (method) => {
      if (method === 'putFile' && !raced) {
        raced = true;
        await deleteFolder({ nodes: store, objects }, drive, '/g', true);
      }
    });

    await expect(upload(nodes, objects, [file('/g/x.txt')])).resolves.toHaveLength(1);

    const left = await expectEveryParentAFolder();
    expect(left.map((node) => node.path).sort()).toEqual(['/g', '/g/x.txt']);
    await expectNothingOrphaned(objects);
  });

  it('a failed mkdir -p over a file creates nothing', async () => {
    await store.putFile(drive, file('/a'));

    await expect(ensureFolders(store, drive, ['/a/b/c'], 'now')).rejects.toMatchObject({ code: 'conflict' });

    expect(await store.get(drive, '/a/b')).toBeUndefined();
  });

  it('two mkdirs of one folder while a recursive delete takes the folder above: the second leaves no folder without its parent (gap 10)', async () => {
    const jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
    const objects = objectStore();
    // The first mkdir made /k/r/c.
    await createFolder(store, drive, '/k/r/c', jobs);
    // The delete of /k/r stops just before it removes /k/r: it has removed /k/r/c and found /k/r empty.
    let paused!: () => void;
    const atRemove = new Promise<void>((resolve) => (paused = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const deleterNodes = interceptedStore(async (method, args) => {
      if (method === 'removeFolder' && (args[1] as FolderNode).path === '/k/r') {
        paused();
        await released;
      }
    });
    // The second mkdir read /k, /k/r and /k/r/c live (the first's folder) before the delete marked /k/r;
    // every later call of it lands while the delete waits.
    let deletion: Promise<number> | undefined;
    const nodes = interceptedStore(
      () => undefined,
      async (method) => {
        if (method !== 'getMany' || deletion) return;
        deletion = deleteFolder({ nodes: deleterNodes, objects }, drive, '/k/r', true);
        await atRemove;
        expect(await store.get(drive, '/k/r/c')).toBeUndefined();
      },
    );

    await expect(createFolder(nodes, drive, '/k/r/c', jobs)).rejects.toMatchObject({ code: 'conflict', message: 'folder /k/r is being deleted; it takes no new files or folders' });
    release();
    await expect(deletion).resolves.toBe(0);

    // Before the fix the mkdir's `kept` note made /k/r/c anew here, and it stayed below the removed /k/r.
    expect(await store.get(drive, '/k/r/c')).toBeUndefined();
    expect((await expectEveryParentAFolder()).map((node) => node.path)).toEqual(['/k']);
  });

  it('a mkdir whose found folder a delete removes before its kept note: the note writes nothing, and the mkdir makes the folder itself', async () => {
    const jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
    const objects = objectStore();
    const first = await createFolder(store, drive, '/v/w/c', jobs);
    // Between the second mkdir's read above (passed) and its note, a delete of /v/w removes the lot.
    let raced = false;
    const nodes = interceptedStore(async (method) => {
      if (method !== 'keepFolder' || raced) return;
      raced = true;
      await deleteFolder({ nodes: store, objects }, drive, '/v/w', true);
    });

    const made = await createFolder(nodes, drive, '/v/w/c', jobs);

    // The note on the folder read, now gone, made nothing; the mkdir went round again and made its own.
    expect(raced).toBe(true);
    expect(made).toMatchObject({ kind: 'folder', path: '/v/w/c' });
    expect(made.id).not.toBe(first.id);
    const stored = (await store.get(drive, '/v/w/c')) as FolderNode;
    expect(stored).toMatchObject({ id: made.id });
    expect(stored).not.toHaveProperty('kept');
    expect((await expectEveryParentAFolder()).map((node) => node.path).sort()).toEqual(['/v', '/v/w', '/v/w/c']);
  });

  it('the journal: bytes an upload killed before its records stored are deleted by the sweep; recorded ones stay', async () => {
    const objects = objectStore();
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    const parts = [0, 1, 2].map((i) => ({ filename: `j${i}.txt`, data: Buffer.from(`${i}`) }));
    // One upload killed after its bytes, before any record; another killed right after its first record.
    const first = mortal(store, objects);
    const killedEarly = interceptedStore(() => (first.kill(), undefined), () => undefined, first.nodes);
    await expect(uploadFiles({ nodes: killedEarly, objects: first.objects, journal }, drive, parts, [{ folder: '/j' }, { folder: '/j' }, { folder: '/j' }])).rejects.toThrow('killed');
    const second = mortal(store, objects);
    const killedLate = interceptedStore(() => undefined, (method) => (method === 'putFile' ? second.kill() : undefined), second.nodes);
    await expect(uploadFiles({ nodes: killedLate, objects: second.objects, journal }, drive, [parts[0]], [{ folder: '/k' }])).rejects.toThrow('killed');
    expect(objects.keys.size).toBe(4);

    // Not before the uploads have surely ended; then every byte no record claims goes. The upload of one file
    // noted no entry (docs/hot-path-design.md): its record was written, and holds its bytes; the sweep closes
    // the entry of the upload of three files alone.
    expect(await sweepJournal({ nodes: store, objects, journal })).toBe(0);
    expect(await sweepJournal({ nodes: store, objects, journal }, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS + 1000))).toBe(1);

    await expectNothingOrphaned(objects);
    expect(objects.keys.size).toBe(1);
    expect(await store.get(drive, '/k/j0.txt')).toMatchObject({ kind: 'file' });
    expect(await journal.openKeys()).not.toContain([...objects.keys][0]);
  });

  it('an upload that replaced a file just before a delete took its folder: the replaced file\'s bytes go too', async () => {
    const objects = objectStore();
    await upload(store, objects, [file('/t2/a.txt', 'old')]);
    // The upload's record replaces the old one; then the delete takes /t2 and the new record before the upload reads /t2 again.
    let written!: () => void;
    const replaced = new Promise<void>((resolve) => (written = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    const uploaderNodes = interceptedStore(
      () => undefined,
      async (method) => {
        if (method !== 'putFile') return;
        written();
        await resumed;
      },
    );
    const uploading = upload(uploaderNodes, objects, [file('/t2/a.txt', 'new')]).then(() => 'stored', (error: Error) => error.message);
    await replaced;
    // The delete removes the new record, then the upload reads /t2 again, sees the mark, and undoes what it can.
    const deleterNodes = interceptedStore(
      () => undefined,
      async (method, args) => {
        if (method !== 'removeIfSame' || args[1] !== '/t2/a.txt') return;
        resume();
        await uploading;
      },
    );
    await expect(deleteFolder({ nodes: deleterNodes, objects }, drive, '/t2', true)).resolves.toBe(1);
    expect(await uploading).toContain('being deleted');
    await expectNothingOrphaned(objects);
    expect([...objects.keys]).toEqual([]);
  });

  it('a delete request killed after noting its job, before marking its folder: the worker marks it and deletes the tree', async () => {
    const objects = objectStore();
    const jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
    const queue = { send: async () => undefined };
    await upload(store, objects, [file('/early/a/1.txt'), file('/early/2.txt')]);
    const dying = mortal(store, objects);
    const killedAtMark = interceptedStore((method) => (method === 'markDeleting' ? dying.kill() : undefined), () => undefined, dying.nodes);
    await expect(acceptDelete({ nodes: killedAtMark, objects: dying.objects, jobs, queue }, drive, '/early', true, 60_000)).rejects.toThrow('killed');
    const [job] = (await jobs.stalled(new Date('9999-12-31T00:00:00.000Z'))).filter((one) => one.drive === drive && one.path === '/early');
    expect(job).toMatchObject({ status: 'running' });

    await expect(advanceJob({ nodes: store, objects, jobs, queue, records, journal: new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable) }, job.id, drive, 60_000)).resolves.toMatchObject({ status: 'done', files: 2 });
    expect(await store.get(drive, '/early')).toBeUndefined();
    expect(objects.keys.size).toBe(0);
    await expectNothingOrphaned(objects);
  });

  it('a failed mkdir killed as it removes a folder it made, which an upload stored into: the file keeps its folder, and the job clears the mark', async () => {
    const objects = objectStore();
    const jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
    const queue = { send: async () => undefined };
    await upload(store, objects, [file('/p/x.txt')]);
    const dying = mortal(store, objects);
    let reads = 0;
    const nodes = interceptedStore(
      async (method) => {
        // The mkdir made /p/q/r; before it reads the folders above again, an upload stores into /p/q/r (and
        // answers 200), and an empty-folder delete of /p marks it: the mkdir withdraws.
        if (method === 'getMany' && ++reads === 2) {
          await upload(store, objects, [file('/p/q/r/u.txt')]);
          await store.markDeleting(drive, (await store.get(drive, '/p')) as FolderNode, 'empty');
        }
        // Killed before it looks for children in the folder it lets go of.
        if (method === 'hasChildren') dying.kill();
      },
      () => undefined,
      dying.nodes,
    );
    await expect(createFolder(nodes, drive, '/p/q/r', jobs)).rejects.toMatchObject({ code: 'conflict' });
    // The delete of /p found children and gave up.
    await store.unmarkDeleting(drive, (await store.get(drive, '/p')) as FolderNode);

    // Marked, not removed: the upload's file keeps its folder.
    expect(await store.get(drive, '/p/q/r')).toMatchObject({ kind: 'folder', deleting: 'empty' });
    expect(await store.get(drive, '/p/q/r/u.txt')).toMatchObject({ kind: 'file' });
    const [job] = (await jobs.stalled(new Date('9999-12-31T00:00:00.000Z'))).filter((one) => one.drive === drive && one.path === '/p/q/r');
    expect(job).toMatchObject({ kind: 'empty', status: 'running' });
    await expect(advanceJob({ nodes: store, objects, jobs, queue, records, journal: new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable) }, job.id, drive, 60_000)).resolves.toMatchObject({ status: 'done' });
    expect((await store.get(drive, '/p/q/r')) as FolderNode).not.toHaveProperty('deleting');
    expect((await expectEveryParentAFolder()).map((node) => node.path).sort()).toEqual(['/p', '/p/q', '/p/q/r', '/p/q/r/u.txt', '/p/x.txt']);
    await expectNothingOrphaned(objects);
  });

  it('the journal tells an entry noted withdrawn from one open or closed (withdraw, withdrew), by id', async () => {
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    const [id] = await journal.open(drive, [{ path: '/j.txt', objectKey: `${drive}/j` }], new Date());
    const [other] = await journal.open(drive, [{ path: '/k.txt', objectKey: `${drive}/k` }], new Date());
    expect(await journal.withdrew(id)).toBeUndefined();
    // The note carries what each record replaced (gap 12): here, one record over /j.txt's earlier file.
    const earlier = { ...file('/j.txt', 'earlier'), pending: 'journal#older', movedAt: '2026-11-22T00:00:00.000Z' };
    await journal.withdraw([id, id], [earlier, undefined]);
    expect(await journal.withdrew(id)).toEqual({ replaced: [earlier] });
    expect(await journal.withdrew(other)).toBeUndefined();
    // Bytes left to the sweep (`leave`) are named by the entry until it closes: in flight for fsck too.
    await journal.leave([id, id], [{ path: '/j.txt', objectKey: earlier.objectKey }, undefined]);
    expect(await journal.openKeys()).toEqual(expect.arrayContaining([`${drive}/j`, earlier.objectKey]));
    // The note leaves the entry's files as they were, and the sweep reads it (gaps 12 and 13).
    const due = await journal.due(new Date('9999-12-31T00:00:00.000Z'));
    expect(due.find((entry) => entry.id === id)).toMatchObject({ files: [{ path: '/j.txt', objectKey: `${drive}/j` }], withdrawn: true, replaced: [earlier], left: [{ path: '/j.txt', objectKey: earlier.objectKey }] });
    expect(due.find((entry) => entry.id === other)).not.toHaveProperty('withdrawn');
    expect(due.find((entry) => entry.id === other)).not.toHaveProperty('left');
    await journal.close([id, other]);
    expect(await journal.withdrew(id)).toBeUndefined();
    // A closed entry stays closed: neither note makes an item.
    await journal.withdraw([id, 'journal#never'], [earlier, undefined]);
    await journal.leave([id], [{ path: '/j.txt', objectKey: earlier.objectKey }]);
    expect(await journal.withdrew(id)).toBeUndefined();
    expect(await journal.withdrew('journal#never')).toBeUndefined();
    expect((await journal.openKeys()).filter((key) => key === `${drive}/j` || key === earlier.objectKey)).toEqual([]);
  });

  /**
   * Two uploads of `names` to /t, staged: the first has written its records and, before it reads the folders
   * above again, the second writes over them and waits before its own second read while a move marks /t.
   * `first()` starts the first; `firstEnded()` lets the second go on; `second()` is its outcome ('stored' or
   * the error's code).
   */
  async function twoUploadsMeetingAMove(names: readonly string[]) {
    const objects = objectStore();
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    await ensureFolders(store, drive, ['/t'], 'now');
    const part = (text: string) => names.map((filename) => ({ filename, data: Buffer.from(`${text} ${filename}`) }));
    const targets = names.map((filename) => ({ path: `/t/${filename}` }));
    let secondAtRecheck!: () => void;
    const secondWaits = new Promise<void>((resolve) => (secondAtRecheck = resolve));
    let firstEnded!: () => void;
    const firstDone = new Promise<void>((resolve) => (firstEnded = resolve));
    let second: Promise<unknown> | undefined;
    let firstReads = 0;
    let secondReads = 0;
    // The second upload writes its record over the first's, then waits before reading the folders above again.
    const secondNodes = interceptedStore(async (method) => {
      if (method === 'getMany' && ++secondReads === 2) {
        secondAtRecheck();
        await firstDone;
      }
    });
    // The first upload has written its record; before it reads the folders above again, the second writes over
    // it, and a move takes /t: the first withdraws (409) finding its record replaced, then the second does.
    const firstNodes = interceptedStore(async (method) => {
      if (method === 'getMany' && ++firstReads === 2) {
        second = uploadFiles({ nodes: secondNodes, objects, journal }, drive, part('second'), targets).then(
          () => 'stored',
          (error: { code: string }) => error.code,
        );
        await secondWaits;
        await store.markMoving(drive, (await store.get(drive, '/t')) as FolderNode, 'job-x');
      }
    });
    return {
      objects,
      journal,
      part,
      targets,
      first: () => uploadFiles({ nodes: firstNodes, objects, journal }, drive, part('first'), targets),
      firstEnded: () => firstEnded(),
      second: () => second,
    };
  }

  // Uploads of several files (journaled): both answer 409 and leave nothing. Uploads of one file (the hot path,
  // docs/hot-path-design.md): the earlier finds its record taken by the later one and answers as stored (200);
  // the later one withdraws and puts the earlier one's record back, which is what that 200 promised.
  it.each([
    ['of two files each: both answer 409, and the later one does not put back the earlier one\'s records', ['u.txt', 'v.txt']],
    ['of one file each: the earlier answers 200, its record taken; the later 409 puts it back', ['u.txt']],
  ])('two uploads to one path that both fail, %s', async (_name, names) => {
    const { objects, targets, first: start, firstEnded, second } = await twoUploadsMeetingAMove(names);
    const first = start();
    if (names.length > 1) await expect(first).rejects.toMatchObject({ code: 'conflict' });
    const stored = names.length > 1 ? undefined : await first;
    firstEnded();
    await expect(second()).resolves.toBe('conflict');
    await store.unmarkMoving(drive, (await store.get(drive, '/t')) as FolderNode, 'job-x');

    if (stored) {
      // The first answered 200 with its file: that file stands at the path, with its bytes; the second's went.
      expect(await store.get(drive, '/t/u.txt')).toMatchObject({ id: stored[0].id, objectKey: stored[0].objectKey });
      expect([...objects.keys]).toEqual([stored[0].objectKey]);
    } else {
      // Both answered 409: neither's records are there, and neither's bytes.
      for (const { path } of targets) expect(await store.get(drive, path)).toBeUndefined();
      expect([...objects.keys]).toEqual([]);
    }
    await expectNothingOrphaned(objects);
  });

  // Gap 11 (functions/core/protocol/README.md): the earlier of two uploads of several files to one path passes
  // its second read and is about to close its entry and answer 200 when the later one, whose records replaced
  // its own, withdraws under a move's mark. The later one puts the earlier one's records back and reads its
  // entry: no `withdrawn` note, so they stay (it freed them, and the 200's files, while the entry was open).
  it('two uploads of two files to one path, the earlier answering 200 as the later withdraws: its files stay (gap 11)', async () => {
    const objects = objectStore();
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    await ensureFolders(store, drive, ['/t'], 'now');
    const names = ['u.txt', 'v.txt'];
    const part = (text: string) => names.map((filename) => ({ filename, data: Buffer.from(`${text} ${filename}`) }));
    const targets = names.map((filename) => ({ path: `/t/${filename}` }));
    let laterAtRecheck!: () => void;
    const laterWrote = new Promise<void>((resolve) => (laterAtRecheck = resolve));
    let earlierAtClose!: () => void;
    const earlierPassed = new Promise<void>((resolve) => (earlierAtClose = resolve));
    let later: Promise<unknown> | undefined;
    let earlierReads = 0;
    let laterReads = 0;
    // The later upload writes its records over the earlier one's; before it reads the folders above again, the
    // earlier one has passed that read, and a move takes /t.
    const laterNodes = interceptedStore(async (method) => {
      if (method === 'getMany' && ++laterReads === 2) {
        laterAtRecheck();
        await earlierPassed;
        await store.markMoving(drive, (await store.get(drive, '/t')) as FolderNode, 'job-x');
      }
    });
    // The earlier upload has written its records; before its second read, the later one writes over them.
    const earlierNodes = interceptedStore(async (method) => {
      if (method === 'getMany' && ++earlierReads === 2) {
        later = uploadFiles({ nodes: laterNodes, objects, journal }, drive, part('later'), targets).then(
          () => 'stored',
          (error: { code: string }) => error.code,
        );
        await laterWrote;
      }
    });
    // Past its second read, the earlier upload closes its entry only once the later one has withdrawn.
    const earlierJournal = intercepted(journal, async (method) => {
      if (method === 'close') {
        earlierAtClose();
        await later;
      }
    });
    const stored = await uploadFiles({ nodes: earlierNodes, objects, journal: earlierJournal }, drive, part('earlier'), targets);
    await expect(later).resolves.toBe('conflict');
    await store.unmarkMoving(drive, (await store.get(drive, '/t')) as FolderNode, 'job-x');

    // The earlier answered 200: its files stand, with their bytes; the later one's went.
    for (const file of stored) expect(await store.get(drive, file.path)).toMatchObject({ id: file.id, objectKey: file.objectKey });
    expect([...objects.keys].sort()).toEqual(stored.map((file) => file.objectKey).sort());
    await expectNothingOrphaned(objects);
  });

  // Gap 12 (functions/core/protocol/README.md): two uploads of two files over files already there. The first
  // writes its records over them; the second writes over the first's; a move takes /t. The first withdraws,
  // finds its records taken, and leaves what they replaced to its entry's sweep (it freed them before); the
  // second withdraws, puts the first's records back, reads the first's note and puts back, in their place,
  // the files that stood there before: both answer 409, and the path holds what it held before them.
  it('two uploads of two files over files already there, both withdrawing: the files there before stay (gap 12)', async () => {
    const { objects, journal, part, targets, first, firstEnded, second } = await twoUploadsMeetingAMove(['u.txt', 'v.txt']);
    const before = await uploadFiles({ nodes: store, objects, journal }, drive, part('before'), targets);
    await expect(first()).rejects.toMatchObject({ code: 'conflict' });
    firstEnded();
    await expect(second()).resolves.toBe('conflict');
    await store.unmarkMoving(drive, (await store.get(drive, '/t')) as FolderNode, 'job-x');

    // The files there before stand again, each with its bytes; the two uploads' bytes are gone.
    for (const earlier of before) expect(await store.get(drive, earlier.path)).toMatchObject({ id: earlier.id, objectKey: earlier.objectKey });
    expect([...objects.keys].sort()).toEqual(before.map((earlier) => earlier.objectKey).sort());
    // The first's entry stays open (noted), naming those bytes, until the sweep, which keeps them.
    expect(await journal.openKeys()).toEqual(expect.arrayContaining(before.map((earlier) => earlier.objectKey)));
    await sweepJournal({ nodes: store, objects, journal }, new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS));
    for (const earlier of before) expect(await store.get(drive, earlier.path)).toMatchObject({ id: earlier.id, objectKey: earlier.objectKey });
    expect([...objects.keys].sort()).toEqual(before.map((earlier) => earlier.objectKey).sort());
    expect((await journal.openKeys()).filter((key) => key.startsWith(`${drive}/`))).toEqual([]);
    await expectNothingOrphaned(objects);
  });

  it('an empty-folder delete killed after its mark: its job removes the folder', async () => {
    const objects = objectStore();
    const jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
    const queue = { send: async () => undefined };
    await ensureFolders(store, drive, ['/e/mpty'], 'now');
    const dying = mortal(store, objects);
    const killedAfterMark = interceptedStore(() => undefined, (method) => (method === 'markDeleting' ? dying.kill() : undefined), dying.nodes);
    await expect(acceptDelete({ nodes: killedAfterMark, objects: dying.objects, jobs, queue }, drive, '/e/mpty', false, 60_000)).rejects.toThrow('killed');
    // Marked until the job's step: writers into it are refused meanwhile.
    expect(await store.get(drive, '/e/mpty')).toMatchObject({ deleting: 'empty' });
    await expect(upload(store, objects, [file('/e/mpty/late.txt')])).rejects.toMatchObject({ code: 'conflict' });

    const [job] = (await jobs.stalled(new Date('9999-12-31T00:00:00.000Z'))).filter((one) => one.drive === drive && one.path === '/e/mpty');
    expect(job).toMatchObject({ kind: 'empty', status: 'running' });
    await expect(advanceJob({ nodes: store, objects, jobs, queue, records, journal: new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable) }, job.id, drive, 60_000)).resolves.toMatchObject({ status: 'done' });
    expect(await store.get(drive, '/e/mpty')).toBeUndefined();
    expect((await expectEveryParentAFolder()).map((node) => node.path)).toEqual(['/e']);
    await expectNothingOrphaned(objects);
  });

  it('a delete step that fell behind, whose tree another delete finished and a writer made anew, touches nothing new', async () => {
    const objects = objectStore();
    const jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
    const queue = { send: async () => undefined };
    await upload(store, objects, [file('/s/x/old.txt'), file('/s/y.txt')]);
    const accepted = await acceptDelete({ nodes: store, objects, jobs, queue }, drive, '/s', true, 0);
    if (accepted.done) throw new Error('expected a job');
    // Step A enters /s/x and stops before reading it.
    let paused!: () => void;
    const atRead = new Promise<void>((resolve) => (paused = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    const nodesA = interceptedStore(async (method, args) => {
      if (method === 'childrenPage' && args[1] === '/s/x' && first) {
        first = false;
        paused();
        await released;
      }
    });
    const stepA = advanceJob({ nodes: nodesA, objects, jobs, queue, records, journal: new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable) }, accepted.job.id, drive, 60_000);
    await atRead;
    // The same delete again finishes the tree; then the user uploads into /s/x anew.
    await expect(acceptDelete({ nodes: store, objects, jobs, queue }, drive, '/s', true, 60_000)).resolves.toMatchObject({ done: true });
    await upload(store, objects, [file('/s/x/new.txt', 'new-id')]);
    release();
    await stepA;
    expect(await store.get(drive, '/s/x/new.txt')).toMatchObject({ kind: 'file', id: 'new-id' });
    expect(objects.keys.has(`${drive}/new-id`)).toBe(true);
    expect(await store.get(drive, '/s/x')).toMatchObject({ kind: 'folder' });
    await expectNothingOrphaned(objects);
  });

  it('a file delete whose record delete was applied but its reply lost (the SDK tries again): deleted, bytes and all', async () => {
    const objects = objectStore();
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    await upload(store, objects, [file('/lost/a.txt', 'la')]);
    // The first transaction reaches the table, and its reply is lost on the way back: the SDK sends it again.
    const lossy = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION, credentials: dynamo.credentials });
    let lost = 0;
    lossy.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' && lost++ === 0) throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: {} });
        return out;
      },
      { step: 'deserialize', name: 'loseFirstReply' },
    );
    try {
      const lossyRecords = new DynamoFileRecords(lossy, LOCAL_RESOURCES.nodesTable, LOCAL_RESOURCES.uploadsTable, LOCAL_RESOURCES.changesTable);
      await expect(deleteFiles({ nodes: store, objects, journal, records: lossyRecords }, drive, ['/lost/a.txt'])).resolves.toEqual({ deleted: ['/lost/a.txt'], notFound: [] });
    } finally {
      lossy.destroy();
    }
    expect(lost).toBe(2);
    expect([...objects.keys]).toEqual([]);
    await expectNothingOrphaned(objects);
  });

  it('a large-upload completion whose record a file delete took before it failed: the session ends, and no retry records bytes the delete removes', async () => {
    const MiB = 1024 * 1024;
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
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
    const { session } = await startUpload({ nodes: store, objects, parts, sessions }, drive, { path: '/lu/big.bin', size: 8 * MiB }, { maxFileBytes: 100 * MiB, expirySeconds: 3600 });
    // After the completion's record, a file delete removes it (its bytes wait until the retry has run); then
    // the completion's next read fails, as a throttled read would.
    let bytesMayGo!: () => void;
    const bytesGate = new Promise<void>((resolve) => (bytesMayGo = resolve));
    let recordGone!: () => void;
    const recordTaken = new Promise<void>((resolve) => (recordGone = resolve));
    const slowObjects: ObjectStore = { ...objects, deleteMany: async (keys) => (recordGone(), await bytesGate, objects.deleteMany(keys)) };
    let deleting: Promise<unknown> | undefined;
    let wrote = false;
    let failed = false;
    const firstNodes = new Proxy(store, {
      get(t, method: keyof NodeStore) {
        const real = (t[method] as (...args: unknown[]) => Promise<unknown>).bind(t);
        return async (...args: unknown[]) => {
          if (method === 'getMany' && wrote && !failed) {
            failed = true;
            deleting = deleteFiles({ nodes: store, objects: slowObjects, journal, records }, drive, ['/lu/big.bin']);
            await recordTaken;
            throw new Error('throttled');
          }
          const out = await real(...args);
          if (method === 'putFile') wrote = true;
          return out;
        };
      },
    });
    const sent = [{ number: 1, etag: '"e1"' }];
    await expect(completeUpload({ nodes: firstNodes, objects, parts, sessions }, drive, session.id, sent)).rejects.toMatchObject({ code: 'conflict' });
    await expect(completeUpload({ nodes: store, objects, parts, sessions }, drive, session.id, sent)).rejects.toMatchObject({ code: 'not_found' });
    bytesMayGo();
    await expect(deleting).resolves.toEqual({ deleted: ['/lu/big.bin'], notFound: [] });
    expect(await store.get(drive, '/lu/big.bin')).toBeUndefined();
    expect([...held.keys()]).toEqual([]);
  });

  it('a file delete killed after its records, before their bytes: the sweep deletes the bytes; one killed before keeps record and bytes', async () => {
    const objects = objectStore();
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    await upload(store, objects, [file('/fd/a.txt', 'fa'), file('/fd/b.txt', 'fb')]);
    // Killed after the first record removed: its bytes stay until the sweep; the other file stays whole.
    const late = mortal(store, objects);
    const killedLate = intercepted(late.records, () => undefined, (method) => (method === 'removeMany' ? late.kill() : undefined));
    await expect(deleteFiles({ nodes: late.nodes, objects: late.objects, journal, records: killedLate }, drive, ['/fd/a.txt', '/fd/b.txt'])).rejects.toThrow('killed');
    // Both records went in one write: they are gone, their bytes not yet.
    const left = (await Promise.all(['/fd/a.txt', '/fd/b.txt'].map((path) => store.get(drive, path)))).filter((node): node is DriveNode => node !== undefined);
    expect(left).toEqual([]);
    expect(objects.keys.size).toBe(2);

    expect(await sweepJournal({ nodes: store, objects, journal }, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS + 1000))).toBeGreaterThanOrEqual(1);
    await expectNothingOrphaned(objects);
    expect([...objects.keys]).toEqual(left.map((node) => (node as FileNode).objectKey));

    // Killed before any record went: record and bytes stay, through the sweep.
    await upload(store, objects, [file('/fd/c.txt', 'fc')]);
    const early = mortal(store, objects);
    const killedEarly = intercepted(early.records, (method) => (method === 'removeMany' ? early.kill() : undefined));
    await expect(deleteFiles({ nodes: early.nodes, objects: early.objects, journal, records: killedEarly }, drive, ['/fd/c.txt'])).rejects.toThrow('killed');
    await sweepJournal({ nodes: store, objects, journal }, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS + 1000));
    await expectNothingOrphaned(objects);
    expect(await store.get(drive, '/fd/c.txt')).toMatchObject({ kind: 'file', objectKey: `${drive}/fc` });
    expect(objects.keys.has(`${drive}/fc`)).toBe(true);
  });

  it('a file delete that read a file an upload then replaces: the new file goes too, and the old bytes stay the replacer\'s', async () => {
    const objects = objectStore();
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    await upload(store, objects, [file('/fr/a.txt', 'old')]);
    let replacedOnce = false;
    const racing = intercepted(records, async (method) => {
      if (method === 'removeMany' && !replacedOnce) {
        replacedOnce = true;
        await upload(store, objects, [file('/fr/a.txt', 'new')]);
      }
    });
    await expect(deleteFiles({ nodes: store, objects, journal, records: racing }, drive, ['/fr/a.txt'])).resolves.toEqual({ deleted: ['/fr/a.txt'], notFound: [] });
    expect(await store.get(drive, '/fr/a.txt')).toBeUndefined();
    await expectNothingOrphaned(objects);
    expect(objects.keys.size).toBe(0);
  });

  it('the journal: a completed upload closes its entry', async () => {
    const objects = objectStore();
    const journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
    const before = (await journal.openKeys()).length;

    const [stored] = await uploadFiles({ nodes: store, objects, journal }, drive, [{ filename: 'done.txt', data: Buffer.from('x') }], undefined);

    expect(await journal.openKeys()).not.toContain(stored.objectKey);
    expect((await journal.openKeys()).length).toBe(before);
  });
});

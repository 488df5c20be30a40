import { Readable } from 'node:stream';
import { deleteFiles } from '../../functions/core/delete-files';
import { acceptCopy } from '../../functions/core/copy';
import { acceptDelete } from '../../functions/core/delete-folder';
import { JOB_STALL_MS } from '../../functions/core/background-jobs';
import { advanceJob, resumeStalledJobs } from '../../functions/core/jobs';
import { JOURNAL_SWEEP_AFTER_MS, sweepJournal } from '../../functions/core/journal';
import { acceptMove } from '../../functions/core/move';
import type { DriveNode, FileNode, FolderNode, Job } from '../../functions/core/ports';
import { bytesState, trashState } from '../../functions/core/protocol/states';
import { purgeClaimed, purgeItem, sweepTrash } from '../../functions/core/purge';
import { restoreFile } from '../../functions/core/restore';
import { type RestoreOutcome, acceptRestore, attemptJobId } from '../../functions/core/restore-folder';
import { DriveError } from '../../functions/core/errors';
import { ROOT, parentOf } from '../../functions/core/paths';
import { PURGE_LEASE_MS, type TrashPolicy, trashId } from '../../functions/core/trash';
import { LiveFolders } from '../../functions/core/live-folders';
import { uploadFiles } from '../../functions/core/upload';
import { type MemoryPorts, gatePorts, memoryPorts } from './memory-ports';

// The trash (issue 28, docs/trash-design.md) on the in-memory ports, one request at a time: what each write
// into or out of the trash promises when nothing races it. The races are interleavings.test.ts's ("trash").

const DRIVE = 'd';
const DAY = 86_400_000;
let ports: MemoryPorts;
/** The trash's clock, moved by the tests (no wall-clock waits). */
let now: number;
let policy: TrashPolicy;
const deps = () => ({ ...ports, trashPolicy: policy });

beforeEach(() => {
  ports = memoryPorts();
  now = Date.parse('2026-11-27T10:00:00.000Z');
  policy = { days: 7, by: 'key_1', now: () => now };
});

async function upload(path: string, body = path): Promise<FileNode> {
  return (await uploadFiles(deps(), DRIVE, [{ filename: 'x', data: Buffer.from(body) }], [{ path }]))[0];
}

async function bytesOf(file: Pick<FileNode, 'objectKey'>): Promise<string | undefined> {
  const opened = await ports.objects.open(file.objectKey);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

const rows = () => ports.trash.all(DRIVE).map(({ row }) => row);

describe('the trash on memory ports', () => {
  it('keeps a deleted file in the trash and restores it with the same id, key, ETag and bytes', async () => {
    const file = await upload('/a/f', 'version 1');
    expect(await deleteFiles(deps(), DRIVE, ['/a/f'])).toEqual({ deleted: ['/a/f'], notFound: [] });
    expect(await ports.nodes.get(DRIVE, '/a/f')).toBeUndefined();
    const [row] = rows();
    expect(row).toMatchObject({ type: 'file', path: '/a/f', bytes: 9, files: 1, reason: 'deleted', deletedBy: 'key_1', state: 'trashed' });
    expect(Date.parse(row.purgeAt) - Date.parse(row.deletedAt)).toBe(7 * DAY);
    expect(bytesState({ entries: [], stored: true, everRecorded: true, trash: row }, () => false)).toEqual({ state: 'trashed', row: row.id });
    expect([...ports.trash.dueEntries.values()]).toEqual([{ drive: DRIVE, id: row.id, purgeAt: row.purgeAt }]);

    const restored = await restoreFile(deps(), DRIVE, row.id, {});
    expect(restored).toMatchObject({ id: file.id, objectKey: file.objectKey, etag: file.etag, size: file.size, createdAt: file.createdAt, path: '/a/f' });
    expect(restored.movedAt).toBeUndefined();
    expect(await bytesOf(restored)).toBe('version 1');
    expect(rows()).toEqual([]);
    expect(ports.trash.dueEntries.size).toBe(0);
    await expect(restoreFile(deps(), DRIVE, row.id, {})).rejects.toThrow(`trash item ${row.id} does not exist`);
  });

  it("keeps an overwritten file's previous version, restores it elsewhere, and trashes what a restore overwrites", async () => {
    const v1 = await upload('/a/f', 'v1');
    const v2 = await upload('/a/f', 'v2');
    // The upload's step 7 made a row of v1 (no byte deleted).
    const [row] = rows();
    expect(row).toMatchObject({ type: 'file', path: '/a/f', reason: 'replaced', file: { id: v1.id } });
    expect(await bytesOf(v1)).toBe('v1');
    await expect(restoreFile(deps(), DRIVE, row.id, {})).rejects.toThrow('/a/f is taken; pass "overwrite": true to replace the file there');
    const elsewhere = await restoreFile(deps(), DRIVE, row.id, { to: '/b/old' });
    expect(elsewhere).toMatchObject({ id: v1.id, etag: v1.etag, path: '/b/old' });
    expect(elsewhere.movedAt).toBeDefined();
    expect(((await ports.nodes.get(DRIVE, '/a/f')) as FileNode).id).toBe(v2.id);
    expect(await ports.nodes.get(DRIVE, '/b')).toMatchObject({ kind: 'folder' });

    // Back onto v2's path with overwrite: v2 goes to the trash in turn.
    await deleteFiles(deps(), DRIVE, ['/b/old']);
    const again = rows().find((r) => r.file?.id === v1.id)!;
    now += 1;
    await restoreFile(deps(), DRIVE, again.id, { to: '/a/f', overwrite: true });
    expect(((await ports.nodes.get(DRIVE, '/a/f')) as FileNode).id).toBe(v1.id);
    expect(rows().map((r) => [r.file?.id, r.reason])).toEqual([[v2.id, 'replaced']]);
  });

  it('trashes the file a move overwrites in the move’s own write', async () => {
    const target = await upload('/a/t', 'target');
    await upload('/a/s', 'source');
    await acceptMove(deps(), DRIVE, '/a/s', '/a/t', { overwrite: true }, 0);
    expect(rows()).toMatchObject([{ path: '/a/t', reason: 'replaced', file: { id: target.id } }]);
    expect(ports.journal.entries.size).toBe(0);
    expect(await bytesOf(target)).toBe('target');
  });

  it('purges an item now: bytes, then its row and due entry', async () => {
    const file = await upload('/a/f');
    await deleteFiles(deps(), DRIVE, ['/a/f']);
    const [row] = rows();
    expect(await purgeItem(deps(), DRIVE, row.id, 'req1')).toEqual({ id: row.id, path: '/a/f', files: 1, bytes: file.size });
    expect(ports.objects.objects.has(file.objectKey)).toBe(false);
    expect(rows()).toEqual([]);
    await expect(purgeItem(deps(), DRIVE, row.id, 'req2')).rejects.toThrow(`trash item ${row.id} does not exist`);
    // The row's first due entry (a week on) is the sweep's to drop once due: its row is gone.
    expect(await sweepTrash(deps(), new Date(now + 8 * DAY))).toEqual({ purged: 0, skipped: 0 });
    expect(ports.trash.dueEntries.size).toBe(0);
  });

  it('refuses a restore of an item being purged, and a purge of an item being restored (409)', async () => {
    await upload('/a/f');
    await deleteFiles(deps(), DRIVE, ['/a/f']);
    const [row] = rows();
    const claimed = await ports.trash.claim(DRIVE, row.id, 'purge', 'p', new Date(now), PURGE_LEASE_MS);
    expect(trashState(claimed!)).toEqual({ state: 'purging', by: 'p' });
    await expect(restoreFile(deps(), DRIVE, row.id, {})).rejects.toThrow(`trash item ${row.id} (/a/f) is being purged`);
    await expect(purgeItem(deps(), DRIVE, row.id, 'q')).rejects.toThrow('is already being purged');
    // A purge that died is taken over once its lease lapsed.
    now += PURGE_LEASE_MS + 1;
    await purgeItem(deps(), DRIVE, row.id, 'q');
    expect(rows()).toEqual([]);
  });

  it('purges rows past purgeAt in the sweep, bytes before items, in bounded steps', async () => {
    const files = [await upload('/a/1'), await upload('/a/2'), await upload('/a/3')];
    for (const file of files) {
      await deleteFiles(deps(), DRIVE, [file.path]);
      now += 1;
    }
    const first = rows().sort((a, b) => (a.purgeAt < b.purgeAt ? -1 : 1))[0];
    // One millisecond before: nothing.
    expect(await sweepTrash(deps(), new Date(Date.parse(first.purgeAt) - 1))).toEqual({ purged: 0, skipped: 0 });
    expect(rows()).toHaveLength(3);
    // The order of deletes: every object's before its items'.
    const order: string[] = [];
    const logged = <T extends object>(target: T, method: string, line: (args: unknown[]) => string[]): T =>
      new Proxy(target, {
        get(held, key, receiver) {
          const value: unknown = Reflect.get(held, key, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (key === method) order.push(...line(args));
            return (value as (...a: unknown[]) => unknown).apply(held, args);
          };
        },
      });
    const objects = logged(ports.objects, 'deleteMany', ([keys]) => (keys as string[]).map((key) => `bytes ${key}`));
    const trash = logged(ports.trash, 'remove', ([, id]) => [`row ${String(id)}`]);
    const later = new Date(Date.parse(first.purgeAt) + 10 * DAY);
    expect(await sweepTrash({ trash, objects }, later, 2)).toEqual({ purged: 2, skipped: 0 });
    expect(rows()).toHaveLength(1);
    expect(order.filter((line) => line.startsWith('row'))).toHaveLength(2);
    for (let i = 0; i < order.length; i += 2) expect([order[i].split(' ')[0], order[i + 1].split(' ')[0]]).toEqual(['bytes', 'row']);
    expect(await sweepTrash({ trash, objects }, later, 2)).toEqual({ purged: 1, skipped: 0 });
    expect(rows()).toEqual([]);
    for (const file of files) expect(ports.objects.objects.has(file.objectKey)).toBe(false);
    expect(ports.trash.dueEntries.size).toBe(0);
  });

  it('resumes a purge killed after its bytes once its lease lapsed', async () => {
    const file = await upload('/a/f');
    await deleteFiles(deps(), DRIVE, ['/a/f']);
    const [row] = rows();
    const claimed = (await ports.trash.claim(DRIVE, row.id, 'purge', 'dead', new Date(now), PURGE_LEASE_MS))!;
    await ports.objects.deleteMany([file.objectKey]);
    // The claim made the row due now: the sweep finds it, but leaves it while the lease holds.
    expect(await sweepTrash(deps(), new Date(now + 1))).toEqual({ purged: 0, skipped: 1 });
    expect(await sweepTrash(deps(), new Date(now + PURGE_LEASE_MS + 1))).toEqual({ purged: 1, skipped: 0 });
    expect(rows()).toEqual([]);
    await expect(purgeClaimed(deps(), DRIVE, claimed, 'dead')).resolves.toMatchObject({ id: row.id });
  });

  it('moves a recursive delete into one folder row (as a job), and purges it whole', async () => {
    const files = [await upload('/r/a/1', 'one'), await upload('/r/a/2', 'two'), await upload('/r/b/3', 'three'), await upload('/r/4', 'four')];
    await ports.nodes.createFolder(DRIVE, { kind: 'folder', id: 'empty', path: '/r/e', createdAt: 'now' });
    const outcome = await acceptDelete(deps(), DRIVE, '/r', true, 0);
    expect(outcome.done).toBe(false);
    // Listed at once, filling while its job runs.
    expect(rows()).toMatchObject([{ type: 'folder', path: '/r', state: 'filling' }]);
    for (let message = ports.queue.take(), steps = 0; message && steps < 50; message = ports.queue.take(), steps++) await advanceJob(deps(), message.id, message.drive, 0);
    expect(ports.nodes.all(DRIVE).filter((node) => node.path.startsWith('/r'))).toEqual([]);
    const [row] = rows();
    expect(row).toMatchObject({ type: 'folder', path: '/r', state: 'trashed', files: 4, bytes: 3 + 3 + 5 + 4 });
    const members = ports.trash.all(DRIVE)[0].members.map((member) => member.relative).sort();
    expect(members).toEqual(['4', 'a', 'a/1', 'a/2', 'b', 'b/3', 'e']);
    for (const file of files) expect(ports.objects.objects.has(file.objectKey)).toBe(true);
    expect(await purgeItem(deps(), DRIVE, row.id, 'p')).toMatchObject({ files: 4 });
    for (const file of files) expect(ports.objects.objects.has(file.objectKey)).toBe(false);
    expect(ports.trash.all(DRIVE)).toEqual([]);
  });

  // Review of the warm upload (docs/hot-path-design.md): an upload into a folder it found live writes before it
  // reads; replacing a file in a folder a recursive delete has taken, it withdraws (409), and what it replaced,
  // which the delete can no longer find, goes into the trash as its own row, not freed (trash-design.md,
  // "Writes": withdrawing under a `recursive` mark). Before the fix its bytes were deleted: a file lost.
  it('trashes what a withdrawing upload replaced under a recursive mark, as its own row', async () => {
    const v1 = await upload('/r/f', 'v1');
    const outcome = await acceptDelete(deps(), DRIVE, '/r', true, 0);
    expect(outcome.done).toBe(false);
    // The folder found live before the delete: the upload writes, then reads the mark, and withdraws.
    const liveFolders = new LiveFolders(60_000);
    liveFolders.note(DRIVE, ['/r']);
    const replacing = uploadFiles({ ...deps(), liveFolders }, DRIVE, [{ filename: 'x', data: Buffer.from('v2') }], [{ path: '/r/f' }]);
    await expect(replacing).rejects.toThrow('folder /r is being deleted');
    expect(rows().find((row) => row.file?.id === v1.id)).toMatchObject({ type: 'file', path: '/r/f', reason: 'replaced' });
    expect(await bytesOf(v1)).toBe('v1');
    for (let message = ports.queue.take(), steps = 0; message && steps < 50; message = ports.queue.take(), steps++) await advanceJob(deps(), message.id, message.drive, 0);
    expect(ports.nodes.all(DRIVE).filter((node) => node.path.startsWith('/r'))).toEqual([]);
    expect(await restoreFile(deps(), DRIVE, rows().find((row) => row.file?.id === v1.id)!.id, {})).toMatchObject({ id: v1.id });
    expect(await bytesOf(v1)).toBe('v1');
  });

  // Gap 12's `left` bytes (protocol/README.md, "The journal sweep"): a several-file upload X replaced P at /f,
  // withdrew (its note names P), found its record taken by a writer Y that stands, and left P's bytes to its
  // entry's sweep. P was a file clients saw, and nothing names it now: the trash keeps it, as X's success would.
  async function leftBehind(by?: string): Promise<{ p: FileNode; entry: string }> {
    const p = await upload('/f', 'p');
    const [entry] = await ports.journal.open(DRIVE, [{ path: '/f', objectKey: `${DRIVE}/x` }], new Date(Date.now()), by);
    const x: FileNode = { ...p, id: 'x', objectKey: `${DRIVE}/x`, etag: 'x', pending: entry, createdAt: new Date().toISOString() };
    await ports.objects.put(x.objectKey, Buffer.from('x'), 'text/plain');
    expect(await ports.nodes.putFile(DRIVE, x)).toMatchObject({ ok: true, replaced: { id: p.id } });
    await ports.journal.withdraw([entry], [p]);
    // Y takes X's record (its step 7 trashes X's record, which the sweep purges: X withdrew).
    await upload('/f', 'y');
    await ports.journal.leave([entry], [p]);
    return { p, entry };
  }

  it("trashes the bytes a withdrawn writer left to the sweep as `replaced`, by the writer's key", async () => {
    const { p } = await leftBehind('key_2');
    expect(rows().filter((row) => row.file?.id === p.id)).toEqual([]);
    expect(await sweepJournal(deps(), new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS))).toBe(1);
    const kept = rows().filter((row) => row.file?.id === p.id);
    expect(kept).toEqual([expect.objectContaining({ type: 'file', path: '/f', reason: 'replaced', deletedBy: 'key_2' })]);
    expect(await bytesOf(p)).toBe('p');
    expect(ports.journal.entries.size).toBe(0);
    // A second sweep finds nothing to do and trashes nothing twice.
    expect(await sweepJournal(deps(), new Date(Date.now() + 3 * JOURNAL_SWEEP_AFTER_MS))).toBe(0);
    expect(rows().filter((row) => row.file?.id === p.id)).toHaveLength(1);
    expect(await restoreFile(deps(), DRIVE, kept[0].id, { to: '/back' })).toMatchObject({ id: p.id, path: '/back' });
    expect(await bytesOf(p)).toBe('p');
  });

  it('deletes the bytes a withdrawn writer left with the trash off, as before', async () => {
    const { p } = await leftBehind('key_2');
    policy = { days: 0, by: 'key_1', now: () => now };
    expect(await sweepJournal(deps(), new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS))).toBe(1);
    expect(rows().filter((row) => row.file?.id === p.id)).toEqual([]);
    expect(ports.objects.objects.has(p.objectKey)).toBe(false);
  });

  it("opens a several-file upload's journal entry under the request's key", async () => {
    const opened: (string | undefined)[] = [];
    const open = ports.journal.open.bind(ports.journal);
    ports.journal.open = async (drive, files, sweepAfter, by) => {
      opened.push(by);
      return open(drive, files, sweepAfter, by);
    };
    await uploadFiles(deps(), DRIVE, [{ filename: 'a', data: Buffer.from('a') }, { filename: 'b', data: Buffer.from('b') }], [{ path: '/m/a' }, { path: '/m/b' }]);
    expect(opened).toEqual(['key_1']);
  });

  // The worker has no caller: a job's step names the key that started the job (`Job.createdBy`), so that what
  // its entries leave to the sweep goes into the trash under that key, as the request's own would.
  it("opens a folder copy's journal entries, in the worker's steps, under the key that started the copy", async () => {
    // More than a step's page (200), so that the request's step leaves the rest to the worker.
    const names = Array.from({ length: 201 }, (_, i) => `f${i}`);
    await uploadFiles(deps(), DRIVE, names.map((name) => ({ filename: name, data: Buffer.from(name) })), names.map((name) => ({ path: `/src/${name}` })));
    const opened: (string | undefined)[] = [];
    const open = ports.journal.open.bind(ports.journal);
    ports.journal.open = async (drive, files, sweepAfter, by) => {
      opened.push(by);
      return open(drive, files, sweepAfter, by);
    };
    const outcome = await acceptCopy(deps(), DRIVE, '/src', '/dst', {}, 0);
    expect(outcome.done).toBe(false);
    const worker = { ...ports, trashPolicy: { days: 7, now: () => now } };
    for (let message = ports.queue.take(), steps = 0; message && steps < 50; message = ports.queue.take(), steps++) await advanceJob(worker, message.id, message.drive, 0);
    expect(await ports.nodes.get(DRIVE, '/dst/f200')).toMatchObject({ kind: 'file' });
    expect(opened.length).toBeGreaterThan(1);
    expect(new Set(opened)).toEqual(new Set(['key_1']));
  });

  it('deletes as before with DRIVE_TRASH_DAYS=0: nothing in the trash, the bytes gone', async () => {
    policy = { days: 0, by: 'key_1', now: () => now };
    const file = await upload('/a/f', 'v1');
    const replaced = await upload('/a/g', 'v1');
    await upload('/a/g', 'v2');
    await deleteFiles(deps(), DRIVE, ['/a/f']);
    await sweepJournal(ports, new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS));
    expect(rows()).toEqual([]);
    expect(ports.objects.objects.has(file.objectKey)).toBe(false);
    expect(ports.objects.objects.has(replaced.objectKey)).toBe(false);
  });

  it('names a restore attempt’s job the same for every retry of it, and another for any other request', () => {
    const first = attemptJobId('d', 'item', { attempt: 'scope+key' });
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(attemptJobId('d', 'item', { attempt: 'scope+key' })).toBe(first);
    const others = [
      attemptJobId('e', 'item', { attempt: 'scope+key' }),
      attemptJobId('d', 'other', { attempt: 'scope+key' }),
      attemptJobId('d', 'item', { attempt: 'scope+key', to: '/x' }),
      attemptJobId('d', 'item', { attempt: 'scope+key', overwrite: true }),
      attemptJobId('d', 'item', { attempt: 'scope+other key' }),
    ];
    expect(new Set([first, ...others]).size).toBe(6);
  });

  it('makes ids that sort by time', () => {
    const ids = [trashId(1), trashId(2), trashId(1e12), trashId(2e12)];
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

// A trashed folder's restore (restore-folder.ts): the tree back whole, as the request (200) or as a job (202).
describe('a folder restore on memory ports', () => {
  const BIG = 60_000;

  /** /r with files in two subfolders and at its top, and an empty folder, as `snapshot` shows it. */
  async function makeTree(): Promise<void> {
    await upload('/r/a/1', 'one');
    await upload('/r/a/2', 'two');
    await upload('/r/b/3', 'three');
    await upload('/r/4', 'four');
    await ports.nodes.createFolder(DRIVE, { kind: 'folder', id: 'empty-e', path: '/r/e', createdAt: '2026-11-01T00:00:00.000Z' });
  }

  /** Every node at or below `top`: path, kind, id, creation time, and a file's size, ETag and key. */
  function snapshot(top = '/r', as = top): unknown[] {
    return ports.nodes
      .all(DRIVE)
      .filter((node) => node.path === top || node.path.startsWith(`${top}/`))
      .map((node) => ({ ...shape(node), path: `${as}${node.path.slice(top.length)}` }))
      .sort((a, b) => (a.path < b.path ? -1 : 1));
  }
  const shape = (node: DriveNode) =>
    node.kind === 'file'
      ? { kind: 'file', path: node.path, id: node.id, size: node.size, etag: node.etag, objectKey: node.objectKey, createdAt: node.createdAt }
      : { kind: 'folder', path: node.path, id: node.id, createdAt: node.createdAt };

  /** Runs every queued job step to its end (a cap on steps, not on time). */
  async function drainJobs(): Promise<void> {
    for (let message = ports.queue.take(), steps = 0; message; message = ports.queue.take(), steps++) {
      if (steps === 200) throw new Error('jobs did not end in 200 steps');
      await advanceJob(deps(), message.id, message.drive, 0);
    }
  }

  /** Deletes /r recursively as a job (budget 0) and runs it to its end: the folder's row, trashed. */
  async function trashTree(): Promise<string> {
    const outcome = await acceptDelete(deps(), DRIVE, '/r', true, 0);
    expect(outcome.done).toBe(false);
    await drainJobs();
    const [row] = rows().filter((r) => r.type === 'folder');
    expect(row).toMatchObject({ path: '/r', state: 'trashed', files: 4 });
    return row.id;
  }

  /**
   * The invariants of the protocol's README once everything has ended: each object named by exactly one of a
   * record, a row and a member, and every one of those with its bytes; every node below a folder; no folder
   * marked; no row left claimed or filling; no member without its row; no job running.
   */
  function checkQuiet(): string[] {
    const problems: string[] = [];
    const nodes = ports.nodes.all(DRIVE);
    const byPath = new Map(nodes.map((node) => [node.path, node]));
    const names = new Map<string, string[]>();
    const name = (key: string, by: string) => names.set(key, [...(names.get(key) ?? []), by]);
    for (const node of nodes) {
      if (parentOf(node.path) !== ROOT && byPath.get(parentOf(node.path))?.kind !== 'folder') problems.push(`${node.path} has no folder above it`);
      if (node.kind === 'folder' && (node.deleting || node.moving)) problems.push(`folder ${node.path} is left marked`);
      if (node.kind === 'file') name(node.objectKey, `record ${node.path}`);
    }
    for (const [key, by] of ports.trash.namedKeys()) name(key, by);
    for (const [key, by] of names) {
      if (by.length > 1) problems.push(`${key} is named by ${by.join(' and ')}`);
      if (!ports.objects.objects.has(key)) problems.push(`${by[0]} has no bytes`);
      if (by.some((what) => what.includes('of a row gone'))) problems.push(`${by.join(', ')}`);
    }
    for (const key of ports.objects.objects.keys()) if (!names.has(key)) problems.push(`object ${key} is named by nothing`);
    for (const { row } of ports.trash.all(DRIVE)) {
      if (row.restoring !== undefined || row.purging !== undefined) problems.push(`row ${row.path} is left claimed`);
      if (row.state !== 'trashed') problems.push(`row ${row.path} is left ${row.state}`);
    }
    for (const job of ports.jobs.jobs.values()) if (job.status !== 'done') problems.push(`job ${job.kind} ${job.path} is still running`);
    return problems;
  }

  it('restores a deleted folder whole in the request: the same folders, files, ids, ETags and keys (200)', async () => {
    await makeTree();
    const before = snapshot();
    const id = await trashTree();
    const row = ports.trash.peek(DRIVE, id)!;
    const outcome = await acceptRestore(deps(), DRIVE, id, {}, BIG);
    expect(outcome).toEqual({ done: true, node: { kind: 'folder', id: row.folderId, path: '/r', createdAt: row.folderCreatedAt } });
    expect(snapshot()).toEqual(before);
    expect(rows()).toEqual([]);
    expect(ports.trash.memberItems.size).toBe(0);
    expect(ports.trash.dueEntries.size).toBe(0);
    expect(await bytesOf((await ports.nodes.get(DRIVE, '/r/b/3')) as FileNode)).toBe('three');
    expect(checkQuiet()).toEqual([]);
    await expect(acceptRestore(deps(), DRIVE, id, {}, BIG)).rejects.toThrow(`trash item ${id} does not exist`);
  });

  it('restores a deleted folder as a job (202) and elsewhere, making the missing parents', async () => {
    await makeTree();
    const before = snapshot('/r', '/x/y/r');
    const id = await trashTree();
    const outcome = await acceptRestore(deps(), DRIVE, id, { to: '/x/y/r' }, 0);
    expect(outcome.done).toBe(false);
    const job = (outcome as { job: Job }).job;
    expect(job).toMatchObject({ kind: 'restore', path: '/r', to: '/x/y/r', trashId: id, status: 'running' });
    // Claimed while it runs: a second restore and a purge are refused.
    expect(ports.trash.peek(DRIVE, id)?.restoring).toBe(job.id);
    await expect(acceptRestore(deps(), DRIVE, id, { to: '/z' }, BIG)).rejects.toThrow(`trash item ${id} (/r) is being restored`);
    await expect(purgeItem(deps(), DRIVE, id, 'p')).rejects.toThrow();
    await drainJobs();
    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'done', ended: 'restored', files: 4 });
    // Elsewhere: the same ids, keys and ETags; the folders below keep theirs.
    expect(snapshot('/x/y/r').map((node) => ({ ...(node as object), createdAt: undefined }))).toEqual(before.map((node) => ({ ...(node as object), createdAt: undefined })));
    expect(await ports.nodes.get(DRIVE, '/x/y')).toMatchObject({ kind: 'folder' });
    expect(rows()).toEqual([]);
    expect(checkQuiet()).toEqual([]);
  });

  it('leaves in the trash a file whose path was taken since the delete, and restores it later elsewhere', async () => {
    await makeTree();
    const id = await trashTree();
    const trashed = ports.trash.all(DRIVE)[0].members.find((member) => member.relative === 'a/1')!.file!;
    const taken = await upload('/r/a/1', 'new one');
    // The folder stands again (made by the upload): restored into it only with overwrite.
    await expect(acceptRestore(deps(), DRIVE, id, {}, BIG)).rejects.toThrow('/r is taken; pass "overwrite": true to restore into the folder there');
    expect(ports.trash.peek(DRIVE, id)?.restoring).toBeUndefined();
    const outcome = (await acceptRestore(deps(), DRIVE, id, { overwrite: true }, BIG)) as { done: true; node: FolderNode };
    expect(outcome.node.id).toBe(((await ports.nodes.get(DRIVE, '/r')) as FolderNode).id);
    expect(((await ports.nodes.get(DRIVE, '/r/a/1')) as FileNode).id).toBe(taken.id);
    expect(((await ports.nodes.get(DRIVE, '/r/a/2')) as FileNode).etag).toBeDefined();
    // What is left stays restorable: one file, its bytes; the row's folder id is spent.
    const [left] = rows();
    expect(left).toMatchObject({ id, type: 'folder', files: 1, bytes: trashed.size, state: 'trashed' });
    expect(left.folderId).toBeUndefined();
    expect(ports.trash.all(DRIVE)[0].members.map((member) => member.relative)).toEqual(['a/1']);
    expect(checkQuiet()).toEqual([]);
    const again = (await acceptRestore(deps(), DRIVE, id, { to: '/old' }, BIG)) as { done: true; node: FolderNode };
    expect(again.node.path).toBe('/old');
    expect(await ports.nodes.get(DRIVE, '/old/a/1')).toMatchObject({ id: trashed.id, etag: trashed.etag });
    expect(rows()).toEqual([]);
    expect(checkQuiet()).toEqual([]);
  });

  it('trashes a file standing at the destination with overwrite, and refuses it without', async () => {
    await makeTree();
    const id = await trashTree();
    const file = await upload('/r', 'a file where the folder was');
    await expect(acceptRestore(deps(), DRIVE, id, {}, BIG)).rejects.toThrow('/r is taken; pass "overwrite": true to replace the file there');
    now += 1;
    await acceptRestore(deps(), DRIVE, id, { overwrite: true }, BIG);
    expect(await ports.nodes.get(DRIVE, '/r')).toMatchObject({ kind: 'folder' });
    expect(rows()).toMatchObject([{ type: 'file', path: '/r', reason: 'replaced', file: { id: file.id } }]);
    expect(checkQuiet()).toEqual([]);
  });

  /**
   * Runs `restore` on ports gated so that `rival` runs whole just before the restore's `at`-th port call (or
   * after its last), once for every position: every order of the two at the restore's steps. Each run starts
   * from `setup` on fresh ports; `check` judges the answers and the stores.
   */
  async function everyOrder(
    setup: () => Promise<string>,
    restore: (gated: ReturnType<typeof deps>, id: string) => Promise<RestoreOutcome>,
    rival: (id: string) => Promise<unknown>,
    check: (answers: { restore: Settled; rival: Settled }, id: string) => void,
  ): Promise<number> {
    // Every position up to the most calls a run made (a restore the rival refused early makes few).
    let positions = 0;
    for (let at = 0; at <= positions; at++) {
      ports = memoryPorts();
      const id = await setup();
      let calls = 0;
      let rivalRun: Promise<Settled> | undefined;
      const gated = gatePorts({ nodes: ports.nodes, records: ports.records, trash: ports.trash, jobs: ports.jobs, queue: ports.queue, objects: ports.objects, journal: ports.journal }, async () => {
        if (calls++ === at) rivalRun = settle(rival(id));
        if (rivalRun) await rivalRun;
      });
      const restored = await settle(restore({ ...ports, ...gated, trashPolicy: policy }, id));
      rivalRun ??= settle(rival(id));
      const rivalAnswer = await rivalRun;
      positions = Math.max(positions, calls);
      await drainJobs();
      check({ restore: restored, rival: rivalAnswer }, id);
      expect(checkQuiet()).toEqual([]);
    }
    return positions;
  }

  type Settled = { ok: true; value: unknown } | { ok: false; code: string; message: string };
  const settle = (work: Promise<unknown>): Promise<Settled> =>
    work.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => {
        if (error instanceof DriveError) return { ok: false as const, code: error.code, message: error.message };
        throw error;
      },
    );

  it.each([false, true])('races a restore with an upload to one of its paths at every step (overwrite %s): one wins, nothing is lost', async (overwrite) => {
    const setup = async () => {
      await makeTree();
      return trashTree();
    };
    const seen = new Set<string>();
    const steps = await everyOrder(
      setup,
      (gated, id) => acceptRestore(gated, DRIVE, id, { overwrite }, BIG),
      () => upload('/r/a/1', 'uploaded'),
      ({ restore, rival }, id) => {
        expect(rival.ok).toBe(true);
        const uploaded = (rival as { value: FileNode }).value;
        // The upload answered 200: its file stands at its path whichever came first.
        expect(((ports.nodes.all(DRIVE).find((node) => node.path === '/r/a/1')) as FileNode | undefined)?.id).toBe(uploaded.id);
        const trashed = ports.trash.all(DRIVE);
        if (!restore.ok) {
          // Refused: the upload made /r first (seen at the read, without overwrite; or between the read and the
          // restore's make): the row is whole, unclaimed (checkQuiet).
          expect(restore).toMatchObject({ code: 'conflict' });
          expect([...(overwrite ? [] : ['/r is taken; pass "overwrite": true to restore into the folder there']), '/r changed while the restore was being made; try again']).toContain((restore as { message: string }).message);
          expect(trashed.find(({ row }) => row.id === id)?.row).toMatchObject({ files: 4, folderId: expect.any(String) });
          seen.add('refused');
          return;
        }
        // Restored: every other file is back, and the trashed version of /r/a/1 is still in the trash, as the
        // row's member (the upload came first) or as a row of its own (the upload replaced the restored file).
        for (const path of ['/r/a/2', '/r/b/3', '/r/4']) expect(ports.nodes.all(DRIVE).some((node) => node.path === path)).toBe(true);
        expect(ports.nodes.all(DRIVE).some((node) => node.path === '/r/e' && node.kind === 'folder')).toBe(true);
        const kept = trashed.flatMap(({ row, members }) => [...(row.file ? [row.file] : []), ...members.flatMap((member) => (member.file ? [member.file] : []))]);
        expect(kept.map((file) => file.path)).toEqual(['/r/a/1']);
        seen.add(trashed.some(({ row }) => row.id === id) ? 'upload first: a member left' : 'restore first: replaced into a row');
      },
    );
    expect(steps).toBeGreaterThan(10);
    // Each way the race can go came up among the orders.
    expect([...seen].sort()).toEqual(['refused', 'restore first: replaced into a row', 'upload first: a member left']);
  });

  it('races two restores of one folder at every step: one restores it whole, the other is refused', async () => {
    const setup = async () => {
      await makeTree();
      return trashTree();
    };
    let before: unknown[] = [];
    await everyOrder(
      async () => {
        const id = await setup();
        // The tree as it was, for the check: restored on a scratch copy of the stores would cost a second setup.
        before = ports.trash.all(DRIVE)[0].members.map((member) => `/r/${member.relative}`).sort();
        return id;
      },
      (gated, id) => acceptRestore(gated, DRIVE, id, {}, BIG),
      (id) => acceptRestore(deps(), DRIVE, id, {}, BIG),
      ({ restore, rival }, id) => {
        const answers = [restore, rival];
        expect(answers.filter((answer) => answer.ok)).toHaveLength(1);
        for (const answer of answers) {
          if (answer.ok) continue;
          // Refused: being restored, gone, or the folder standing again (made by the other).
          expect(answer.code === 'conflict' || answer.code === 'not_found').toBe(true);
          expect([`trash item ${id} (/r) is being restored`, `trash item ${id} does not exist`, '/r is taken; pass "overwrite": true to restore into the folder there']).toContain(answer.message);
        }
        expect(ports.nodes.all(DRIVE).filter((node) => node.path.startsWith('/r/')).map((node) => node.path).sort()).toEqual(before);
        expect(rows()).toEqual([]);
      },
    );
  });

  it('races two restores of one folder as jobs: the second is refused while the first runs, and finds nothing after', async () => {
    await makeTree();
    const id = await trashTree();
    const first = await acceptRestore(deps(), DRIVE, id, {}, 0);
    expect(first.done).toBe(false);
    await expect(acceptRestore(deps(), DRIVE, id, { to: '/elsewhere' }, 0)).rejects.toThrow(`trash item ${id} (/r) is being restored`);
    await drainJobs();
    await expect(acceptRestore(deps(), DRIVE, id, { to: '/elsewhere' }, 0)).rejects.toThrow(`trash item ${id} does not exist`);
    expect(checkQuiet()).toEqual([]);
  });

  /**
   * Runs the queued job steps to their end with `rival` run whole once, just before the first port call that
   * follows the first call `after` matches (a step's read of its destination, say).
   */
  async function drainWithRival(after: (call: { port: string; method: string; args: unknown[] }) => boolean, rival: () => Promise<unknown>): Promise<void> {
    let seen = false;
    let ran = false;
    const gated = gatePorts({ nodes: ports.nodes, records: ports.records, trash: ports.trash, jobs: ports.jobs, queue: ports.queue, objects: ports.objects, journal: ports.journal }, async (_, call) => {
      if (seen && !ran) {
        ran = true;
        await rival();
      }
      if (after(call)) seen = true;
    });
    for (let message = ports.queue.take(), steps = 0; message; message = ports.queue.take(), steps++) {
      if (steps === 200) throw new Error('jobs did not end in 200 steps');
      await advanceJob({ ...ports, ...gated, trashPolicy: policy }, message.id, message.drive, 0);
    }
    expect(ran).toBe(true);
  }

  it('never makes the destination again in a job step: a delete of it after the step read it stops the job', async () => {
    await makeTree();
    const id = await trashTree();
    const outcome = await acceptRestore(deps(), DRIVE, id, {}, 0);
    expect(outcome.done).toBe(false);
    const job = (outcome as { job: Job }).job;
    // The step reads /r (standing, the job's), then a recursive delete takes /r whole before the step's next call.
    const deleted = drainWithRival(
      (call) => call.port === 'nodes' && call.method === 'get' && call.args[1] === '/r',
      () => acceptDelete(deps(), DRIVE, '/r', true, BIG),
    );
    await deleted;
    await drainJobs();
    // The delete answered for /r: nothing stands there again, not even an empty folder.
    expect(ports.nodes.all(DRIVE).filter((node) => node.path === '/r' || node.path.startsWith('/r/'))).toEqual([]);
    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'done', ended: 'stopped' });
    // Nothing was restored: the row is whole, released, restorable again.
    expect(rows().find((row) => row.id === id)).toMatchObject({ files: 4, state: 'trashed' });
    expect(ports.trash.peek(DRIVE, id)?.restoring).toBeUndefined();
    expect(checkQuiet()).toEqual([]);
  });

  // The same class in a folder copy's step (copy.ts): its destination is its request's to make, never a step's.
  it('never makes a copy’s destination again in its step: a delete of it after the step read it stops the copy', async () => {
    await makeTree();
    let seen = false;
    let ran = false;
    const gated = gatePorts({ nodes: ports.nodes, records: ports.records, trash: ports.trash, jobs: ports.jobs, queue: ports.queue, objects: ports.objects, journal: ports.journal }, async (_, call) => {
      if (seen && !ran) {
        ran = true;
        await acceptDelete(deps(), DRIVE, '/c', true, BIG);
      }
      // The step's read of its destination (the request read it with getMany before it made it).
      if (call.port === 'nodes' && call.method === 'get' && call.args[1] === '/c') seen = true;
    });
    const answer = await acceptCopy({ ...ports, ...gated, trashPolicy: policy }, DRIVE, '/r', '/c', {}, 0).then(
      () => 'copied',
      (error: unknown) => (error as Error).message,
    );
    expect(ran).toBe(true);
    await drainJobs();
    expect(answer).toBe('the copy stopped: /r or /c was deleted or taken by another request meanwhile');
    expect(ports.nodes.all(DRIVE).filter((node) => node.path === '/c' || node.path.startsWith('/c/'))).toEqual([]);
    expect(checkQuiet()).toEqual([]);
  });

  // An empty-folder delete (or a writer letting go of a folder it made) marks a folder `empty` while it looks
  // for children, and clears the mark when it finds some: a restore job meeting that mark waits and goes on.
  it.each([
    ['the destination', '/r', false],
    ['a folder of its page', '/r/a', true],
  ])('waits out a brief empty mark on %s instead of stopping, then restores whole', async (_, marked, overwrite) => {
    await makeTree();
    const before = snapshot();
    const id = await trashTree();
    if (overwrite) {
      // /r and /r/a stand again (a file in /r/a keeps the empty delete from removing it); restored into them.
      await upload('/r/a/other', 'other');
    }
    const outcome = await acceptRestore(deps(), DRIVE, id, { overwrite }, 0);
    expect(outcome.done).toBe(false);
    const job = (outcome as { job: Job }).job;
    const folder = (await ports.nodes.get(DRIVE, marked)) as FolderNode;
    expect(await ports.nodes.markDeleting(DRIVE, folder, 'empty')).toMatchObject({ deleting: 'empty' });
    // A step while the mark holds: the job waits (sent again with a delay), nothing stops, nothing is lost.
    const message = ports.queue.take()!;
    await advanceJob(deps(), message.id, message.drive, 0);
    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'running' });
    expect(ports.trash.peek(DRIVE, id)?.restoring).toBe(job.id);
    expect(ports.queue.messages).toMatchObject([{ id: job.id, delaySeconds: expect.any(Number) }]);
    // The empty delete finds children (or the restore's own folder, which holds the restore) and clears its mark.
    await ports.nodes.unmarkDeleting(DRIVE, { ...folder, deleting: 'empty' });
    await drainJobs();
    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'done', ended: 'restored', files: 4 });
    const restored = snapshot().filter((node) => (node as { path: string }).path !== '/r/a/other');
    if (!overwrite) expect(restored).toEqual(before);
    else expect(restored.map((node) => (node as { path: string }).path)).toEqual(before.map((node) => (node as { path: string }).path));
    expect(rows()).toEqual([]);
    expect(checkQuiet()).toEqual([]);
  });

  // The same in a folder copy's step: a brief `empty` mark on its destination is waited out, not a stop.
  it('waits out a brief empty mark on a copy’s destination, then copies whole', async () => {
    await makeTree();
    let seen = false;
    let marked: FolderNode | undefined;
    const gated = gatePorts({ nodes: ports.nodes, records: ports.records, trash: ports.trash, jobs: ports.jobs, queue: ports.queue, objects: ports.objects, journal: ports.journal }, async (_, call) => {
      if (seen && !marked) marked = (await ports.nodes.markDeleting(DRIVE, (await ports.nodes.get(DRIVE, '/c')) as FolderNode, 'empty'))!;
      if (call.port === 'nodes' && call.method === 'get' && call.args[1] === '/c') seen = true;
    });
    const outcome = await acceptCopy({ ...ports, ...gated, trashPolicy: policy }, DRIVE, '/r', '/c', {}, 0);
    expect(marked).toMatchObject({ deleting: 'empty' });
    expect(outcome.done).toBe(false);
    await ports.nodes.unmarkDeleting(DRIVE, marked!);
    await drainJobs();
    expect(await ports.jobs.get(DRIVE, (outcome as { job: Job }).job.id)).toMatchObject({ status: 'done', ended: 'copied', files: 4 });
    expect(snapshot('/c').map((node) => (node as { path: string }).path)).toEqual(snapshot('/r', '/c').map((node) => (node as { path: string }).path));
    expect(checkQuiet()).toEqual([]);
  });

  /** `acceptRestore` on ports where the request dies (its next port call throws) right after its claim of the row. */
  async function restoreDyingAfterClaim(id: string, options: { to?: string; attempt?: string } = {}, diesAt: (call: { port: string; method: string }) => boolean = () => true): Promise<void> {
    // Its clean-ups fail too (the request is dead), and say so.
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    let claimed = false;
    let dead = false;
    const gated = gatePorts({ nodes: ports.nodes, records: ports.records, trash: ports.trash, jobs: ports.jobs, queue: ports.queue, objects: ports.objects, journal: ports.journal }, async (_, call) => {
      if (dead || (claimed && diesAt(call))) {
        dead = true;
        throw new Error('the request died');
      }
      if (call.port === 'trash' && call.method === 'claim') claimed = true;
    });
    await expect(acceptRestore({ ...ports, ...gated, trashPolicy: policy }, DRIVE, id, options, BIG)).rejects.toThrow('the request died');
    jest.restoreAllMocks();
    expect(ports.trash.peek(DRIVE, id)?.restoring).toEqual(expect.any(String));
  }

  /** The sweep's resumption of stalled jobs, a job stall later, then every step to its end. */
  async function sweepStalled(): Promise<void> {
    expect(await resumeStalledJobs(ports, new Date(Date.now() + 2 * JOB_STALL_MS))).toBeGreaterThan(0);
    await drainJobs();
  }

  it.each([
    ['an empty folder', false],
    ['a folder with files', true],
  ])('keeps %s in the trash when its restore request dies after the claim: the sweep releases it, restorable', async (_, withFiles) => {
    if (withFiles) await makeTree();
    else await ports.nodes.createFolder(DRIVE, { kind: 'folder', id: 'empty-r', path: '/r', createdAt: '2026-11-01T00:00:00.000Z' });
    const outcome = await acceptDelete(deps(), DRIVE, '/r', true, 0);
    expect(outcome.done).toBe(false);
    await drainJobs();
    const [row] = rows();
    expect(row).toMatchObject({ type: 'folder', path: '/r', state: 'trashed', files: withFiles ? 4 : 0 });
    await restoreDyingAfterClaim(row.id);
    await sweepStalled();
    // Never dropped: the row stands, released, with its folder's id, and restores the folder (with that id).
    expect(ports.trash.peek(DRIVE, row.id)).toMatchObject({ id: row.id, state: 'trashed', files: row.files, folderId: row.folderId });
    expect(ports.trash.peek(DRIVE, row.id)?.restoring).toBeUndefined();
    expect(checkQuiet()).toEqual([]);
    const again = (await acceptRestore(deps(), DRIVE, row.id, {}, BIG)) as { done: true; node: FolderNode };
    expect(again.node).toMatchObject({ kind: 'folder', path: '/r', id: row.folderId });
    expect(rows()).toEqual([]);
    expect(checkQuiet()).toEqual([]);
  });

  // A retry of a restore (the same Idempotency-Key: `attempt`) after a failure that came after its claim: the
  // key was freed by the 5xx, so the retry runs anew; it answers for the first try's job, never 409 or 404.
  it.each([
    ['before it made the folder', BIG, () => true, 'restored in the retry (200)'],
    ['before it made the folder, no budget', 0, () => true, 'a job (202)'],
    ['after it made the folder, in its first step', BIG, (call: { port: string; method: string }) => call.port === 'trash' && call.method === 'members', 'a job (202)'],
  ])('answers a retry of a restore that failed after its claim (%s): %s, then restores whole', async (_, budget, diesAt, answer) => {
    await makeTree();
    const before = snapshot();
    const id = await trashTree();
    await restoreDyingAfterClaim(id, { attempt: 'key-1' }, diesAt);
    const first = ports.trash.peek(DRIVE, id)!.restoring!;
    // Another attempt (another key, or none) is a second restore: refused while the first holds the row.
    await expect(acceptRestore(deps(), DRIVE, id, { attempt: 'key-2' }, BIG)).rejects.toThrow(`trash item ${id} (/r) is being restored`);
    await expect(acceptRestore(deps(), DRIVE, id, {}, BIG)).rejects.toThrow(`trash item ${id} (/r) is being restored`);
    const retry = await acceptRestore(deps(), DRIVE, id, { attempt: 'key-1' }, budget);
    if (answer === 'a job (202)') {
      expect(retry).toMatchObject({ done: false, job: { id: first, kind: 'restore', status: 'running' } });
      await drainJobs();
    } else expect(retry).toEqual({ done: true, node: expect.objectContaining({ kind: 'folder', path: '/r' }) });
    expect(await ports.jobs.get(DRIVE, first)).toMatchObject({ status: 'done', ended: 'restored', files: 4 });
    expect(snapshot()).toEqual(before);
    expect(rows()).toEqual([]);
    expect(checkQuiet()).toEqual([]);
    // Once restored, the same retry again answers the restored folder (200); any other request, 404.
    expect(await acceptRestore(deps(), DRIVE, id, { attempt: 'key-1' }, BIG)).toEqual({ done: true, node: expect.objectContaining({ kind: 'folder', path: '/r' }) });
    await expect(acceptRestore(deps(), DRIVE, id, { attempt: 'key-2' }, BIG)).rejects.toThrow(`trash item ${id} does not exist`);
    await expect(acceptRestore(deps(), DRIVE, id, {}, BIG)).rejects.toThrow(`trash item ${id} does not exist`);
  });

  it('stops when a delete takes the destination meanwhile: what is left stays in the trash, restorable', async () => {
    await makeTree();
    const id = await trashTree();
    const outcome = await acceptRestore(deps(), DRIVE, id, {}, 0);
    expect(outcome.done).toBe(false);
    // No budget: the request made /r (with the folder's id) and restored nothing more; the job has not run yet.
    expect(ports.nodes.all(DRIVE).filter((node) => node.path.startsWith('/r'))).toMatchObject([{ kind: 'folder', path: '/r' }]);
    await acceptDelete(deps(), DRIVE, '/r', true, BIG);
    await drainJobs();
    const job = (outcome as { job: Job }).job;
    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'done' });
    expect(ports.nodes.all(DRIVE).filter((node) => node.path.startsWith('/r'))).toEqual([]);
    // Every file is in the trash: those restored in the delete's new row, the others still in the first row.
    const files = ports.trash.all(DRIVE).flatMap(({ members }) => members.filter((member) => member.file));
    expect(files).toHaveLength(4);
    expect(rows().find((row) => row.id === id)).toMatchObject({ files: 4, state: 'trashed' });
    expect(checkQuiet()).toEqual([]);
  });
});

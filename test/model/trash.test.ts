import { Readable } from 'node:stream';
import { deleteFiles } from '../../functions/core/delete-files';
import { acceptDelete } from '../../functions/core/delete-folder';
import { advanceJob } from '../../functions/core/jobs';
import { JOURNAL_SWEEP_AFTER_MS, sweepJournal } from '../../functions/core/journal';
import { acceptMove } from '../../functions/core/move';
import type { FileNode } from '../../functions/core/ports';
import { bytesState, trashState } from '../../functions/core/protocol/states';
import { purgeClaimed, purgeItem, sweepTrash } from '../../functions/core/purge';
import { restoreFile } from '../../functions/core/restore';
import { PURGE_LEASE_MS, type TrashPolicy, trashId } from '../../functions/core/trash';
import { uploadFiles } from '../../functions/core/upload';
import { type MemoryPorts, memoryPorts } from './memory-ports';

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

  it('makes ids that sort by time', () => {
    const ids = [trashId(1), trashId(2), trashId(1e12), trashId(2e12)];
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

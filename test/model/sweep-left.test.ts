import { Readable } from 'node:stream';
import { deleteFiles } from '../../functions/core/delete-files';
import { JOURNAL_SWEEP_AFTER_MS, putBackWithdrawn, sweepJournal } from '../../functions/core/journal';
import type { FileNode } from '../../functions/core/ports';
import { restoreFile } from '../../functions/core/restore';
import type { TrashPolicy } from '../../functions/core/trash';
import { uploadFiles } from '../../functions/core/upload';
import { type MemoryPorts, memoryPorts } from './memory-ports';

// Gap 12's `left` keys at the journal sweep, with the trash on (protocol/README.md, "The journal sweep"): what a
// withdrawn several-file writer replaced and found taken goes into the trash once, and only if it was a file
// clients saw whose bytes are still stored. Found by a review of the change that trashes them: a key the trash
// already held got a second row (a purge of one then loses the bytes the other restores), and a withdrawn
// writer's record, its bytes deleted by a walk, got a row with no bytes.

const DRIVE = 'd';
const OLD = '2026-01-01T00:00:00.000Z';
let ports: MemoryPorts;
let now: number;
let policy: TrashPolicy;
const deps = () => ({ ...ports, trashPolicy: policy });

beforeEach(() => {
  ports = memoryPorts();
  now = Date.now();
  policy = { days: 7, by: 'key_1', now: () => now };
});

async function bytesOf(file: Pick<FileNode, 'objectKey'>): Promise<string | undefined> {
  const opened = await ports.objects.open(file.objectKey);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

const rowsOf = (key: string) =>
  ports.trash
    .all(DRIVE)
    .map(({ row }) => row)
    .filter((row) => row.file?.objectKey === key);

/** A several-file writer's record at /f (its entry opened under `by`, due at `due`), written over what stands. */
async function writer(name: string, by: string, due = now): Promise<{ record: FileNode; entry: string; replaced?: FileNode }> {
  const [entry] = await ports.journal.open(DRIVE, [{ path: '/f', objectKey: `${DRIVE}/${name}` }], new Date(due), by);
  const record: FileNode = { kind: 'file', id: name, path: '/f', size: 1, contentType: 'text/plain', createdAt: OLD, objectKey: `${DRIVE}/${name}`, etag: name, pending: entry };
  await ports.objects.put(record.objectKey, Buffer.from(name), 'text/plain');
  const put = await ports.nodes.putFile(DRIVE, record);
  expect(put.ok).toBe(true);
  return { record, entry, replaced: put.ok ? put.replaced : undefined };
}

/**
 * P (stored, answered 200) at /f; X replaced it, T replaced X's record; X withdrew, found its record taken and
 * left P's bytes to its entry; T withdrew, put X's record back and walked: X's note put P back, naming X's entry.
 */
async function putBackUnderX(): Promise<{ p: FileNode; x: Awaited<ReturnType<typeof writer>> }> {
  const p = (await uploadFiles(deps(), DRIVE, [{ filename: 'x', data: Buffer.from('p') }], [{ path: '/f' }]))[0];
  const x = await writer('x', 'key_2');
  const t = await writer('t', 'key_3');
  await ports.journal.withdraw([x.entry], [p]);
  expect(await ports.nodes.restoreIfSame(DRIVE, '/f', x.record.id, p)).toBe(false);
  await ports.journal.leave([x.entry], [p]);
  await ports.journal.withdraw([t.entry], [x.record]);
  expect(await ports.nodes.restoreIfSame(DRIVE, '/f', t.record.id, x.record)).toBe(true);
  await putBackWithdrawn(ports, DRIVE, '/f', x.record);
  expect(await ports.nodes.get(DRIVE, '/f')).toMatchObject({ id: p.id, pending: x.entry });
  return { p, x };
}

describe("the journal sweep of a withdrawn writer's left bytes, with the trash on", () => {
  it('leaves a left key that a client has trashed since to its one row, which restores it', async () => {
    const { p } = await putBackUnderX();
    // A client deletes P, put back: the trash keeps it (a row, and a note on X's entry).
    await deleteFiles(deps(), DRIVE, ['/f']);
    expect(rowsOf(p.objectKey)).toHaveLength(1);

    await sweepJournal(deps(), new Date(now + 2 * JOURNAL_SWEEP_AFTER_MS));

    const rows = rowsOf(p.objectKey);
    expect(rows).toHaveLength(1);
    expect(await restoreFile(deps(), DRIVE, rows[0].id, { to: '/back' })).toMatchObject({ id: p.id });
    expect(await bytesOf(p)).toBe('p');
  });

  it("does not trash a withdrawn writer's record whose bytes the same sweep's walk deleted", async () => {
    // W wrote /f at an empty path, X replaced W's record, T replaced X's; all three withdraw.
    const w = await writer('w', 'key_4', now + 10 * 60_000);
    const x = await writer('x', 'key_2');
    expect(x.replaced).toMatchObject({ id: 'w' });
    const t = await writer('t', 'key_3');
    await ports.journal.withdraw([w.entry], [undefined]);
    await ports.journal.withdraw([x.entry], [x.replaced]);
    await ports.journal.leave([x.entry], [x.replaced]);
    // T puts X's record back and dies before asking X's note: X's sweep walks (X's record goes, W's comes back,
    // and W's note takes it: its bytes deleted).
    await ports.journal.withdraw([t.entry], [x.record]);
    expect(await ports.nodes.restoreIfSame(DRIVE, '/f', t.record.id, x.record)).toBe(true);

    expect(await sweepJournal(deps(), new Date(now + 6 * 60_000))).toBe(2);

    expect(await ports.nodes.get(DRIVE, '/f')).toBeUndefined();
    expect(await bytesOf(w.record)).toBeUndefined();
    expect(rowsOf(w.record.objectKey)).toEqual([]);
  });

  it("does not trash a withdrawn writer's record whose bytes another writer's walk deleted, its entry swept first", async () => {
    const w = await writer('w', 'key_4');
    const x = await writer('x', 'key_2', now + 10 * 60_000);
    const t = await writer('t', 'key_3', now + 10 * 60_000);
    await ports.journal.withdraw([w.entry], [undefined]);
    await ports.journal.withdraw([x.entry], [x.replaced]);
    await ports.journal.leave([x.entry], [x.replaced]);
    // T withdraws and walks: X's record back, then W's, which W's note takes (its bytes deleted by T).
    await ports.journal.withdraw([t.entry], [x.record]);
    expect(await ports.nodes.restoreIfSame(DRIVE, '/f', t.record.id, x.record)).toBe(true);
    const walked = await putBackWithdrawn(ports, DRIVE, '/f', x.record);
    expect(walked.freed).toEqual([x.record.objectKey, w.record.objectKey]);
    await ports.objects.deleteMany(walked.freed);

    expect(await sweepJournal(deps(), new Date(now + 6 * 60_000))).toBe(1);
    expect(await sweepJournal(deps(), new Date(now + 30 * 60_000))).toBe(2);

    expect(await bytesOf(w.record)).toBeUndefined();
    expect(rowsOf(w.record.objectKey)).toEqual([]);
  });

  it('writes one row for a left key when a sweep stopped before closing the entry runs again', async () => {
    const p = (await uploadFiles(deps(), DRIVE, [{ filename: 'x', data: Buffer.from('p') }], [{ path: '/f' }]))[0];
    const x = await writer('x', 'key_2');
    await ports.journal.withdraw([x.entry], [p]);
    await uploadFiles(deps(), DRIVE, [{ filename: 'y', data: Buffer.from('y') }], [{ path: '/f' }]);
    await ports.journal.leave([x.entry], [p]);
    // The first sweep stops after its rows, at the entry's close (a Lambda timeout).
    const close = ports.journal.close.bind(ports.journal);
    ports.journal.close = async () => {
      throw new Error('stopped');
    };
    await expect(sweepJournal(deps(), new Date(now + 2 * JOURNAL_SWEEP_AFTER_MS))).rejects.toThrow('stopped');
    ports.journal.close = close;

    expect(await sweepJournal(deps(), new Date(now + 2 * JOURNAL_SWEEP_AFTER_MS))).toBe(1);

    expect(rowsOf(p.objectKey)).toEqual([expect.objectContaining({ reason: 'replaced', deletedBy: 'key_2' })]);
    expect(await bytesOf(p)).toBe('p');
  });

  // A sweep that runs past its schedule's interval overlaps the next: both judge the entry before either
  // writes (a reserved concurrency of 1 would prevent it, but fails on accounts whose quota is 10).
  it('writes one row for a left key when two sweeps run at once', async () => {
    const p = (await uploadFiles(deps(), DRIVE, [{ filename: 'x', data: Buffer.from('p') }], [{ path: '/f' }]))[0];
    const x = await writer('x', 'key_2');
    await ports.journal.withdraw([x.entry], [p]);
    await uploadFiles(deps(), DRIVE, [{ filename: 'y', data: Buffer.from('y') }], [{ path: '/f' }]);
    await ports.journal.leave([x.entry], [p]);

    const due = new Date(now + 2 * JOURNAL_SWEEP_AFTER_MS);
    await Promise.all([sweepJournal(deps(), due), sweepJournal(deps(), due)]);

    expect(rowsOf(p.objectKey)).toEqual([expect.objectContaining({ reason: 'replaced', deletedBy: 'key_2' })]);
    expect(await bytesOf(p)).toBe('p');
  });
});

import { JOURNAL_SWEEP_AFTER_MS, sweepJournal } from '../../functions/core/journal';
import type { FileNode } from '../../functions/core/ports';
import { type MemoryPorts, memoryPorts } from './memory-ports';

// Review of gap 12's sweep (protocol/README.md, "The journal sweep"): a record still standing of an entry
// noted withdrawn goes, what it replaced back in its place. The walk that does it (`putBackWithdrawn`) starts
// from the record's `pending`; but a record put back by another writer's walk carries *that* writer's entry in
// `pending` (`back = { ...before, pending: current.pending }`), which may close first.

const DRIVE = 'd';
let ports: MemoryPorts;

beforeEach(() => {
  ports = memoryPorts();
});

const record = (id: string, pending?: string): FileNode => ({
  kind: 'file',
  id,
  path: '/f',
  size: 1,
  contentType: 'text/plain',
  createdAt: '2026-11-20T00:00:00.000Z',
  objectKey: `${DRIVE}/${id}`,
  etag: id,
  ...(pending ? { pending } : {}),
});

describe('the journal sweep of a withdrawn record put back under another entry', () => {
  it("puts back what the record's own writer replaced once the other writer's entry has closed", async () => {
    // P: a file an upload of one file stored (answered 200).
    const p = record('p');
    await ports.nodes.putFile(DRIVE, p);
    await ports.objects.put(p.objectKey, Buffer.from('p'), 'text/plain');
    // Two uploads of several files, Y opening its entry a second before X (so Y's sweep is due first); X wrote
    // /f over P, Y wrote over X's record, and an upload Z over Y's.
    const start = Date.now();
    const [y] = await ports.journal.open(DRIVE, [{ path: '/f', objectKey: `${DRIVE}/y` }], new Date(start));
    const [x] = await ports.journal.open(DRIVE, [{ path: '/f', objectKey: `${DRIVE}/x` }], new Date(start + 1000));
    const xRecord = record('x', x);
    await ports.objects.put(xRecord.objectKey, Buffer.from('x'), 'text/plain');
    // X withdrew: noted (it replaced P), found its record taken, and left P's bytes to its sweep.
    await ports.journal.withdraw([x], [p]);
    await ports.journal.leave([x], [p]);
    // Y withdrew: noted (it replaced X's record), found its record taken (Z's), left X's bytes.
    await ports.journal.withdraw([y], [xRecord]);
    await ports.journal.leave([y], [xRecord]);
    // Z withdrew: put Y's record back, read Y's note, put X's record back in its place naming Y's entry
    // (putBackWithdrawn's first hop, Y's bytes freed) and died before asking X's entry (a Lambda timeout).
    await ports.nodes.putFile(DRIVE, { ...xRecord, pending: y });

    // Act: a sweep when Y's entry is due, then sweeps once both are due.
    const closedFirst = await sweepJournal(ports, new Date(start + 500));
    await sweepJournal(ports, new Date(start + 2 * JOURNAL_SWEEP_AFTER_MS));
    await sweepJournal(ports, new Date(start + 3 * JOURNAL_SWEEP_AFTER_MS));

    // Assess: as the dead writer's walk would have left it: P back with its bytes, X's record and bytes gone,
    // both entries closed (an entry left open keeps the record at /f pending: no move takes it).
    expect(closedFirst).toBe(1);
    expect(await ports.nodes.get(DRIVE, '/f')).toMatchObject({ id: 'p', objectKey: p.objectKey });
    expect(ports.objects.objects.has(p.objectKey)).toBe(true);
    expect(ports.objects.objects.has(xRecord.objectKey)).toBe(false);
    expect(ports.journal.entries.size).toBe(0);
  });
});

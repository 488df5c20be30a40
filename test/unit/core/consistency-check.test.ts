import type { StoredNode, StoredObject } from '../../../functions/core/consistency';
import { type CheckCursor, type ConsistencySource, type CursorStore, type OrphanCandidates, type RepairMode, checkSlice, findingsCount } from '../../../functions/core/consistency-check';
import { NAMED_PER_KIND, logLine, metricsLine } from '../../../functions/core/consistency-report';
import type { DriveNode, FolderNode, NodeStore, ObjectStore } from '../../../functions/core/ports';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const OLD = new Date('2026-03-01T09:00:00.000Z');
const HOUR = 3_600_000;
/** A run one grace period (the tests' default) after NOW. */
const LATER = new Date(NOW.getTime() + HOUR);

const folder = (path: string, extra: Partial<FolderNode> = {}): DriveNode => ({ kind: 'folder', id: `f${path}`, path, createdAt: OLD.toISOString(), ...extra });
const file = (path: string, objectKey: string, size = 1): DriveNode => ({ kind: 'file', id: path, path, size, contentType: 'text/plain', createdAt: OLD.toISOString(), objectKey, etag: path });

/** A bucket and a table in memory, with hooks to change them between the first scan and the confirming reads. */
class Storage implements ConsistencySource, CursorStore, OrphanCandidates {
  objects = new Map<string, StoredObject>();
  nodes = new Map<string, StoredNode>();
  pending: string[] = [];
  cursor: CheckCursor | undefined;
  /** Orphan candidates between runs: object key → when first noted. */
  candidates = new Map<string, Date>();
  scans = 0;
  afterFirstScan: () => void = () => undefined;

  put(drive: string, node: DriveNode): this {
    this.nodes.set(`${drive}#${node.path}`, { drive, node });
    return this;
  }
  store(key: string, lastModified = OLD, size = 1): this {
    this.objects.set(key, { key, lastModified, size });
    return this;
  }
  async pendingKeys() {
    return this.pending;
  }
  async listObjects(after: string | undefined, limit: number) {
    const all = [...this.objects.values()].sort((a, b) => (a.key < b.key ? -1 : 1)).filter((o) => after === undefined || o.key > after);
    return { objects: all.slice(0, limit), done: all.length <= limit };
  }
  async scanNodes(keep: (entry: StoredNode) => boolean) {
    const kept = [...this.nodes.values()].filter(keep);
    if (this.scans++ === 0) this.afterFirstScan();
    return kept;
  }
  async headObject(key: string) {
    return this.objects.get(key);
  }
  async read() {
    return this.cursor;
  }
  async write(cursor: CheckCursor) {
    this.cursor = cursor;
  }
  async listCandidates() {
    return new Map(this.candidates);
  }
  async addCandidates(keys: readonly string[], at: Date) {
    for (const key of keys) this.candidates.set(key, at);
  }
  async removeCandidates(keys: readonly string[]) {
    for (const key of keys) this.candidates.delete(key);
  }
  /** The node store the confirming reads and the repair use. */
  nodeStore(): NodeStore {
    const get = async (drive: string, path: string) => this.nodes.get(`${drive}#${path}`)?.node;
    return {
      get,
      getMany: async (drive: string, paths: readonly string[]) => new Map(paths.flatMap((path) => (this.nodes.has(`${drive}#${path}`) ? [[path, this.nodes.get(`${drive}#${path}`)!.node]] : []))),
      createFolder: async (drive: string, created: FolderNode) => {
        this.put(drive, created);
        return created;
      },
    } as unknown as NodeStore;
  }
  /** Set: the bucket refuses deletes (an S3 outage, a policy without DeleteObject). */
  deletesFail = false;
  objectStore(): ObjectStore {
    return {
      deleteMany: async (keys: readonly string[]) => {
        if (this.deletesFail) throw new Error('AccessDenied');
        keys.forEach((key) => this.objects.delete(key));
      },
    } as unknown as ObjectStore;
  }
}

/** One run; `repair` is `off` unless given, so that what a run finds is what it reports. */
const run = (storage: Storage, options: { sliceObjects?: number; repair?: RepairMode; graceMs?: number; maxDeletions?: number; now?: Date } = {}) =>
  checkSlice(
    { source: storage, cursors: storage, candidates: storage, nodes: storage.nodeStore(), objects: storage.objectStore() },
    {
      sliceObjects: options.sliceObjects ?? 1000,
      deadline: Date.now() + 60_000,
      graceMs: options.graceMs ?? HOUR,
      repair: options.repair ?? 'off',
      maxDeletions: options.maxDeletions,
      now: options.now ?? NOW,
    },
  );

describe('Function: checkSlice', () => {
  let storage: Storage;

  beforeEach(() => {
    storage = new Storage();
  });

  it('finds a consistent drive clean, and ends its pass in one run when the bucket fits a slice', async () => {
    // Prepare
    storage.put('d', folder('/a')).put('d', file('/a/x', 'd/1')).store('d/1');

    // Act
    const report = await run(storage);

    // Assess
    expect(findingsCount(report.findings)).toBe(0);
    expect(report).toMatchObject({ objects: 1, nodes: 2, passDone: true });
    expect(storage.cursor).toEqual({ passes: 1 });
  });

  it('covers the key space in slices across runs, each object and file checked in the slice its key falls in', async () => {
    // Prepare: five objects, one an orphan (d/2), and a record whose object (d/6) is gone, past the last key.
    for (const key of ['d/1', 'd/2', 'd/3', 'd/4', 'd/5']) storage.store(key);
    for (const key of ['d/1', 'd/3', 'd/4', 'd/5', 'd/6']) storage.put('d', file(`/${key.slice(2)}`, key));

    // Act
    const reports = [await run(storage, { sliceObjects: 2 }), await run(storage, { sliceObjects: 2 }), await run(storage, { sliceObjects: 2 })];

    // Assess
    expect(reports.map((r) => [r.from, r.to, r.objects, r.passDone])).toEqual([
      [undefined, 'd/2', 2, false],
      ['d/2', 'd/4', 2, false],
      ['d/4', undefined, 1, true],
    ]);
    // Only the files of its slice are held, beside the folders (none here).
    expect(reports.map((r) => r.nodes)).toEqual([1, 2, 2]);
    expect(reports[0].findings.orphanedObjects.map((o) => o.key)).toEqual(['d/2']);
    expect(reports[2].findings.recordsWithoutObject.map((e) => e.node.path)).toEqual(['/6']);
    expect(reports.map((r) => findingsCount(r.findings))).toEqual([1, 0, 1]);
    expect(storage.cursor).toEqual({ passes: 1 });
  });

  it('counts an unreferenced object younger than the grace period, and neither reports nor deletes it', async () => {
    // Prepare
    storage.store('d/young', new Date(NOW.getTime() - 60_000)).store('d/pending');
    storage.pending = ['d/pending'];

    // Act
    const report = await run(storage, { repair: 'all' });

    // Assess
    expect(report.findings.orphanedObjects).toEqual([]);
    expect(report.collected).toEqual([]);
    expect(report.recentUnreferenced).toBe(1);
    expect(report.inFlight).toBe(1);
    expect([...storage.objects.keys()].sort()).toEqual(['d/pending', 'd/young']);
  });

  it('confirms each finding by reading again: a file moved during the scan is no orphan, bytes that came back are not missing', async () => {
    // Prepare: the first scan sees neither the moved file's old record nor its new one, nor d/2's object.
    storage.store('d/1');
    storage.put('d', file('/back', 'd/2'));
    storage.afterFirstScan = () => {
      storage.put('d', file('/moved-here', 'd/1'));
      storage.store('d/2');
    };

    // Act
    const report = await run(storage, { repair: 'all' });

    // Assess
    expect(findingsCount(report.findings)).toBe(0);
    expect(report.collected).toEqual([]);
    expect(storage.objects.has('d/1')).toBe(true);
  });

  it('tells a parent that is a file outside the slice from a missing one, and a record under a delete from a lost one', async () => {
    // Prepare: /plain's object sorts after the slice, so its record is not held; /gone's folder is missing.
    storage.store('d/1').store('d/9');
    storage.put('d', file('/plain', 'd/9')).put('d', file('/plain/under', 'd/1'));
    storage.put('d', file('/gone/child', 'd/0'));
    storage.put('d', folder('/dying', { deleting: 'recursive' })).put('d', file('/dying/x', 'd/00'));

    // Act
    const report = await run(storage, { sliceObjects: 1 });

    // Assess
    expect(report.findings.belowFiles.map((e) => e.node.path)).toEqual(['/plain/under']);
    expect(report.findings.missingParents).toEqual([{ drive: 'd', path: '/gone', children: ['/gone/child'] }]);
    expect(report.findings.recordsWithoutObject.map((e) => e.node.path)).toEqual(['/gone/child']);
    expect(report.findings.interruptedDeletes.map((e) => e.node.path)).toEqual(['/dying']);
  });

  it('repairs as asked: off reports, orphans (the default) deletes orphans past the grace as collected, all recreates parents too; never a record', async () => {
    // Prepare
    storage.store('d/orphan').store('d/1');
    storage.put('d', file('/lost/deep/x', 'd/1')).put('d', file('/nobytes', 'd/none'));

    // Act (and what each run left)
    const reported = await run(storage);
    const noted = await run(storage, { repair: 'orphans' });
    const collected = await run(storage, { repair: 'orphans', now: LATER });
    const leftByOrphans = { orphan: storage.objects.has('d/orphan'), lost: storage.nodes.has('d#/lost') };
    const repaired = await run(storage, { repair: 'all' });
    const after = await run(storage);

    // Assess: off, three findings (the orphan, the missing parent, the record without bytes), nothing changed.
    expect(reported.repaired).toBeUndefined();
    expect(findingsCount(reported.findings)).toBe(3);
    // orphans, first run: the orphan noted as a candidate, neither deleted nor a finding.
    expect(noted).toMatchObject({ awaiting: 1, collected: [], repaired: { deletedObjects: [] } });
    expect(noted.findings.orphanedObjects).toEqual([]);
    // orphans, a grace period later: the orphan deleted and reported apart, not a finding; the missing parent stays a finding.
    expect(collected.repaired).toEqual({ deletedObjects: ['d/orphan'], recreatedFolders: [], notRecreated: [] });
    expect(collected.collected.map((o) => o.key)).toEqual(['d/orphan']);
    expect(collected.findings.orphanedObjects).toEqual([]);
    expect(findingsCount(collected.findings)).toBe(2);
    expect(leftByOrphans).toEqual({ orphan: false, lost: false });
    expect(storage.candidates.size).toBe(0);
    // all: the parents made again (a repaired parent stays a finding of the run that found it).
    expect(repaired.repaired).toEqual({ deletedObjects: [], recreatedFolders: ['d:/lost/deep'], notRecreated: [] });
    expect(storage.nodes.has('d#/lost')).toBe(true);
    expect(after.findings.recordsWithoutObject.map((e) => e.node.path)).toEqual(['/nobytes']);
    expect(findingsCount(after.findings)).toBe(1);
  });

  it('deletes no bytes a record names: a file moved during each of the two scans keeps its (old) object (review r1)', async () => {
    // Prepare: an established file, its object hours old (the grace period protects only new objects). A DynamoDB
    // Scan is no snapshot: a move (a Delete and a Put in one transaction, at another key) made while a scan is
    // between the new key and the old one is in neither. Two moves of it (a folder moved, then moved back, or a
    // sync tool's renames), one during each scan: both miss the record.
    storage.put('d', file('/a/x', 'd/x'));
    storage.store('d/x');
    const scan = storage.scanNodes.bind(storage);
    let scans = 0;
    storage.scanNodes = async (keep) => {
      const path = scans++ % 2 === 0 ? '/a/x' : '/b/x';
      const record = storage.nodes.get(`d#${path}`)!;
      storage.nodes.delete(`d#${path}`);
      const kept = await scan(keep);
      // The move lands mid-scan: after the scan passed the new key, before it reached the old one.
      storage.put('d', { ...record.node, path: path === '/a/x' ? '/b/x' : '/a/x' });
      return kept;
    };

    // Act: the scheduled check as deployed (repair `orphans`, the default); the moves stop, and the next runs
    // come a grace period apart.
    const first = await run(storage, { repair: 'orphans' });
    const afterFirst = storage.objects.has('d/x');
    storage.scanNodes = scan;
    await run(storage, { repair: 'orphans', now: LATER });
    await run(storage, { repair: 'orphans', now: new Date(LATER.getTime() + HOUR) });

    // Assess: both scans of the first run missed it, so it was only noted; the next run found it named and
    // dropped the candidate, so the one after did not delete it. The record is back at /a/x, its bytes there.
    expect(first.awaiting).toBe(1);
    expect(afterFirst).toBe(true);
    expect(storage.candidates.size).toBe(0);
    expect(storage.nodes.get('d#/a/x')?.node).toMatchObject({ objectKey: 'd/x' });
    expect(storage.objects.has('d/x')).toBe(true);
  });

  it('deletes no bytes a record names: a file replaced by an upload that then withdraws and puts it back (review r1)', async () => {
    // Prepare: /p holds an old file. An upload writes its record over it (commitFiles' writeRecord), sees a
    // move's mark above, and its undo puts the old record back (restoreIfSame): meanwhile no record, journal
    // entry or session names d/old, whose object is hours old. A slow undo (throttled retries) spans both scans.
    storage.put('d', file('/p', 'd/old'));
    storage.store('d/old');
    storage.store('d/new', NOW);
    const old = storage.nodes.get('d#/p')!;
    storage.put('d', { ...file('/p', 'd/new'), id: 'upload' });
    const scan = storage.scanNodes.bind(storage);
    let scans = 0;
    storage.scanNodes = async (keep) => {
      const kept = await scan(keep);
      if (++scans === 2) storage.put('d', old.node); // the undo lands after the second scan
      return kept;
    };

    // Act: this run and the next, a grace period later.
    const first = await run(storage, { repair: 'orphans' });
    const afterFirst = storage.objects.has('d/old');
    await run(storage, { repair: 'orphans', now: LATER });

    // Assess: the first run only noted d/old; the next found it named again and dropped it.
    expect(first.awaiting).toBe(1);
    expect(afterFirst).toBe(true);
    expect(storage.candidates.has('d/old')).toBe(false);
    expect(storage.nodes.get('d#/p')?.node).toMatchObject({ objectKey: 'd/old' });
    expect(storage.objects.has('d/old')).toBe(true);
  });

  it('keeps an orphan it could not delete a finding, and goes on', async () => {
    // Prepare: an orphan an earlier run noted, beside a file.
    storage.store('d/orphan').store('d/1').put('d', file('/x', 'd/1'));
    storage.deletesFail = true;
    await run(storage, { repair: 'orphans' });

    // Act
    const report = await run(storage, { repair: 'orphans', now: LATER });

    // Assess: the alarm's figure counts it; the log says why.
    expect(report.findings.orphanedObjects.map((o) => o.key)).toEqual(['d/orphan']);
    expect(report.collected).toEqual([]);
    expect(report.repaired).toMatchObject({ deletedObjects: [], deleteFailed: 'AccessDenied' });
    expect(findingsCount(report.findings)).toBe(1);
    expect(storage.candidates.has('d/orphan')).toBe(true);
    expect(storage.cursor).toEqual({ passes: 2 });
  });

  it('deletes an orphan only when an earlier run, at least the grace period before, confirmed it too', async () => {
    // Prepare
    storage.store('d/orphan').store('d/1').put('d', file('/x', 'd/1'));

    // Act: runs at NOW, half a grace period later, and a whole one later.
    const first = await run(storage, { repair: 'orphans' });
    const soon = await run(storage, { repair: 'orphans', now: new Date(NOW.getTime() + HOUR / 2) });
    const keptSoon = storage.objects.has('d/orphan');
    const later = await run(storage, { repair: 'orphans', now: LATER });

    // Assess: noted at NOW, waiting (no finding) until a grace period later, then deleted and forgotten.
    expect(storage.candidates.size).toBe(0);
    expect([first.awaiting, soon.awaiting, later.awaiting]).toEqual([1, 1, 0]);
    expect([first, soon].map((report) => findingsCount(report.findings))).toEqual([0, 0]);
    expect(keptSoon).toBe(true);
    expect(later.collected.map((o) => o.key)).toEqual(['d/orphan']);
    expect(storage.objects.has('d/orphan')).toBe(false);
  });

  it('forgets a candidate found named again: one unreferenced again later starts its wait over', async () => {
    // Prepare: noted as an orphan, then named by a record, then unreferenced again.
    storage.store('d/1').store('d/2').put('d', file('/x', 'd/1'));
    await run(storage, { repair: 'orphans' });
    storage.put('d', file('/y', 'd/2'));
    await run(storage, { repair: 'orphans', now: LATER });
    const namedAgain = storage.candidates.has('d/2');
    storage.nodes.delete('d#/y');

    // Act: a grace period after the record went.
    const report = await run(storage, { repair: 'orphans', now: new Date(LATER.getTime() + HOUR) });

    // Assess: noted anew, not deleted.
    expect(namedAgain).toBe(false);
    expect(report.awaiting).toBe(1);
    expect(storage.objects.has('d/2')).toBe(true);
    expect(storage.candidates.get('d/2')).toEqual(new Date(LATER.getTime() + HOUR));
  });

  it('deletes nothing when more orphans are due than one run may delete: they are findings, and the log says why', async () => {
    // Prepare: three noted orphans, a cap of two.
    storage.store('d/1').put('d', file('/x', 'd/1'));
    for (const key of ['d/a', 'd/b', 'd/c']) storage.store(key);
    await run(storage, { repair: 'orphans', maxDeletions: 2 });

    // Act
    const report = await run(storage, { repair: 'orphans', maxDeletions: 2, now: LATER });

    // Assess
    expect(report.withheld).toBe('3 orphans due, more than the 2 one run may delete: deleting none');
    expect(report.repaired?.deletedObjects).toEqual([]);
    expect(report.findings.orphanedObjects.map((o) => o.key)).toEqual(['d/a', 'd/b', 'd/c']);
    expect(['d/a', 'd/b', 'd/c'].every((key) => storage.objects.has(key) && storage.candidates.has(key))).toBe(true);
    expect(logLine(report, 1, 'orphans')).toMatchObject({ level: 'warn', findings: 3, withheld: report.withheld });
  });

  it('deletes nothing when the scan found no file record at all (an empty or restored table): the due orphans are findings', async () => {
    // Prepare: objects, no records (the table restored empty), noted by an earlier run.
    storage.store('d/a').store('d/b');
    await run(storage, { repair: 'orphans' });

    // Act
    const report = await run(storage, { repair: 'orphans', now: LATER });

    // Assess
    expect(report.withheld).toBe('the nodes table holds no file record while 2 objects past the grace period are due: deleting none');
    expect(report.findings.orphanedObjects.map((o) => o.key)).toEqual(['d/a', 'd/b']);
    expect([...storage.objects.keys()].sort()).toEqual(['d/a', 'd/b']);
  });
});

describe('Function: logLine and metricsLine', () => {
  it('names at most NAMED_PER_KIND of each kind and counts them all; the metrics are embedded metric format in namespace Drive', async () => {
    // Prepare
    const storage = new Storage();
    for (let i = 0; i < NAMED_PER_KIND + 5; i++) storage.store(`d/orphan-${String(i).padStart(3, '0')}`);
    const report = await run(storage);

    // Act
    const line = logLine(report, 12, 'off');
    const metrics = metricsLine(report, 12, 'the-bucket', NOW);

    // Assess
    expect(line).toMatchObject({ level: 'warn', findings: NAMED_PER_KIND + 5, counts: { orphanedObjects: NAMED_PER_KIND + 5 }, collected: 0, repair: 'off' });
    expect(line.named.orphanedObjects).toHaveLength(NAMED_PER_KIND);
    expect(line.named.orphanedObjects[0]).toBe('d/orphan-000 (1 bytes, 2026-03-01T09:00:00.000Z)');
    expect(metrics._aws).toEqual({
      Timestamp: NOW.getTime(),
      CloudWatchMetrics: [{ Namespace: 'Drive', Dimensions: [['Bucket']], Metrics: expect.arrayContaining([{ Name: 'ConsistencyFindings', Unit: 'Count' }, { Name: 'OrphanedObjects', Unit: 'Count' }]) }],
    });
    expect(metrics).toMatchObject({ Bucket: 'the-bucket', ConsistencyCheckRuns: 1, ConsistencyFindings: NAMED_PER_KIND + 5, OrphanedObjects: NAMED_PER_KIND + 5, RecordsWithoutObject: 0 });
    // Every metric the directive names has its value on the line.
    for (const { Name } of metrics._aws.CloudWatchMetrics[0].Metrics) expect(typeof (metrics as unknown as Record<string, unknown>)[Name]).toBe('number');
  });
});

describe('Function: logLine and metricsLine, orphans collected', () => {
  it('counts deleted orphans as repaired, not as findings: the alarm stays quiet', async () => {
    // Prepare
    const storage = new Storage();
    storage.store('d/orphan').store('d/1').put('d', file('/x', 'd/1'));
    await run(storage, { repair: 'orphans' });
    const report = await run(storage, { repair: 'orphans', now: LATER });

    // Act
    const line = logLine(report, 12, 'orphans');
    const metrics = metricsLine(report, 12, 'the-bucket', NOW);

    // Assess
    expect(line).toMatchObject({ level: 'info', message: 'consistency check clean', findings: 0, collected: 1, collectedObjects: [`d/orphan (1 bytes, ${OLD.toISOString()})`], repair: 'orphans', repaired: { deletedObjects: 1 } });
    expect(metrics).toMatchObject({ ConsistencyFindings: 0, OrphanedObjects: 0, RepairedObjects: 1 });
  });
});

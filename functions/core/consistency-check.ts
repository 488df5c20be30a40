import { type Findings, type StoredNode, type StoredObject, check } from './consistency';
import { ensureFolders } from './folders';
import type { DriveNode, NodeStore, ObjectStore } from './ports';

/**
 * What the scheduled check repairs (`DRIVE_FSCK_REPAIR`, functions/config.ts): nothing (`off`), confirmed
 * orphaned objects past the grace period (`orphans`, the default), or those and missing parent folders (`all`,
 * set as `true`).
 */
export type RepairMode = 'off' | 'orphans' | 'all';

/** Where the scheduled check stands in its pass over the bucket: the last object key of the slice it checked. */
export interface CheckCursor {
  /** Objects after this key are next; undefined starts a new pass at the first key. */
  after?: string;
  /** Passes over the whole bucket finished so far. */
  passes: number;
}

/** What the scheduled check reads of the bucket and the tables. */
export interface ConsistencySource {
  /** Object keys of uploads in flight or interrupted, as open sessions and the upload journal name them. */
  pendingKeys(): Promise<string[]>;
  /** Objects after `after` in key order, page by page, until `limit` objects or `deadline` (epoch ms); `done` once the listing reached the last key. */
  listObjects(after: string | undefined, limit: number, deadline: number): Promise<{ objects: StoredObject[]; done: boolean }>;
  /** Every node of the table, each offered to `keep`: the kept ones. Throws past `deadline` rather than answer from part of the table. */
  scanNodes(keep: (entry: StoredNode) => boolean, deadline: number): Promise<StoredNode[]>;
  /** The object under `key` now, or undefined. */
  headObject(key: string): Promise<StoredObject | undefined>;
}

/** Where the cursor lives between runs. */
export interface CursorStore {
  read(): Promise<CheckCursor | undefined>;
  write(cursor: CheckCursor): Promise<void>;
}

export interface SliceOptions {
  /** The most objects one run lists: what it holds in memory, beside every folder record. */
  sliceObjects: number;
  /** Epoch ms by which the run must be done (the function's timeout less a margin). */
  deadline: number;
  /**
   * An unreferenced object younger than this may be an upload in flight (a one-file upload stores its bytes
   * before its record, and notes them nowhere): counted, never a finding, never deleted. Far above the upload
   * function's timeout.
   */
  graceMs: number;
  /** `orphans`: deletes confirmed orphans past the grace period; `all`: recreates missing parents too; `off`: reports only. */
  repair: RepairMode;
  now?: Date;
}

/** What one run found in its slice, and what it repaired. */
export interface SliceReport {
  /** The slice's key range: after `from` (or from the first key) up to and with `to` (or the last key). */
  from?: string;
  to?: string;
  objects: number;
  nodes: number;
  /** What is wrong and stays so after the run's repair: the figure the alarm watches. */
  findings: Omit<Findings, 'inFlight'>;
  /**
   * Confirmed orphans older than the grace period that the run deleted (repair `orphans` or `all`): what a
   * killed upload leaves, repaired, so not findings. One the delete failed for stays a finding.
   */
  collected: StoredObject[];
  /** Unreferenced objects younger than the grace period: an upload may yet record them. */
  recentUnreferenced: number;
  inFlight: number;
  repaired?: { deletedObjects: string[]; deleteFailed?: string; recreatedFolders: string[]; notRecreated: { folder: string; reason: string }[] };
  /** The pass over the bucket ended with this slice. */
  passDone: boolean;
}

/** The number of problems in `findings`, the figure the alarm watches. */
export function findingsCount(findings: SliceReport['findings']): number {
  return Object.values(findings).reduce((sum, list) => sum + list.length, 0);
}

/**
 * Checks one slice of the bucket's key space against the records, and moves the cursor past it.
 *
 * The slice is the next `sliceObjects` keys of the listing after the cursor. Records are read by one full
 * scan that keeps every folder (for the structure) and only the files whose object key falls in the slice,
 * so memory is bounded by the slice and the folders, and over a pass every object and every file is checked
 * once. Each finding is confirmed before it counts: a record without bytes by reading both again, an
 * unreferenced object by a second scan (a file moved during the first one is in neither of its partitions),
 * a missing parent by reading it. Repair (on by default, `orphans`) deletes only confirmed unreferenced objects
 * older than the grace period, which are then reported as `collected`, not as findings; with `all` it also
 * recreates missing parents; it deletes no record.
 */
export async function checkSlice(
  deps: { source: ConsistencySource; cursors: CursorStore; nodes: NodeStore; objects: ObjectStore },
  options: SliceOptions,
): Promise<SliceReport> {
  const now = options.now ?? new Date();
  const cursor = (await deps.cursors.read()) ?? { passes: 0 };
  // Sessions and journal first: an upload that records its object after this read is found named here.
  const pending = await deps.source.pendingKeys();
  const started = Date.now();
  // The listing may take up to half of what is left; the scan (and confirmation) has the rest.
  const listDeadline = started + (options.deadline - started) / 2;
  const { objects, done } = await deps.source.listObjects(cursor.after, options.sliceObjects, listDeadline);
  const from = cursor.after;
  const to = done ? undefined : objects.at(-1)?.key;
  const inSlice = (key: string) => (from === undefined || key > from) && (to === undefined || key <= to);
  const nodes = await deps.source.scanNodes(({ node }) => node.kind === 'folder' || inSlice(node.objectKey), options.deadline);

  const raw = check(nodes, objects, pending);
  const cutoff = now.getTime() - options.graceMs;
  const unreferenced = raw.orphanedObjects.filter((object) => object.lastModified.getTime() < cutoff);
  const findings: SliceReport['findings'] = {
    recordsWithoutObject: await confirmMissingObjects(deps, raw.recordsWithoutObject),
    recordsNotMatchingObject: raw.recordsNotMatchingObject,
    orphanedObjects: await confirmOrphans(deps.source, unreferenced, options.deadline),
    ...(await confirmParents(deps.nodes, raw.missingParents, raw.belowFiles)),
    interruptedDeletes: raw.interruptedDeletes,
  };

  const report: SliceReport = {
    from,
    to,
    objects: objects.length,
    nodes: nodes.length,
    findings,
    collected: [],
    recentUnreferenced: raw.orphanedObjects.length - unreferenced.length,
    inFlight: raw.inFlight.length,
    passDone: done,
  };
  if (options.repair !== 'off') {
    report.repaired = await repair(deps, findings, now, options.repair);
    // Deleted orphans are repaired, not findings: the alarm is for what the check could not repair.
    const deleted = new Set(report.repaired.deletedObjects);
    report.collected = findings.orphanedObjects.filter((object) => deleted.has(object.key));
    findings.orphanedObjects = findings.orphanedObjects.filter((object) => !deleted.has(object.key));
  }
  await deps.cursors.write(done ? { passes: cursor.passes + 1 } : { after: to, passes: cursor.passes });
  return report;
}

/** Records whose object is still missing, and which still point to it, when read again one by one. */
async function confirmMissingObjects(deps: { source: ConsistencySource; nodes: NodeStore }, candidates: StoredNode[]): Promise<StoredNode[]> {
  const confirmed: StoredNode[] = [];
  for (const entry of candidates) {
    if (entry.node.kind !== 'file') continue;
    const record = await deps.nodes.get(entry.drive, entry.node.path);
    if (record?.kind !== 'file' || record.objectKey !== entry.node.objectKey) continue; // replaced or removed since
    if (await deps.source.headObject(record.objectKey)) continue;
    confirmed.push({ drive: entry.drive, node: record });
  }
  return confirmed;
}

/** Unreferenced objects that a second scan finds unreferenced too, and that are still there. */
async function confirmOrphans(source: ConsistencySource, candidates: StoredObject[], deadline: number): Promise<StoredObject[]> {
  if (candidates.length === 0) return [];
  const keys = new Set(candidates.map((object) => object.key));
  const referenced = new Set((await source.scanNodes(({ node }) => node.kind === 'file' && keys.has(node.objectKey), deadline)).map(({ node }) => (node as { objectKey: string }).objectKey));
  return candidates.filter((object) => !referenced.has(object.key));
}

/**
 * Missing parents read again: a parent that is a file makes its children nodes below a file (the scan kept
 * only the slice's files), one that is a folder now was made since the scan.
 */
async function confirmParents(
  nodes: NodeStore,
  missing: Findings['missingParents'],
  belowFiles: StoredNode[],
): Promise<Pick<Findings, 'missingParents' | 'belowFiles'>> {
  const stillMissing: Findings['missingParents'] = [];
  const below = [...belowFiles];
  for (const parent of missing) {
    const found: DriveNode | undefined = await nodes.get(parent.drive, parent.path);
    if (!found) stillMissing.push(parent);
    else if (found.kind === 'file') {
      const children = await nodes.getMany(parent.drive, parent.children);
      for (const node of children.values()) below.push({ drive: parent.drive, node });
    }
  }
  return { missingParents: stillMissing, belowFiles: below };
}

/**
 * What `npm run fsck -- --repair` does that is safe unattended: deletes confirmed orphans past the grace period
 * (a failed delete leaves them findings, and the run goes on), and with `all`, recreates missing parents.
 */
async function repair(
  deps: { nodes: NodeStore; objects: ObjectStore },
  findings: SliceReport['findings'],
  now: Date,
  mode: Exclude<RepairMode, 'off'>,
): Promise<NonNullable<SliceReport['repaired']>> {
  const orphans = findings.orphanedObjects.map((object) => object.key);
  let deletedObjects: string[] = [];
  let deleteFailed: string | undefined;
  try {
    if (orphans.length > 0) await deps.objects.deleteMany(orphans);
    deletedObjects = orphans;
  } catch (error) {
    deleteFailed = (error as Error).message;
  }
  const recreatedFolders: string[] = [];
  const notRecreated: { folder: string; reason: string }[] = [];
  for (const { drive, path } of mode === 'all' ? findings.missingParents : []) {
    try {
      await ensureFolders(deps.nodes, drive, [path], now.toISOString());
      recreatedFolders.push(`${drive}:${path}`);
    } catch (error) {
      // A file holds the path or a delete took it: for a person to judge, as fsck leaves it.
      notRecreated.push({ folder: `${drive}:${path}`, reason: (error as Error).message });
    }
  }
  return { deletedObjects, ...(deleteFailed === undefined ? {} : { deleteFailed }), recreatedFolders, notRecreated };
}

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

/**
 * Orphan candidates between runs: objects a run confirmed unreferenced (both scans), kept so that a later run
 * deletes one only if it confirms it again at least the grace period after it was first noted. A DynamoDB Scan
 * is no snapshot, so one run's two scans can both miss a record that moves; a deletion needs two runs' scans
 * (four in all) to miss it, hours apart.
 */
export interface OrphanCandidates {
  /** Every noted candidate: its object key, and when a run first confirmed it unreferenced. */
  listCandidates(): Promise<Map<string, Date>>;
  /** Notes `keys` as confirmed unreferenced at `at`. */
  addCandidates(keys: readonly string[], at: Date): Promise<void>;
  /** Forgets `keys`: named again, gone, or deleted. */
  removeCandidates(keys: readonly string[]): Promise<void>;
}

/**
 * The most orphans one run deletes. A killed upload leaves one object; more due at once than this means
 * something larger is wrong (a restored or misconfigured nodes table), so the run deletes none and reports
 * them all as findings. docs/consistency-check.md, "Brakes".
 */
export const MAX_DELETIONS_PER_RUN = 1000;

/**
 * The least grace period a deleting check may have (stack and handler refuse less, the local host aside): far
 * above the upload functions' timeouts, and the least time between a candidate's two confirmations.
 */
export const MIN_DELETING_GRACE_MINUTES = 15;

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
  /**
   * `orphans`: deletes orphans past the grace period that an earlier run, at least the grace period ago, confirmed
   * too; `all`: recreates missing parents too; `off`: reports only.
   */
  repair: RepairMode;
  /** The most orphans one run deletes; more due than this and it deletes none. @default MAX_DELETIONS_PER_RUN */
  maxDeletions?: number;
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
  /**
   * Confirmed orphans past the grace period that wait for a later run's confirmation before they are deleted
   * (repair on): noted by this run, or by one less than the grace period ago. Neither findings nor deleted.
   */
  awaiting: number;
  /** Set when a brake stopped all deletions of this run: why. The due orphans are then findings. */
  withheld?: string;
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
 * older than the grace period that an earlier run noted as confirmed too, at least the grace period before
 * (`OrphanCandidates`), at most `maxDeletions` of them and none if there are more, or if the scan saw no file
 * record at all (brakes); deleted ones are reported as `collected`, not as findings. With `all` it also
 * recreates missing parents; it deletes no record.
 */
export async function checkSlice(
  deps: { source: ConsistencySource; cursors: CursorStore; candidates: OrphanCandidates; nodes: NodeStore; objects: ObjectStore },
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
  let filesSeen = 0;
  const nodes = await deps.source.scanNodes(({ node }) => {
    if (node.kind === 'file') filesSeen++;
    return node.kind === 'folder' || inSlice(node.objectKey);
  }, options.deadline);

  const raw = check(nodes, objects, pending, now);
  const cutoff = now.getTime() - options.graceMs;
  const unreferenced = raw.orphanedObjects.filter((object) => object.lastModified.getTime() < cutoff);
  const findings: SliceReport['findings'] = {
    recordsWithoutObject: await confirmMissingObjects(deps, raw.recordsWithoutObject),
    recordsNotMatchingObject: raw.recordsNotMatchingObject,
    orphanedObjects: await confirmOrphans(deps.source, unreferenced, options.deadline),
    ...(await confirmParents(deps.nodes, raw.missingParents, raw.belowFiles)),
    interruptedDeletes: raw.interruptedDeletes,
    trashWithoutObject: await confirmMissingTrash(deps.source, raw.trashWithoutObject),
    trashOverdue: raw.trashOverdue,
  };

  const report: SliceReport = {
    from,
    to,
    objects: objects.length,
    nodes: nodes.length,
    findings,
    collected: [],
    recentUnreferenced: raw.orphanedObjects.length - unreferenced.length,
    awaiting: 0,
    inFlight: raw.inFlight.length,
    passDone: done,
  };
  if (options.repair !== 'off') {
    // Time-separated confirmation: an orphan is due only if an earlier run noted it at least the grace period ago.
    const noted = await deps.candidates.listCandidates();
    const confirmed = findings.orphanedObjects;
    const confirmedKeys = new Set(confirmed.map((object) => object.key));
    const due = confirmed.filter((object) => (noted.get(object.key)?.getTime() ?? Number.POSITIVE_INFINITY) <= cutoff);
    const fresh = confirmed.filter((object) => !noted.has(object.key));
    // Candidates of this slice not confirmed now: named again (or young, or gone), so a later sighting starts over.
    const dropped = [...noted.keys()].filter((key) => inSlice(key) && !confirmedKeys.has(key));
    const maxDeletions = options.maxDeletions ?? MAX_DELETIONS_PER_RUN;
    if (due.length > maxDeletions) report.withheld = `${due.length} orphans due, more than the ${maxDeletions} one run may delete: deleting none`;
    else if (due.length > 0 && filesSeen === 0) report.withheld = `the nodes table holds no file record while ${due.length} objects past the grace period are due: deleting none`;
    report.repaired = await repair(deps, { ...findings, orphanedObjects: report.withheld === undefined ? due : [] }, now, options.repair);
    // Deleted orphans are repaired, not findings: the alarm is for what the check could not repair. Orphans
    // waiting for their second confirmation are neither; withheld ones stay findings.
    const deleted = new Set(report.repaired.deletedObjects);
    const dueKeys = new Set(due.map((object) => object.key));
    report.collected = confirmed.filter((object) => deleted.has(object.key));
    findings.orphanedObjects = confirmed.filter((object) => dueKeys.has(object.key) && !deleted.has(object.key));
    report.awaiting = confirmed.length - due.length;
    await deps.candidates.removeCandidates([...dropped, ...deleted]);
    await deps.candidates.addCandidates(
      fresh.map((object) => object.key),
      now,
    );
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

/** Trash items whose object a HEAD finds missing too (one trashed after the listing named bytes stored before it). */
async function confirmMissingTrash(source: ConsistencySource, candidates: StoredNode[]): Promise<StoredNode[]> {
  const confirmed: StoredNode[] = [];
  for (const entry of candidates) if (entry.node.kind === 'file' && !(await source.headObject(entry.node.objectKey))) confirmed.push(entry);
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

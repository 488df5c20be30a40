import { ROOT, ancestorsOf, parentOf } from './paths';
import type { DriveNode, FileNode } from './ports';

/** A node of some drive, as fsck reads the table. */
export interface StoredNode {
  drive: string;
  node: DriveNode;
  /**
   * Set for a trash item, which is no node (protocol/README.md, "Trash"): a file's row or a member (`node` its
   * record, at the path it was taken from), or a folder's row (`node` the folder). Its key is owned; it takes
   * no part in the tree's checks.
   */
  trash?: { row: string; purgeAt?: string; purging?: boolean; member?: string };
}

/** An object in the bucket: its size, and its ETag (unquoted) where the listing gives one. */
export interface StoredObject {
  key: string;
  lastModified: Date;
  size: number;
  etag?: string;
}

export interface Findings {
  /** File records whose bytes are missing: the file cannot be downloaded. */
  recordsWithoutObject: StoredNode[];
  /** File records whose object has another size or content hash (changed behind Drive's back): downloads would be cut or wrong. */
  recordsNotMatchingObject: { drive: string; node: FileNode; object: StoredObject }[];
  /** Objects no record points to: space billed for nothing. */
  orphanedObjects: StoredObject[];
  /** Nodes whose parent folder has no record (the root always exists). */
  missingParents: { drive: string; path: string; children: string[] }[];
  /** Nodes whose parent is a file. */
  belowFiles: StoredNode[];
  /** Objects of uploads in flight or interrupted (named by a session or the journal): not orphans; the sweep deletes what no record claims. */
  inFlight: StoredObject[];
  /** Folders a delete took and did not finish (the topmost of each tree): the same delete again, or --repair, finishes it. */
  interruptedDeletes: StoredNode[];
  /** Trash items (rows and members, not under a row a purge holds) whose object is missing: they cannot be restored. */
  trashWithoutObject: StoredNode[];
  /** Trash rows more than a day past their `purgeAt`: the sweep is not purging. */
  trashOverdue: StoredNode[];
}

/** How long past its `purgeAt` a trash row may stand before fsck reports it: the sweep may lag by a day of outages. */
export const TRASH_OVERDUE_MS = 86_400_000;

/**
 * Compares the records of every drive with the objects of the bucket. Objects that open large-upload
 * sessions or the upload journal name (`pending`) are not orphans: an upload in flight stores its bytes
 * before its record, and the sweep deletes those an interrupted one left.
 */
export function check(scanned: readonly StoredNode[], objects: readonly StoredObject[], pending: readonly string[] = [], now = new Date()): Findings {
  const nodes = scanned.filter((entry) => entry.trash === undefined);
  const trashed = scanned.filter((entry) => entry.trash !== undefined);
  const byPath = new Map<string, DriveNode>();
  const referenced = new Set<string>();
  for (const { node } of trashed) if (node.kind === 'file') referenced.add(node.objectKey);
  const purgingRows = new Set(trashed.flatMap(({ drive, trash }) => (trash?.purging && trash.member === undefined ? [`${drive}#${trash.row}`] : [])));
  for (const { drive, node } of nodes) {
    byPath.set(`${drive}#${node.path}`, node);
    if (node.kind === 'file') referenced.add(node.objectKey);
  }
  const byKey = new Map(objects.map((object) => [object.key, object]));
  const pendingKeys = new Set(pending);

  const missing = new Map<string, { drive: string; path: string; children: string[] }>();
  const belowFiles: StoredNode[] = [];
  for (const entry of nodes) {
    const parent = parentOf(entry.node.path);
    if (parent === ROOT) continue;
    const holder = byPath.get(`${entry.drive}#${parent}`);
    if (holder?.kind === 'file') belowFiles.push(entry);
    if (!holder) {
      const id = `${entry.drive}#${parent}`;
      const found = missing.get(id) ?? { drive: entry.drive, path: parent, children: [] };
      found.children.push(entry.node.path);
      missing.set(id, found);
    }
  }
  // A delete removes bytes before records, so below a folder it took, records without bytes are its progress.
  const marked = nodes.filter(({ node }) => node.kind === 'folder' && node.deleting !== undefined);
  const markedPaths = new Set(marked.map(({ drive, node }) => `${drive}#${node.path}`));
  const underMark = ({ drive, node }: StoredNode) => ancestorsOf(node.path).some((folder) => markedPaths.has(`${drive}#${folder}`));
  return {
    recordsWithoutObject: nodes.filter((entry) => entry.node.kind === 'file' && !byKey.has(entry.node.objectKey) && !underMark(entry)),
    recordsNotMatchingObject: nodes.flatMap(({ drive, node }) => {
      const object = node.kind === 'file' ? byKey.get(node.objectKey) : undefined;
      if (node.kind !== 'file' || !object) return [];
      // Records from before content hashes carry their id as an ETag, which no object's ETag matches; and an
      // ETag of parts (`<md5>-<n>`) is compared only with another (the embedded S3 lists a plain MD5 for those).
      const comparable = object.etag !== undefined && node.etag !== node.id && object.etag.includes('-') === node.etag.includes('-');
      const etagDiffers = comparable && object.etag !== node.etag;
      return object.size !== node.size || etagDiffers ? [{ drive, node, object }] : [];
    }),
    orphanedObjects: objects.filter((object) => !referenced.has(object.key) && !pendingKeys.has(object.key)),
    inFlight: objects.filter((object) => !referenced.has(object.key) && pendingKeys.has(object.key)),
    missingParents: [...missing.values()],
    belowFiles,
    interruptedDeletes: marked.filter((entry) => !underMark(entry)),
    trashWithoutObject: trashed.filter(({ drive, node, trash }) => node.kind === 'file' && !byKey.has(node.objectKey) && !trash?.purging && !purgingRows.has(`${drive}#${trash?.row}`)),
    trashOverdue: trashed.filter(({ trash }) => trash?.member === undefined && trash?.purgeAt !== undefined && Date.parse(trash.purgeAt) + TRASH_OVERDUE_MS < now.getTime()),
  };
}

/** Whether `findings` hold any problem (uploads in flight are none). */
export function isClean(findings: Findings): boolean {
  const { inFlight: _inFlight, ...problems } = findings;
  return Object.values(problems).every((list) => list.length === 0);
}

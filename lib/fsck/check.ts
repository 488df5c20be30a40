import { parentOf } from '../../functions/core/paths';
import type { DriveNode } from '../../functions/core/ports';
import { ROOT } from '../../functions/core/paths';

/** A node of some drive, as fsck reads the table. */
export interface StoredNode {
  drive: string;
  node: DriveNode;
}

/** An object in the bucket. */
export interface StoredObject {
  key: string;
  lastModified: Date;
}

export interface Findings {
  /** File records whose bytes are missing: the file cannot be downloaded. */
  recordsWithoutObject: StoredNode[];
  /** Objects no record points to: space billed for nothing. */
  orphanedObjects: StoredObject[];
  /** Nodes whose parent folder has no record (the root always exists). */
  missingParents: { drive: string; path: string; children: string[] }[];
  /** Nodes whose parent is a file. */
  belowFiles: StoredNode[];
}

/**
 * Compares the records of every drive with the objects of the bucket. Objects that open large-upload
 * sessions name (`pending`) are not orphans: a completion may have assembled one and not yet recorded it.
 */
export function check(nodes: readonly StoredNode[], objects: readonly StoredObject[], pending: readonly string[] = []): Findings {
  const byPath = new Map<string, DriveNode>();
  const referenced = new Set<string>();
  for (const { drive, node } of nodes) {
    byPath.set(`${drive}#${node.path}`, node);
    if (node.kind === 'file') referenced.add(node.objectKey);
  }
  const keys = new Set(objects.map((object) => object.key));
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
  return {
    recordsWithoutObject: nodes.filter(({ node }) => node.kind === 'file' && !keys.has(node.objectKey)),
    orphanedObjects: objects.filter((object) => !referenced.has(object.key) && !pendingKeys.has(object.key)),
    missingParents: [...missing.values()],
    belowFiles,
  };
}

/** Whether `findings` hold any problem. */
export function isClean(findings: Findings): boolean {
  return Object.values(findings).every((list) => list.length === 0);
}

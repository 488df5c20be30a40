import { randomUUID } from 'node:crypto';
import { conflict } from './errors';
import type { DriveNode, FolderNode, NodeStore } from './ports';

/**
 * Creates each folder of `missing` (listed shallowest first) unless it appeared meanwhile.
 * Throws `conflict` if a file holds one of the paths.
 */
export async function createFolders(nodes: NodeStore, drive: string, missing: readonly string[], now: string): Promise<FolderNode[]> {
  const created: FolderNode[] = [];
  for (const path of missing) {
    const folder: FolderNode = { kind: 'folder', id: randomUUID(), path, createdAt: now };
    const held = await nodes.createFolder(drive, folder);
    if (held.kind !== 'folder') throw conflict(`${path} is a file, so it cannot be a folder`);
    created.push(held);
  }
  return created;
}

/** Throws `conflict` if any of `paths` is held by a file in `found`. */
export function assertNoFileAmong(found: Map<string, DriveNode>, paths: readonly string[], purpose: string): void {
  for (const path of paths) {
    if (found.get(path)?.kind === 'file') throw conflict(`${path} is a file, so ${purpose}`);
  }
}

import { conflict, invalid } from './errors';
import { assertNoFileAmong, createFolders } from './folders';
import { ROOT, ancestorsOf } from './paths';
import type { FolderNode, NodeStore } from './ports';

/** Creates `path` and any missing parents, like `mkdir -p`; an existing folder is returned as it is. */
export async function createFolder(nodes: NodeStore, drive: string, path: string): Promise<FolderNode> {
  if (path === ROOT) throw invalid('path must name a folder below the root; "/" always exists');
  const chain = [...ancestorsOf(path), path];
  const found = await nodes.getMany(drive, chain);
  const existing = found.get(path);
  if (existing?.kind === 'folder') return existing;
  if (existing) throw conflict(`${path} is a file, so it cannot be a folder`);
  assertNoFileAmong(found, chain, 'no folder can be created below it');
  const created = await createFolders(nodes, drive, chain.filter((p) => !found.has(p)), new Date().toISOString());
  return created[created.length - 1];
}

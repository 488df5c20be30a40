import type { Readable } from 'node:stream';
import { notFound } from './errors';
import type { FileNode, NodeStore, ObjectStore } from './ports';

/** Opens the file at `path` for reading; throws `not_found` if there is no file there. */
export async function openFile(
  deps: { nodes: NodeStore; objects: ObjectStore },
  drive: string,
  path: string,
): Promise<{ file: FileNode; body: Readable }> {
  // An upload may replace the file between the two reads and delete the bytes we were pointed at:
  // the record then names new bytes, so one more read finds them.
  for (let attempt = 0; attempt < 2; attempt++) {
    const node = await deps.nodes.get(drive, path);
    if (node?.kind !== 'file') break;
    const object = await deps.objects.open(node.objectKey);
    if (object) return { file: node, body: object.body };
  }
  throw notFound(`no file at ${path}`);
}

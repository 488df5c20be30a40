import type { Readable } from 'node:stream';
import { notFound } from './errors';
import type { ByteRange, FileNode, NodeStore, ObjectStore } from './ports';
import { readVisible } from './visibility';

/** Which bytes of a file a read wants: none (its record answers, as for HEAD or 304), all, or one range. */
export type ByteSelection = 'none' | 'all' | ByteRange;

/**
 * Reads the record of the file at `path`, lets `plan` decide from it which bytes to read, and opens them;
 * throws `not_found` if there is no file there. Whatever `plan` throws is passed on.
 */
export async function openFile<P extends { bytes: ByteSelection }>(
  deps: { nodes: NodeStore; objects: ObjectStore },
  drive: string,
  path: string,
  plan: (file: FileNode) => P,
): Promise<{ file: FileNode; plan: P; body?: Readable }> {
  // An upload may replace the file between the two reads and delete the bytes we were pointed at:
  // the record then names new bytes (of another size, under another ETag), so one more read finds them and
  // the plan is made again from that record.
  for (let attempt = 0; attempt < 2; attempt++) {
    // The folders above are read once, in one batch with the first read of the record: a file below a folder being deleted is gone.
    const { node, seen } = attempt === 0 ? await readVisible(deps.nodes, drive, path) : { node: await deps.nodes.get(drive, path), seen: true };
    if (node?.kind !== 'file' || !seen) break;
    const chosen = plan(node);
    if (chosen.bytes === 'none') return { file: node, plan: chosen };
    const object = await deps.objects.open(node.objectKey, chosen.bytes === 'all' ? undefined : chosen.bytes);
    if (object) return { file: node, plan: chosen, body: object.body };
  }
  throw notFound(`no file at ${path}`);
}

/**
 * How long a direct download's URL lasts, in seconds. S3 checks it when a request starts, so a download
 * begun in time runs to its end; a client resuming later asks for a new URL.
 */
export const DIRECT_URL_SECONDS = 300;

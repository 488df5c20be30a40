import { randomUUID } from 'node:crypto';
import { conflict, invalid, notFound } from './errors';
import { JOURNAL_SWEEP_AFTER_MS, closeJournal } from './journal';
import { checkAbove } from './move';
import { ROOT, ancestorsOf } from './paths';
import type { FileNode, NodeStore, ObjectCopier, ObjectStore, UploadJournal } from './ports';
import { commitFiles } from './upload';
import { reachableIn } from './visibility';

export type CopyDeps = { nodes: NodeStore; objects: ObjectStore & ObjectCopier; journal: UploadJournal };

/**
 * `POST /drive/copy` of a file: a new file at `to` (a new id, the same bytes copied in S3, server-side),
 * made as an upload is (ports.ts): its object key noted in the journal, the bytes copied, the record
 * written with the folders above it. A file at `to` is replaced only with `overwrite`; a folder never.
 */
export async function copyFile(deps: CopyDeps, drive: string, from: string, to: string, overwrite: boolean): Promise<FileNode> {
  if (from === ROOT) throw invalid('from "/" is the root folder; copying a folder is not supported yet');
  if (to === ROOT) throw invalid('to "/" is the root folder, which always exists; name a path below it');
  if (from === to) throw invalid('from and to are the same path; a copy needs a path of its own');
  const read = await deps.nodes.getMany(drive, [from, to, ...ancestorsOf(from), ...ancestorsOf(to)]);
  const source = read.get(from);
  if (!source || !reachableIn(read, from) || (source.kind === 'folder' && source.deleting)) throw notFound(`no file or folder at ${from}`);
  if (source.kind === 'folder') throw invalid(`${from} is a folder; copying a folder is not supported yet: copy its files`);
  checkAbove(read, to);
  const target = read.get(to);
  if (target?.kind === 'folder') throw conflict(`${to} is a folder; a file cannot replace a folder`);
  if (target && !overwrite) throw conflict(`${to} is taken; pass "overwrite": true to replace the file there`);

  const id = randomUUID();
  const copy: FileNode = { ...source, id, path: to, createdAt: new Date().toISOString(), objectKey: `${drive}/${id}` };
  delete copy.pending;
  const [entry] = await deps.journal.open(drive, [copy], new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS));
  const etag = await deps.objects.copy(source.objectKey, copy.objectKey, source.size);
  if (etag === undefined) {
    await closeJournal(deps.journal, [entry]);
    throw notFound(`no file or folder at ${from}`);
  }
  // The copy's own hash: S3 computes it afresh (a copy in one piece of a file uploaded in parts has a plain MD5).
  const stored: FileNode = { ...copy, etag, pending: entry };
  await commitFiles(deps, drive, [stored], { replace: overwrite });
  await closeJournal(deps.journal, [entry]);
  return copy.etag === etag ? copy : { ...copy, etag };
}

import { conflict, notFound } from './errors';
import { beingDeleted, beingMoved, ensureFolders, recheckFolders, removeUnused } from './folders';
import { checkAbove } from './move';
import { ancestorsOf, parentOf } from './paths';
import type { FileNode, FileRecords, FolderNode, JobStore, NodeStore, TrashRow, TrashStore } from './ports';
import { type TrashPolicy, nowOf, restorable, stampOf } from './trash';

export type RestoreDeps = { nodes: NodeStore; records: FileRecords; trash: TrashStore; jobs?: JobStore; trashPolicy?: TrashPolicy };

/** The 404 of a trash item the caller may not see, that is gone, or past its `purgeAt`. */
export const noSuchItem = (id: string) => notFound(`trash item ${id} does not exist`);

/**
 * The row `id` as read (`row`), if a restore may begin on it: else the `404` of a row that is gone, that the
 * caller may not see or that is past its `purgeAt`, or the `409` of one being deleted, purged or restored.
 */
export function checkRestorable(row: TrashRow | undefined, id: string, now: Date, visible?: (row: TrashRow) => boolean): TrashRow {
  if (!row || (visible && !visible(row))) throw noSuchItem(id);
  // A purge's claim makes the row due now: it is being purged (409), not merely past its time (404).
  if (row.purging !== undefined) throw conflict(`trash item ${id} (${row.path}) is being purged`, [row.path]);
  if (!restorable(row, now)) throw noSuchItem(id);
  if (row.state === 'filling') throw conflict(`trash item ${id} (${row.path}) is still being deleted; try again once its delete is done`, [row.path]);
  if (row.restoring !== undefined) throw conflict(`trash item ${id} (${row.path}) is being restored`, [row.path]);
  return row;
}

/** Times a restore reads its destination again when a write there won the race, before it answers 409. */
const ATTEMPTS = 3;

/**
 * Restores the trashed file `id` of `drive` to `to` (where it was taken from, by default), as a writer stores a
 * file (protocol/README.md, "Writers" and "Trash"; docs/trash-design.md, "Restore"): reads the folders above
 * and the destination, makes missing parents top-down, writes the record and removes the row in one
 * transaction (`FileRecords.restore`: the parent standing unmarked, the destination empty or the file read
 * there when `overwrite`, which goes to the trash in turn), then reads the folders above again and withdraws
 * on a mark (the row back under its id, 409). The record is the trashed one: same id, key, ETag and size.
 * `visible`: whether the caller may see the row (its prefix); one it may not is `404`, as one that is gone.
 */
export async function restoreFile(
  deps: RestoreDeps,
  drive: string,
  id: string,
  options: { to?: string; overwrite?: boolean; visible?: (row: TrashRow) => boolean },
  /** The row as the caller just read it (`acceptRestore`): the first attempt does not read it again. */
  given?: TrashRow,
): Promise<FileNode> {
  const { nodes, trash } = deps;
  for (let attempt = 1; ; attempt++) {
    const now = nowOf(deps.trashPolicy);
    const row = checkRestorable(attempt === 1 && given ? given : await trash.get(drive, id), id, now, options.visible);
    if (row.type !== 'file' || !row.file) throw conflict(`trash item ${id} (${row.path}) is a folder; folders are restored by a job`, [row.path]);
    const to = options.to ?? row.path;

    const read = await nodes.getMany(drive, [to, ...ancestorsOf(to)]);
    checkAbove(read, to);
    const there = read.get(to);
    if (there?.kind === 'folder') throw conflict(`${to} is a folder, so a file cannot be restored there`, [to]);
    if (there && options.overwrite !== true) throw conflict(`${to} is taken; pass "overwrite": true to replace the file there`, [to]);

    const { folders, created } = await ensureFolders(nodes, drive, [parentOf(to)], row.file.createdAt, [], { jobs: deps.jobs });
    const parent: FolderNode | undefined = folders.get(parentOf(to));
    const outcome = await deps.records.restore(drive, row, to, {
      parent,
      replacing: there,
      ...(there && deps.trashPolicy ? { stamp: stampOf(deps.trashPolicy, 'replaced') } : {}),
      now,
    });
    if (!outcome.restored) {
      await removeUnused(deps, drive, created);
      // The row went (another restore, or a purge) or was claimed: read again, it answers 404 or 409.
      if (attempt < ATTEMPTS || (outcome.changed === 'item' && attempt === ATTEMPTS)) continue;
      throw conflict(`${to} changed ${ATTEMPTS} times while the restore was being made; try again`, [to]);
    }

    // The read above after the write (step 5): a mark seen withdraws the restore, and the file goes back to
    // the trash under its own id, unless a later request took it (then that request explains the path).
    const { deleting, moving, missing, recursive } = await recheckFolders(nodes, drive, [parentOf(to)]);
    if (deleting.length > 0 || moving.length > 0 || missing.length > 0) {
      // What it overwrote is put back, unless a recursive delete has the folder: then it stays in the trash,
      // as an upload's undo leaves what it replaced to such a delete (protocol/README.md, "Writers", step 6).
      const back = await withdraw(deps, drive, row, outcome.file, recursive.length > 0 ? undefined : outcome.replaced, now);
      await removeUnused(deps, drive, created);
      // Taken by a later request (a delete put it in its own row, a move moved it, an upload replaced it into
      // the trash): that request explains what stands, as if the restore had ended just before it (200).
      if (!back) return outcome.file;
      if (deleting.length > 0) throw beingDeleted(deleting[0]);
      if (moving.length > 0) throw beingMoved(moving[0]);
      throw conflict(`the folders above ${to} were deleted while it was restored; try again`, [to]);
    }
    return outcome.file;
  }
}

/**
 * A restore withdrawing (a mark seen after its write): its record goes back into the trash as the row it was
 * (same id and stamp), in one write conditional on the record still being its own; what it overwrote
 * (`replaced`, the row the restore made of it) takes the path again in that same write. Taken by another
 * request meanwhile (a delete took it into the trash, an upload replaced it into the trash, a move moved it):
 * that request explains what stands, and nothing is undone (false). A row of what it overwrote that a restore
 * or purge claimed meanwhile stays that request's: the withdrawal is made without it. A replaced record still
 * `pending` (another writer's, noted where its row is) stays in the trash: putting it back is that writer's.
 */
async function withdraw(deps: RestoreDeps, drive: string, row: TrashRow, file: FileNode, replaced: TrashRow | undefined, now: Date): Promise<boolean> {
  if (replaced?.file && replaced.file.pending === undefined) {
    if ('trashed' in (await deps.records.trashMany(drive, [file], { back: row, putBack: { row: replaced, now } }))) return true;
    // Refused: ours was taken (so is the write below), or what it overwrote was claimed: withdraw without it.
  }
  const outcome = await deps.records.trashMany(drive, [file], { back: row });
  return 'trashed' in outcome;
}

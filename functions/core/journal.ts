import { cleanUp } from './clean-up';
import type { FileNode, FileRecords, JournalEntry, NodeStore, ObjectStore, TrashStore, UploadJournal } from './ports';
import { purgeClaimed } from './purge';
import { PURGE_LEASE_MS, type TrashPolicy, trashOn, trashReplaced } from './trash';

/**
 * How long after an upload starts it has surely ended (Lambda stops it at its 29 s timeout), with room for
 * clocks that differ: past this, its journal entry may be swept.
 */
export const JOURNAL_SWEEP_AFTER_MS = 5 * 60_000;

/**
 * Deals with the bytes of journal entries left open by interrupted uploads: bytes a record points to stay
 * (the upload had written it), the rest are deleted, and the entry is closed. A path that holds another
 * record younger than `JOURNAL_SWEEP_AFTER_MS` waits for a later sweep: the upload that wrote it may yet fail
 * and put back the record it replaced, which may be the one this entry stored. An entry noted withdrawn: a
 * record of its own still standing goes, what it replaced back in its place (gap 13, gap 12), and the bytes
 * its writer left (`left`: what its records replaced, where it found them taken) stay if a record at the
 * path names them, else go to the trash or are deleted (`judgeLeft`). A key a trash item holds now (its note,
 * `TrashNote`: a pending record trashed) is the trash's, not freed; unless the entry is noted withdrawn, when
 * that trash item is purged (what a write answered 409 for survives neither in the tree nor in the trash).
 * Returns the entries closed.
 */
export async function sweepJournal(
  deps: { nodes: NodeStore; objects: ObjectStore; journal: UploadJournal; trash?: TrashStore; records?: FileRecords; trashPolicy?: TrashPolicy },
  now = new Date(),
): Promise<number> {
  let closed = 0;
  for (const entry of await deps.journal.due(now)) {
    const paths = [...new Set([...entry.files, ...(entry.left ?? [])].map((file) => file.path))];
    const records = await deps.nodes.getMany(entry.drive, paths);
    let settled = true;
    const free: string[] = [];
    // What stands at each path once the withdrawn records are dealt with: the key its record names, if any.
    const standing = new Map([...records].flatMap(([path, node]) => (node.kind === 'file' ? [[path, node] as const] : [])));
    for (const file of entry.files) {
      const record = standing.get(file.path);
      if (record?.objectKey === file.objectKey) {
        if (!entry.withdrawn) continue;
        // A withdrawn writer's record still standing was put back by a writer that died before it asked (gap
        // 13): it goes, by its id, and what it replaced comes back, as that writer would have done (gap 12).
        // Changed since the read: a later sweep. Its key is this entry's, so this entry's note is its writer's,
        // whatever its `pending` names: another writer's walk may have put it back naming that writer's entry,
        // which may be swept first (and then no walk from it would find a note).
        const walked = await putBackWithdrawn(deps, entry.drive, file.path, { ...record, pending: entry.id });
        if (!walked.first) settled = false;
        else {
          free.push(...walked.freed);
          if (walked.now) standing.set(file.path, walked.now);
          else standing.delete(file.path);
        }
        continue;
      }
      if (record && isYoung(record, now)) settled = false;
      else free.push(file.objectKey);
    }
    const left: { path: string; objectKey: string }[] = [];
    for (const file of entry.left ?? []) {
      const record = standing.get(file.path);
      if (record?.objectKey === file.objectKey) continue;
      if (record && isYoung(record, now)) settled = false;
      else left.push(file);
    }
    if (!settled) continue;
    const { kept, deleted } = await judgeLeft(deps, entry, left, new Set(free));
    // Rows before the close: each writes a trash note on its key, so a sweep run again after a stop in between
    // finds the key the trash's and writes no second row; and only where no note stands yet (`once`), so that
    // of two runs at once (one past its schedule's interval) only one writes the row.
    if (kept.length > 0 && deps.records && deps.trashPolicy) {
      await trashReplaced(deps.records, { ...deps.trashPolicy, by: entry.createdBy }, entry.drive, kept, (write, group) => cleanUp(write, () => ({ keys: group.map((file) => file.objectKey) })), { once: true });
    }
    const own = deps.trash && free.length > 0 ? await keptInTrash({ ...deps, trash: deps.trash }, entry, [...new Set(free)], now) : [...new Set(free)];
    const keys = [...new Set([...own, ...deleted])];
    if (keys.length > 0) await deps.objects.deleteMany(keys);
    await deps.journal.close([entry.id]);
    closed++;
  }
  return closed;
}

/**
 * What becomes of the bytes an entry's writer left (`left`, gap 12) that no record names now: each was a file
 * clients saw, which the writer's withdrawn record replaced. Nothing of a key this sweep's own walk freed (`freed`:
 * a withdrawn writer's record, its bytes deleted now), nor of one a trash item holds (its note: never purged here,
 * even under a withdrawn entry). With the trash on, the record the note names goes there (`kept`: `replaced`),
 * unless it was itself the record of a writer that withdrew (that writer's sweep or walk frees it) or its bytes
 * are gone (such a writer's walk freed them first); it carries the entry that notes it (its own writer's, else
 * this one), so that the row's trash note tells a later sweep the key is the trash's. Else, or where the note
 * could not hold the record, deleted (`deleted`).
 */
async function judgeLeft(
  deps: { objects: ObjectStore; journal: UploadJournal; trash?: TrashStore; records?: FileRecords; trashPolicy?: TrashPolicy },
  entry: JournalEntry,
  left: readonly { path: string; objectKey: string }[],
  freed: ReadonlySet<string>,
): Promise<{ kept: FileNode[]; deleted: string[] }> {
  const candidates = [...new Map(left.filter((file) => !freed.has(file.objectKey)).map((file) => [file.objectKey, file])).values()];
  if (candidates.length === 0) return { kept: [], deleted: [] };
  const noted = deps.trash ? await deps.journal.trashNotes(entry.id, candidates.map((file) => file.objectKey)) : new Map<string, unknown>();
  const trashing = trashOn(deps.trashPolicy) && deps.records !== undefined;
  const kept: FileNode[] = [];
  const deleted: string[] = [];
  for (const file of candidates) {
    if (noted.has(file.objectKey)) continue;
    const record = trashing ? entry.replaced?.find((replaced) => replaced.path === file.path && replaced.objectKey === file.objectKey) : undefined;
    if (!record) {
      deleted.push(file.objectKey);
      continue;
    }
    if (record.pending !== undefined) {
      if (await deps.journal.withdrew(record.pending)) continue;
      if ((await deps.journal.trashNotes(record.pending, [file.objectKey])).has(file.objectKey)) continue;
    }
    if (!(await stored(deps.objects, file.objectKey))) continue;
    kept.push({ ...record, pending: record.pending ?? entry.id });
  }
  return { kept, deleted };
}

/** Whether an object is stored under `key` (opened, its stream let go unread). */
async function stored(objects: ObjectStore, key: string): Promise<boolean> {
  const opened = await objects.open(key);
  if (!opened) return false;
  // Let go unread: a socket's error as it closes is no answer to the question, and must not go unheard.
  opened.body.on('error', () => undefined);
  opened.body.destroy();
  return true;
}

/** A record written so lately that the upload that wrote it may still fail and put back what it replaced. */
function isYoung(record: FileNode, now: Date): boolean {
  return now.getTime() - Date.parse(record.createdAt) < JOURNAL_SWEEP_AFTER_MS;
}

/** Hops of one walk at most: each goes to an older writer of the path, so a longer chain is no real race. */
const MAX_PUT_BACK_HOPS = 8;

/**
 * A record put back at `path` (`standing`, as the caller read it) is settled as its writer's note says
 * (protocol/README.md, "Writers", step 6; gaps 11 and 12): while it is the own record of a writer that noted
 * its journal entry withdrawn (its `pending` names that entry, and it is not what the note says that writer
 * replaced), it goes by its id, what it replaced back in its place (naming that entry in `pending`, so that no
 * move takes it from the path before the sweep of that entry reads it), and the same is asked of that record.
 * A record the note says its writer replaced is asked of its own writer in turn. Stops at a record no noted
 * entry names, or one taken since (by its writer's own undo, or another request). Returns the keys of the
 * records it took away (their bytes are free), whether its first write was done (`first`: false when there
 * was nothing to do, the read failed, or the record was taken), and the record it left at the path (`now`).
 */
export async function putBackWithdrawn(
  deps: { nodes: NodeStore; journal: UploadJournal },
  drive: string,
  path: string,
  standing: FileNode,
): Promise<{ freed: string[]; first: boolean; now?: FileNode }> {
  const freed: string[] = [];
  let current = standing;
  let now: FileNode | undefined = standing;
  let first = false;
  for (let hop = 0; hop < MAX_PUT_BACK_HOPS && current.pending !== undefined; hop++) {
    // Unknown (the read failed): it stays, with its bytes.
    const note = await deps.journal.withdrew(current.pending).catch(() => undefined);
    if (!note) break;
    const before = note.replaced.find((record) => record.path === path);
    if (before !== undefined && before.objectKey === current.objectKey) {
      // What that writer replaced, put back: its own writer (the `pending` it had then) is asked next.
      current = before;
      continue;
    }
    const back: FileNode | undefined = before && { ...before, pending: current.pending };
    const done = back ? await deps.nodes.restoreIfSame(drive, path, current.id, back) : await deps.nodes.removeIfSame(drive, path, current.id);
    if (!done) break;
    first = true;
    freed.push(current.objectKey);
    now = back;
    if (!before) break;
    current = before;
  }
  return { freed, first, now };
}

/** Closes journal entries once their bytes are accounted for; an entry left open only costs a later sweep. */
export async function closeJournal(journal: UploadJournal, ids: readonly string[]): Promise<void> {
  await cleanUp(() => journal.close(ids));
}

/**
 * Of `keys` the sweep of `entry` is about to free, those no trash item holds (protocol/README.md, "Trash": a
 * pending record made a trash item leaves a note). A noted key stays; under a withdrawn entry its trash item is
 * purged now (a file's row: claimed, bytes, row; a member: its bytes, then it).
 */
async function keptInTrash(deps: { objects: ObjectStore; journal: UploadJournal; trash: TrashStore }, entry: JournalEntry, keys: readonly string[], now: Date): Promise<string[]> {
  const notes = await deps.journal.trashNotes(entry.id, keys);
  if (notes.size === 0) return [...keys];
  if (entry.withdrawn) {
    for (const [key, note] of notes) {
      if (note.relative !== undefined) {
        await deps.objects.deleteMany([key]);
        await deps.trash.removeMembers(note.drive, note.id, [note.relative]);
        continue;
      }
      const by = `journal:${entry.id}`;
      const claimed = await deps.trash.claim(note.drive, note.id, 'purge', by, now, PURGE_LEASE_MS);
      if (claimed?.file?.objectKey === key) await purgeClaimed(deps, note.drive, claimed, by);
    }
  }
  return keys.filter((key) => !notes.has(key));
}

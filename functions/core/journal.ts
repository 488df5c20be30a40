import { cleanUp } from './clean-up';
import type { NodeStore, ObjectStore, UploadJournal } from './ports';

/**
 * How long after an upload starts it has surely ended (Lambda stops it at its 29 s timeout), with room for
 * clocks that differ: past this, its journal entry may be swept.
 */
export const JOURNAL_SWEEP_AFTER_MS = 5 * 60_000;

/**
 * Deals with the bytes of journal entries left open by interrupted uploads: bytes a record points to stay
 * (the upload had written it), the rest are deleted, and the entry is closed. A path that holds another
 * record younger than `JOURNAL_SWEEP_AFTER_MS` waits for a later sweep: the upload that wrote it may yet fail
 * and put back the record it replaced, which may be the one this entry stored. Returns the entries closed.
 */
export async function sweepJournal(deps: { nodes: NodeStore; objects: ObjectStore; journal: UploadJournal }, now = new Date()): Promise<number> {
  let closed = 0;
  for (const entry of await deps.journal.due(now)) {
    const records = await deps.nodes.getMany(entry.drive, entry.files.map((file) => file.path));
    let settled = true;
    const free: string[] = [];
    for (const file of entry.files) {
      const record = records.get(file.path);
      if (record?.kind === 'file' && record.objectKey === file.objectKey) {
        // A withdrawn writer's record still standing was put back by a writer that died before it asked (gap
        // 13): it goes, by its id, as that writer would have taken it. Changed since the read: a later sweep.
        if (!entry.withdrawn) continue;
        if (await deps.nodes.removeIfSame(entry.drive, file.path, record.id)) free.push(file.objectKey);
        else settled = false;
        continue;
      }
      if (record?.kind === 'file' && now.getTime() - Date.parse(record.createdAt) < JOURNAL_SWEEP_AFTER_MS) settled = false;
      else free.push(file.objectKey);
    }
    if (!settled) continue;
    if (free.length > 0) await deps.objects.deleteMany(free);
    await deps.journal.close([entry.id]);
    closed++;
  }
  return closed;
}

/** Closes journal entries once their bytes are accounted for; an entry left open only costs a later sweep. */
export async function closeJournal(journal: UploadJournal, ids: readonly string[]): Promise<void> {
  await cleanUp(() => journal.close(ids));
}

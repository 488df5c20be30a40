import { conflict } from './errors';
import type { ObjectStore, TrashRow, TrashStore } from './ports';
import { noSuchItem } from './restore';
import { PURGE_LEASE_MS, type TrashPolicy, nowOf } from './trash';

export type PurgeDeps = { trash: TrashStore; objects: ObjectStore; trashPolicy?: TrashPolicy };

/** Members a purge reads and deletes at a time: one `DeleteObjects` of their keys. */
const MEMBERS_PER_PAGE = 1000;

/** What a purge freed. */
export interface Purged {
  id: string;
  path: string;
  files: number;
  bytes: number;
}

/**
 * Purges the trash item `id` of `drive` now (protocol/README.md, "Trash"; docs/trash-design.md, "Purge"): claims
 * the row (`TrashStore.claim`, which a restore's transaction refuses, and which refuses a row a restore job
 * holds), then deletes the bytes, then the members and the row with its due entry. A purge that dies leaves
 * the row claimed: the sweep takes it over once its lease lapsed. `by`: the request's (or job's) id.
 */
export async function purgeItem(deps: PurgeDeps, drive: string, id: string, by: string, options: { visible?: (row: TrashRow) => boolean } = {}): Promise<Purged> {
  const row = await deps.trash.get(drive, id);
  if (!row || (options.visible && !options.visible(row))) throw noSuchItem(id);
  const claimed = await deps.trash.claim(drive, id, 'purge', by, nowOf(deps.trashPolicy), PURGE_LEASE_MS);
  if (!claimed) {
    const now = await deps.trash.get(drive, id);
    if (!now) throw noSuchItem(id);
    if (now.state === 'filling') throw conflict(`trash item ${id} (${now.path}) is still being deleted; try again once its delete is done`, [now.path]);
    if (now.restoring !== undefined) throw conflict(`trash item ${id} (${now.path}) is being restored`, [now.path]);
    throw conflict(`trash item ${id} (${now.path}) is already being purged`, [now.path]);
  }
  return purgeClaimed(deps, drive, claimed, by);
}

/** A row claimed by `by`'s purge: its bytes first (a page of members at a time), then its items. */
export async function purgeClaimed(deps: PurgeDeps, drive: string, row: TrashRow, by: string): Promise<Purged> {
  await purgeContents(deps, drive, row);
  await deps.trash.remove(drive, row.id, by);
  return { id: row.id, path: row.path, files: row.files, bytes: row.bytes };
}

/**
 * The bytes and members of a row its caller's purge claimed, a page of members at a time; with `outOfTime`,
 * stops between pages once it is true (after the first: every call advances) and answers false, the rest left
 * for the next purge of the row (the claim's owner again, or the sweep once its lease lapsed). True when all
 * are gone: only the row (and its due entry) are left. `paged` is told after each page (a job's heartbeat).
 */
export async function purgeContents(deps: PurgeDeps, drive: string, row: TrashRow, outOfTime: () => boolean = () => false, paged: () => Promise<void> = async () => undefined): Promise<boolean> {
  if (row.file) await deps.objects.deleteMany([row.file.objectKey]);
  for (let first = true; ; first = false) {
    if (!first && outOfTime()) return false;
    // Each page's members go once their bytes are gone: a purge that dies here leaves members with bytes, or
    // members without (under a row claimed by a purge, which fsck allows), for the next purge of the row.
    const { members } = await deps.trash.members(drive, row.id, MEMBERS_PER_PAGE);
    if (members.length === 0) return true;
    const keys = members.flatMap((member) => (member.file ? [member.file.objectKey] : []));
    if (keys.length > 0) await deps.objects.deleteMany(keys);
    await deps.trash.removeMembers(drive, row.id, members.map((member) => member.relative));
    await paged();
  }
}

/** What one run of the trash sweep did. */
export interface TrashSwept {
  purged: number;
  /** Rows left claimed by a restore, or by a purge whose lease holds: the next run looks again. */
  skipped: number;
}

/**
 * The trash's part of the scheduled sweep: purges the rows past their `purgeAt` at `now`, found by their due
 * entries, at most `limit` a run (bounded steps: the rest wait for the next run). A due entry whose row is
 * gone, or no longer due and unclaimed (a purge's early entry), is dropped; a row a restore holds is skipped.
 */
export async function sweepTrash(deps: PurgeDeps, now: Date, limit = 1000): Promise<TrashSwept> {
  const swept: TrashSwept = { purged: 0, skipped: 0 };
  for (const entry of await deps.trash.due(now, limit)) {
    const row = await deps.trash.get(entry.drive, entry.id);
    if (!row || (row.purging === undefined && Date.parse(row.purgeAt) > now.getTime())) {
      await deps.trash.dropDue(entry);
      continue;
    }
    const by = `sweep:${now.toISOString()}`;
    const claimed = await deps.trash.claim(entry.drive, entry.id, 'purge', by, now, PURGE_LEASE_MS);
    if (!claimed) {
      swept.skipped++;
      continue;
    }
    await purgeClaimed(deps, entry.drive, claimed, by);
    if (entry.purgeAt !== claimed.purgeAt) await deps.trash.dropDue(entry);
    swept.purged++;
  }
  return swept;
}

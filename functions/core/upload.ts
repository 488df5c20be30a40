import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mapLimit, settleLimit } from './concurrency';
import { contentTypeFor } from './content-type';
import { DriveError, badRequest, conflict, forbidden, invalid, preconditionFailed } from './errors';
import { type Standing, beingDeleted, beingMoved, ensureFolders, recheckFolders, removeUnused } from './folders';
import { ROOT, ancestorsOf, childPath, joinPath, nameOf, parentOf, parseName, parsePath } from './paths';
import { JOURNAL_SWEEP_AFTER_MS, closeJournal, putBackWithdrawn } from './journal';
import { type DriveNode, type FileNode, type FileRecords, type FolderNode, type JobStore, type NodeStore, type ObjectStore, type PutFileResult, type UploadJournal, type WriteCondition, WRITE_REFUSED } from './ports';
import { cleanUp } from './clean-up';
import { depthOf } from './tree';
import type { LiveFolders } from './live-folders';
import { type TrashPolicy, trashOn, trashReplaced } from './trash';

/** One `files` part of an upload. */
export interface UploadPart {
  filename: string;
  contentType?: string;
  data: Buffer;
}

/** One entry of the `metadata` array: where to store the file at the same index, and on what condition. */
export interface UploadTarget {
  path?: string;
  folder?: string;
  name?: string;
  /** Store it only over the file with this ETag (as the download's `ETag` header or a listing's `etag` gives it, quotes optional). */
  ifMatch?: string;
  /** `*`: store it only where no file stands. */
  ifNoneMatch?: '*';
}

// Reads of a path whose write failed: enough to ride out a throttled moment.
const READ_BACK_ATTEMPTS = 3;

/** Distinct folders one upload may name (parents included): bounds the folders one request creates. */
export const MAX_FOLDERS_PER_UPLOAD = 1000;

// Parallel S3 puts and item writes per request: enough to overlap round trips, few enough for one Lambda.
const WRITE_CONCURRENCY = 8;

/**
 * Stores every part at its destination, all or nothing: an invalid destination fails the request before
 * any byte is stored, and a conflict or failure later removes what this request stored. A file at a
 * destination is replaced; its old bytes are deleted only once every new record is written.
 */
export async function uploadFiles(
  /**
   * `journal`: notes the bytes of an upload of several files before they are stored (an upload of one file
   * notes none: docs/hot-path-design.md); bytes an interrupted upload leaves that no entry names are orphans
   * until the scheduled consistency check deletes them, past its grace period. `jobs`: where a failed upload
   * notes the jobs that remove the folders it made (`removeUnused`); without one, a request dying as it
   * removes them leaves a folder marked until fsck --repair. `records` and `trashPolicy`: with trash on, the
   * files replaced go into the trash (`FileRecords.keepReplaced`) where their bytes were deleted.
   * `liveFolders`: the folders this process found live after a write (`LiveFolders`); an upload of one file
   * into one skips its first read, and every commit notes what its read after the write found.
   */
  deps: { nodes: NodeStore; objects: ObjectStore; journal?: UploadJournal; jobs?: JobStore; records?: FileRecords; trashPolicy?: TrashPolicy; liveFolders?: LiveFolders },
  drive: string,
  parts: readonly UploadPart[],
  targets: readonly UploadTarget[] | undefined,
  /** Throws for a destination the caller may not write (checked before anything is stored). */
  check: (path: string, index: number) => void = () => undefined,
  /** `replace: false`: a file at a destination fails the upload instead of being replaced. */
  options: { replace?: boolean } = {},
): Promise<FileNode[]> {
  const destinations = resolveDestinations(parts, targets);
  destinations.forEach(check);
  const conditions = conditionsOf(targets, options.replace);
  const { objects } = deps;
  const now = new Date().toISOString();
  const files: FileNode[] = parts.map((part, i) => {
    const id = randomUUID();
    return {
      kind: 'file',
      id,
      path: destinations[i],
      size: part.data.length,
      contentType: contentTypeFor(nameOf(destinations[i]), part.contentType),
      createdAt: now,
      objectKey: `${drive}/${id}`,
      etag: createHash('md5').update(part.data).digest('hex'),
    };
  });

  if (files.length === 1) return uploadOne(deps, drive, files[0], parts[0], { ...options, conditions });

  // Several files: noted before the bytes are stored, so that whatever stops this request, the sweep finds what
  // it left. A failed request leaves its entry open too, for the sweep to check what its clean-up may have missed.
  const entries = deps.journal ? await deps.journal.open(drive, files, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS), deps.trashPolicy?.by) : [];
  // Each record names its entry until the entry closes: a move waits for that (FileRecords in ports.ts).
  entries.forEach((entry, i) => (files[i].pending = entry));
  const stored = await settleLimit(files, WRITE_CONCURRENCY, (file, i) => objects.put(file.objectKey, parts[i].data, file.contentType, file.etag));
  const putFailure = stored.find((result) => result.status === 'rejected');
  if (putFailure) {
    // A put that failed may still have stored its object (a lost reply): every key is named.
    const keys = files.map((file) => file.objectKey);
    await cleanUp(() => objects.deleteMany(keys), () => ({ keys }));
    throw putFailure.reason;
  }

  const committed = await commitFiles(deps, drive, files, { ...options, conditions, entries });
  if (deps.journal) await closeJournal(deps.journal, entries);
  return committed;
}

/**
 * The hot path (docs/hot-path-design.md; protocol/README.md, "Writers", step 1): an upload of one file keeps no
 * journal entry. Its bytes are stored while the folders above and the destination are read (one batch; missing
 * folders are made after both, top-down), then its record is written, then the folders are read again: three
 * round trips, four calls, into an existing folder. Bytes a request leaves when it dies between its put and its
 * record are named by nothing: the scheduled consistency check deletes them once they are older than its grace
 * period. The record is never pending, so a move may take it at once; a withdrawal that finds it taken by a
 * later request (moved, deleted or replaced) answers as stored, since that request explains what stands at the
 * path (`takenIsStored`).
 */
async function uploadOne(
  deps: { nodes: NodeStore; objects: ObjectStore; journal?: UploadJournal; jobs?: JobStore; records?: FileRecords; trashPolicy?: TrashPolicy; liveFolders?: LiveFolders },
  drive: string,
  file: FileNode,
  part: UploadPart,
  options: { replace?: boolean; conditions?: readonly (WriteCondition | undefined)[] },
): Promise<FileNode[]> {
  // A put that failed may still have stored its object (a lost reply): its key is named.
  const dropBytes = () => cleanUp(() => deps.objects.deleteMany([file.objectKey]), () => ({ keys: [file.objectKey] }));
  const put = deps.objects.put(file.objectKey, part.data, file.contentType, file.etag).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  // Into a folder found live after a recent write (or the root, which always is): no first read. The record's
  // own condition refuses a folder at the path, a key that may not replace, and the request's condition; the
  // read after the write refuses a marked folder above, or makes missing ones (docs/hot-path-design.md).
  const parent = parentOf(file.path);
  if (parent === ROOT || deps.liveFolders?.has(drive, parent)) {
    const failed = await put;
    if (failed) {
      await dropBytes();
      throw failed.error;
    }
    return commitFiles(deps, drive, [file], { ...options, takenIsStored: true }, 'live');
  }
  // Missing folders are made once the bytes are stored (and not at all if the put failed): one chain of calls.
  const beforeCreate = async () => {
    const failed = await put;
    if (failed) throw failed.error;
  };
  const [stored, read] = await Promise.all([
    put,
    ensureFolders(deps.nodes, drive, [parentOf(file.path)], file.createdAt, [file.path], { jobs: deps.jobs, beforeCreate }).then(
      (ensured) => ({ ensured }),
      (error: unknown) => ({ error }),
    ),
  ]);
  if (stored || 'error' in read) {
    if ('ensured' in read) await removeUnused(deps, drive, read.ensured.created);
    await dropBytes();
    throw stored ? stored.error : (read as { error: unknown }).error;
  }
  return commitFiles(deps, drive, [file], { ...options, takenIsStored: true }, read.ensured);
}

/** Times an upload makes its folders again when a delete removed them while it ran, before it answers 409. */
const FOLDER_ATTEMPTS = 3;

/**
 * Writes the records of `files`, whose bytes are stored, as the protocol orders it (protocol/README.md, "Writers"): their
 * folders top-down, then the records, then one more read of every folder above them. Then deletes the
 * bytes of the files they replaced. On a conflict or failure it undoes its records and deletes the bytes
 * that no record points to (of `files` only unless `keepBytes`: the caller keeps them for another try),
 * and throws.
 */
export async function commitFiles(
  /**
   * `journal`: on a failure only, notes `entries` withdrawn before the undo, and asks whether the writer of a
   * record this one replaced and puts back withdrew (see `undo`).
   */
  deps: { nodes: NodeStore; objects: ObjectStore; jobs?: JobStore; journal?: UploadJournal; records?: FileRecords; trashPolicy?: TrashPolicy; liveFolders?: LiveFolders },
  drive: string,
  files: readonly FileNode[],
  /**
   * `takenIsStored` (an upload of one file, whose record is never pending): a withdrawal for a conflict that
   * finds the record taken by a later request (moved, deleted or replaced since it was written) answers as
   * stored, as if the upload had ended just before that request, which explains what stands at the path.
   * `conditions`: the request's condition on each file's write (its `if_match` or `if_none_match`), checked
   * on the first read and held by the write itself (`putFile`); one that fails is a 412 naming every such
   * path, and the commit withdraws as from a conflict.
   * `entries`: the journal entries the records of `files` name in `pending`, which no other commit's records
   * name (an upload of several files, a file copy): a withdrawal notes them withdrawn before its undo.
   * `standing`: a folder above the files that must stand and is never made (a folder copy's destination,
   * which only its request makes): found gone, the commit withdraws with `standing.gone()`.
   */
  options: { keepBytes?: boolean; replace?: boolean; takenIsStored?: boolean; conditions?: readonly (WriteCondition | undefined)[]; entries?: readonly string[]; standing?: Standing } = {},
  /**
   * The first pass's `ensureFolders`, already made (the one-file upload makes it while its bytes are stored),
   * or `live`: the folders above were found live after a recent write (`LiveFolders`), so the first pass reads
   * nothing, and what stands at each destination is unknown until its write.
   */
  first?: Awaited<ReturnType<typeof ensureFolders>> | 'live',
): Promise<FileNode[]> {
  const { nodes } = deps;
  const conditions = options.conditions ?? [];
  const taken = (path: string) => conflict(options.replace === false ? `${path} is taken; this key may not replace what is there` : `${path} is a folder, so a file cannot be stored there`, [path]);
  const parents = [...new Set(files.map((file) => parentOf(file.path)))];
  const now = files[0].createdAt;
  const created: FolderNode[] = [];
  let results: PromiseSettledResult<WrittenRecord>[] = [];
  // What the first pass's read found that refuses the upload before any write: a folder at a destination (or,
  // not replacing, anything there), then a condition it already fails (one that holds here, the write holds).
  // A record of this very file (a completion tried again after its record was saved) is no rival.
  const refuseAsRead = (read: ReadonlyMap<string, DriveNode>) => {
    const blocked = files.find((file) => {
      const there = read.get(file.path);
      return there?.kind === 'folder' || (options.replace === false && there !== undefined && there.id !== file.id);
    });
    if (blocked) throw taken(blocked.path);
    const unmet = files.flatMap((file, i) => (holds(conditions[i], read.get(file.path), file.id) ? [] : [i]));
    if (unmet.length > 0) throw conditionFailed(files.map((file) => file.path), conditions, unmet);
  };
  // Unread, what stood at each path is unknown to a write whose outcome is (`writeRecord`).
  const writeAll = (read: ReadonlyMap<string, DriveNode> | undefined) =>
    settleLimit(files, WRITE_CONCURRENCY, (file, i) => writeRecord(nodes, drive, file, read ? { node: read.get(file.path) } : undefined, options.replace, conditions[i]));
  try {
    for (let attempt = 1; ; attempt++) {
      // The first pass also reads what stands at each destination: a folder there fails the upload before
      // any write, and a failed write is judged against it (see writeRecord).
      const ensured =
        attempt === 1 && first !== undefined ? (first === 'live' ? undefined : first) : await ensureFolders(nodes, drive, parents, now, attempt === 1 ? files.map((file) => file.path) : [], { jobs: deps.jobs, standing: options.standing });
      if (ensured) created.push(...ensured.created);
      if (attempt === 1) {
        // Unread (`live`): each write's own condition refuses what this read would have.
        const read = ensured?.read;
        if (read) refuseAsRead(read);
        results = await writeAll(read);
        // Unread and refused, nothing written: the first pass's read is made now, and the upload refused (or
        // written, if the path changed meanwhile) as it judges, so that a refusal answers as it always did:
        // a marked folder or a file above first, then a folder at the path, then the request's condition.
        if (!read && results.every((result) => result.status === 'fulfilled' && !result.value.ok && result.value.error === undefined)) {
          deps.liveFolders?.forget(drive, parents);
          results = [];
          const cold = await ensureFolders(nodes, drive, parents, now, files.map((file) => file.path), { jobs: deps.jobs, standing: options.standing });
          created.push(...cold.created);
          refuseAsRead(cold.read);
          results = await writeAll(cold.read);
        }
        const refused: number[] = [];
        results.forEach((result, i) => {
          if (result.status === 'rejected') throw result.reason;
          if (result.value.error !== undefined) throw result.value.error;
          if (!result.value.ok && 'precondition' in result.value && result.value.precondition) refused.push(i);
          else if (!result.value.ok) throw taken(files[i].path);
        });
        if (refused.length > 0) throw conditionFailed(files.map((file) => file.path), conditions, refused);
      }
      const { missing, deleting, moving } = await recheckFolders(nodes, drive, parents);
      if (deleting.length > 0 || moving.length > 0 || missing.length > 0) deps.liveFolders?.forget(drive, parents);
      // The shallowest mark, as the first pass's read names it (top-down).
      const marked = [...deleting, ...moving].sort((a, b) => depthOf(a) - depthOf(b))[0];
      if (marked !== undefined) throw deleting.includes(marked) ? beingDeleted(marked) : beingMoved(marked);
      if (missing.length === 0) {
        deps.liveFolders?.note(drive, parents);
        break;
      }
      if (options.standing && missing.includes(options.standing.path)) throw options.standing.gone();
      if (attempt === FOLDER_ATTEMPTS) throw conflict(`the folders of this upload were deleted while it ran; try again`, []);
    }
  } catch (error) {
    // The note first, then the undo (protocol/README.md, "Writers", step 6): a writer that replaced a record of
    // ours puts it back and then reads the note, so either it sees the note or our undo finds the record back.
    // None before a record was written: no writer can have replaced one.
    // Nor with a record whose write reply was lost: the undo leaves it, and a noted entry's sweep would not.
    // The note carries what each record replaced: a writer that puts one back puts that back in its place (gap 12).
    const unknown = results.some((result) => result.status === 'fulfilled' && result.value.ok && result.value.replacedUnknown);
    const entries = results.length > 0 && !unknown ? (options.entries ?? []) : [];
    const replaced = results.map((result) => (result.status === 'fulfilled' && result.value.ok ? result.value.replaced : undefined));
    const unnoted = deps.journal && entries.length > 0 ? await deps.journal.withdraw(entries, replaced).then(() => undefined, (failure: unknown) => ({ failure })) : undefined;
    const { taken, ownFree } = await undo(deps, drive, files, results, { ...options, noted: deps.journal && entries.length > 0 && !unnoted ? entries : undefined });
    await removeUnused(deps, drive, created);
    // Unnoted, a record of ours that a writer puts back stays: a 409 would be false, so the request fails.
    if (unnoted) throw unnoted.failure;
    // Only a refusal (a mark seen, the folders gone): a failed call still fails the request, as it did.
    if (options.takenIsStored && files.length === 1 && taken.length === 1 && error instanceof DriveError && error.code === 'conflict') return [...files];
    // Bytes kept for another try are not ours to keep once another request took the record that held them.
    if (options.keepBytes && taken.length > 0) throw new RecordTaken(taken[0]);
    if (options.keepBytes && !ownFree) throw new RecordMayStand(error);
    throw error;
  }

  // Step 7: what the records replaced is deleted; with trash on, it goes into the trash instead (a row and its
  // due entry each, one write: the call that deleted them). A failed write leaves bytes named by nothing, for
  // the scheduled check, as a failed delete leaves them today.
  const replaced = results.flatMap((r) => (r.status === 'fulfilled' && r.value.ok && r.value.replaced ? [r.value.replaced] : []));
  const replacedKeys = replaced.map((file) => file.objectKey);
  if (replaced.length > 0 && deps.records && trashOn(deps.trashPolicy)) {
    await trashReplaced(deps.records, deps.trashPolicy, drive, replaced, (write, group) => cleanUp(write, () => ({ keys: group.map((file) => file.objectKey) })));
  } else if (replacedKeys.length > 0) await cleanUp(() => deps.objects.deleteMany(replacedKeys), () => ({ keys: replacedKeys }));
  return [...files];
}

/**
 * A commit failed after another request took a record it had written (a delete removed it, or a writer
 * replaced it): the bytes that record held are that request's to free, or to keep, now. Nothing of the commit
 * stands at the path, and another try must not write it again (a large upload ends its session).
 */
export class RecordTaken extends DriveError {
  constructor(readonly path: string) {
    super('conflict', `${path} was deleted or replaced by another request while this one stored it; nothing of this upload is stored there`, {}, undefined, [path]);
  }
}

/**
 * A commit that keeps its bytes (a large upload's completion) failed, and a record of it may still stand: its
 * write's reply was lost (what it replaced is unknown, so the undo leaves it), a failed write may have been
 * saved and replaced since, or the undo did not finish. Whether the file is stored is unknown, so the request
 * fails (500) rather than answer a refusal, and its caller keeps the bytes: another try judges by what stands.
 */
export class RecordMayStand extends Error {
  constructor(readonly failure: unknown) {
    super(`the file's record may stand after a failed commit: ${failure instanceof Error ? failure.message : String(failure)}`);
    this.name = 'RecordMayStand';
  }
}

/**
 * Undoes the record writes of a failed commit, where each still stands, and deletes the bytes no record
 * points to any more. A record in a folder a recursive delete has taken is removed, not put back: what it
 * replaced goes with the folder, bytes included (an `empty` mark takes nothing below it). Bytes whose record may still come back stay (see `writeRecord`).
 * Returns the paths whose record another request had taken before the undo reached it, and whether the undo
 * ran to its end with every file's bytes named by no record of the commit, now or later (`ownFree`).
 */
async function undo(
  deps: { nodes: NodeStore; objects: ObjectStore; journal?: UploadJournal; records?: FileRecords; trashPolicy?: TrashPolicy },
  drive: string,
  files: readonly FileNode[],
  results: readonly PromiseSettledResult<WrittenRecord>[],
  /** `noted`: the entry of each file, when the commit noted them withdrawn, with what its records replaced. */
  options: { keepBytes?: boolean; noted?: readonly string[] },
): Promise<{ taken: string[]; ownFree: boolean }> {
  const { nodes, objects } = deps;
  const taken: string[] = [];
  let ownFree = false;
  // What stays if the undo fails: this request's bytes until the undo knows better, then exactly what it frees.
  let freeing: readonly string[] = options.keepBytes ? [] : files.map((file) => file.objectKey);
  await cleanUp(async () => {
    // Only a recursive delete's mark dooms what stands below it (protocol/README.md, "Writers", step 6): an
    // `empty` mark (an empty-folder delete, or a writer's removeUnused) is cleared once it finds children, so
    // what ours replaced is put back as if no mark were there; freeing it would lose a file no success explains.
    // Unknown (the read failed): undo as if no delete had taken them; the delete finds what stays.
    // No record written (refused, or failed before its write): nothing to judge, nothing to read.
    const wrote = results.some((result) => result?.status === 'fulfilled' && result.value.ok);
    const { recursive } = wrote
      ? await recheckFolders(nodes, drive, [...new Set(files.map((file) => parentOf(file.path)))]).catch(() => ({ recursive: [] as string[] }))
      : { recursive: [] as string[] };
    const doomed = (path: string) => recursive.some((folder) => path.startsWith(`${folder}/`));
    // Ours taken by another request: what it replaced. Noted, a writer that took ours may withdraw, put ours
    // back and, reading our note, put that back in its place (gap 12): its bytes are left to our entry's sweep,
    // which keeps them if a record at the path names them. Not noted, none can: they are freed.
    const takenFrom = (replaced: FileNode | undefined): { replaced?: FileNode; left?: FileNode } =>
      !replaced ? {} : options.noted ? { left: replaced } : { replaced };
    const freed = await mapLimit(files, WRITE_CONCURRENCY, async (file, i): Promise<{ ours?: string; replaced?: FileNode; more?: string[]; left?: FileNode }> => {
      const result = results[i];
      const ours = file.objectKey;
      // No record was written: the commit failed at its folders.
      if (!result) return { ours };
      if (result.status === 'rejected') return {};
      if (result.value.error !== undefined) return result.value.bytesFree ? { ours } : {};
      if (!result.value.ok) return { ours };
      const { replaced, replacedUnknown } = result.value;
      // Once ours is gone by our undo, what it replaced can never come back: only this undo could have put it
      // back. Gone by another's hand (a delete took it, or a writer replaced it), it may: see `takenFrom`.
      if (doomed(file.path)) {
        if (await nodes.removeIfSame(drive, file.path, file.id)) return { ours, replaced };
        taken.push(file.path);
        return takenFrom(replaced);
      }
      // A record whose write reply was lost stays: undoing it would drop the file it replaced, which is unknown.
      if (replacedUnknown) return {};
      const undone = replaced ? await nodes.restoreIfSame(drive, file.path, file.id, replaced) : await nodes.removeIfSame(drive, file.path, file.id);
      if (!undone) {
        taken.push(file.path);
        return takenFrom(replaced);
      }
      // Put back first, then asked (gaps 11 and 12): a record still `pending` is an upload's (of several files,
      // or a copy's) that may have withdrawn, finding it taken by ours and keeping its bytes for this very
      // restore; such a writer notes it, with what it replaced, before its undo. Noted: it goes again, what it
      // replaced back in its place (and so on down the path's writers), freed here, unless that writer's own
      // undo took it first. Not noted: that writer stored it (or will, and answers 200), or withdraws later and
      // finds it itself. Unknown (the read failed): it stays, with its bytes.
      if (replaced?.pending !== undefined && deps.journal) {
        const walked = await putBackWithdrawn({ nodes, journal: deps.journal }, drive, file.path, replaced);
        return { ours, more: walked.freed };
      }
      return { ours };
    });
    // Known before the bytes' clean-up, which may fail on its own: every record of ours is undone, or never was.
    ownFree = freed.every(({ ours }) => ours !== undefined);
    // What ours replaced and nothing names now (ours removed under a recursive mark, or taken unnoted): with the
    // trash on it goes there as its own row (`replaced`), as on success (docs/trash-design.md, "Writes"); else freed.
    const replaced = freed.flatMap(({ replaced }) => (replaced ? [replaced] : []));
    const { records, trashPolicy } = deps;
    const trashing = replaced.length > 0 && records !== undefined && trashOn(trashPolicy);
    const own = freed.flatMap(({ ours, more }) => [...(ours && !options.keepBytes ? [ours] : []), ...(more ?? [])]);
    const replacedKeys = replaced.map((file) => file.objectKey);
    const keys = trashing ? own : [...own, ...replacedKeys];
    freeing = [...own, ...replacedKeys];
    const left = freed.map(({ left }) => left);
    // Not freed either way: a note that failed leaves them to fsck (named by nothing once the entry closes).
    if (options.noted && deps.journal && left.some((record) => record !== undefined)) await deps.journal.leave(options.noted, left).catch(() => undefined);
    if (trashing) await trashReplaced(records, trashPolicy, drive, replaced);
    if (keys.length > 0) await objects.deleteMany(keys);
  }, () => ({ keys: freeing }));
  return { taken, ownFree };
}

/**
 * A record write's outcome: written (`replacedUnknown` when it was saved but its reply, naming what it
 * replaced, was lost), refused by a folder at the path, or failed with `error`, where `bytesFree` tells
 * whether no record can point to the file's bytes now or later.
 */
type WrittenRecord = (PutFileResult & { replacedUnknown?: true; error?: undefined }) | { ok: false; error: unknown; bytesFree: boolean };

/**
 * Writes a file's record over `before` (what stood at its path just before). A write that fails may still
 * have been saved (a lost reply): one read tells. A saved write counts as done (what it replaced is then
 * unknown; its bytes are left for fsck). A failed one whose path still holds the file `before` was never
 * saved (a record, once replaced, never comes back), so its bytes are free; one whose path holds another
 * record may have been saved and replaced by an upload that puts it back if that upload fails, so its bytes
 * stay. An empty path proves nothing by itself: the record may have been saved and deleted since (into the
 * trash, whose row then names the bytes); only a write the store refused outright (`refusedOutright`) was
 * surely not saved. Bytes kept so are an orphan for the scheduled check if nothing names them.
 */
async function writeRecord(nodes: NodeStore, drive: string, file: FileNode, before: { node: DriveNode | undefined } | undefined, replace?: boolean, condition?: WriteCondition): Promise<WrittenRecord> {
  try {
    return await nodes.putFile(drive, file, condition ? { replace, condition } : { replace });
  } catch (error) {
    const now = await readBack(nodes, drive, file.path);
    if (now !== 'empty' && now !== 'unknown' && now.id === file.id) return { ok: true, replacedUnknown: true };
    const stillBefore = now !== 'empty' && now !== 'unknown' && before?.node !== undefined && now.id === before.node.id;
    return { ok: false, error, bytesFree: stillBefore || (now === 'empty' && refusedOutright(error)) };
  }
}

/**
 * Whether a store call's failure says that its write was not made: the store refused every attempt of it
 * outright (`WRITE_REFUSED`, which the adapter sets: a throttle, a malformed request), as against a lost reply,
 * a timeout or a server fault on any attempt, after which the write may have been made.
 */
export function refusedOutright(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[WRITE_REFUSED] === true;
}

/**
 * Whether `condition` holds of `node`, what stands at the path of the file with id `id` (none holds of a
 * folder; a folder there is a 409 first). The file's own record passes, as it does `putFile`'s condition: a
 * large upload's completion tried again after its record was saved finds it there (its id is its session's).
 */
export function holds(condition: WriteCondition | undefined, node: DriveNode | undefined, id: string): boolean {
  if (!condition || node?.id === id) return true;
  if ('ifMatch' in condition) return node?.kind === 'file' && node.etag === condition.ifMatch;
  return node === undefined;
}

/** Paths a 412's message names before it counts the rest. */
const NAMED_PATHS = 20;

/** The 412 for the files at `failed` (indexes into `paths`), naming each path and what its condition asked. */
export function conditionFailed(paths: readonly string[], conditions: readonly (WriteCondition | undefined)[], failed: readonly number[]): DriveError {
  const named = failed.slice(0, NAMED_PATHS).map((i) => {
    const condition = conditions[i]!;
    return 'ifMatch' in condition
      ? `${paths[i]} (if_match "${condition.ifMatch}": no file with that ETag is there)`
      : `${paths[i]} (if_none_match "*": a file is there)`;
  });
  const more = failed.length > NAMED_PATHS ? ` and ${failed.length - NAMED_PATHS} more` : '';
  return preconditionFailed(`the condition failed for ${named.join(', ')}${more}; nothing of this upload is stored`, failed.map((i) => paths[i]));
}

/**
 * Each target's condition (`if_match`, `if_none_match`), checked before anything is stored: both on one file
 * is a 400; an ETag with quotes inside, or a weak one, is a 422. A key that may not replace (`replace:
 * false`) writes only where nothing stands, so its `if_none_match` asks nothing more, and an `if_match`,
 * which only a replacement could meet, is a 403.
 */
export function conditionsOf(targets: readonly UploadTarget[] | undefined, replace?: boolean): (WriteCondition | undefined)[] {
  return (targets ?? []).map((target, i) => conditionOf(target, replace, `metadata[${i}]`));
}

/**
 * One file's condition, by `conditionsOf`'s rules; `at` names where it was given (`metadata[0]`), or is
 * undefined for a body's own fields (a large upload's start), whose errors then name `if_match` alone.
 */
export function conditionOf(target: Pick<UploadTarget, 'ifMatch' | 'ifNoneMatch'>, replace: boolean | undefined, at?: string): WriteCondition | undefined {
  const field = (name: string) => (at === undefined ? name : `${at}.${name}`);
  if (target.ifMatch !== undefined && target.ifNoneMatch !== undefined) {
    throw badRequest(`${at ?? 'the body'} has both if_match and if_none_match; give one: if_match to replace only that version, if_none_match to store only where no file is`);
  }
  if (target.ifNoneMatch !== undefined) return replace === false ? undefined : { ifNoneMatch: '*' };
  if (target.ifMatch === undefined) return undefined;
  const etag = etagOf(target.ifMatch, field('if_match'));
  if (replace === false) throw forbidden(`${field('if_match')} asks to replace a file, and this key may not replace files`);
  return { ifMatch: etag };
}

/**
 * An ETag as a request names a file's version (`if_match`), with or without the quotes of the `ETag` header:
 * the value inside them, as records and listings keep it. A weak tag (`W/"…"`) never names one version, so it
 * is refused, as is anything with a quote inside or a character an ETag cannot hold.
 */
export function etagOf(value: string, param: string): string {
  const inner = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  if (!/^[\x21\x23-\x7e]+$/.test(inner)) {
    throw invalid(`${param} must be a file's ETag, like "9e107d9d372bb6826bd81d3542a419d6" (quotes optional; no weak W/ tag), got ${JSON.stringify(value.slice(0, 80))}`);
  }
  return inner;
}

/** Reads to settle a write's unknown outcome: the node at `path`, `empty`, or `unknown` if the read fails again and again. */
async function readBack(nodes: NodeStore, drive: string, path: string): Promise<DriveNode | 'empty' | 'unknown'> {
  for (let attempt = 0; attempt < READ_BACK_ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(50 * 2 ** attempt);
    const node = await nodes.get(drive, path).then(
      (found) => found ?? ('empty' as const),
      () => undefined,
    );
    if (node) return node;
  }
  return 'unknown';
}

/** Applies the spec's destination rules (4.1) to each part and checks the batch before anything is stored. */
export function resolveDestinations(parts: readonly UploadPart[], targets: readonly UploadTarget[] | undefined): string[] {
  if (parts.length === 0) throw badRequest('files is required: send one or more multipart parts named "files"');
  if (targets && targets.length !== parts.length) {
    throw badRequest(`metadata has ${targets.length} entries for ${parts.length} files; send one entry per file, in order`);
  }
  const destinations = parts.map((part, i) => destinationOf(part, targets?.[i] ?? {}, i));

  const seen = new Map<string, number>();
  destinations.forEach((path, i) => {
    const first = seen.get(path);
    if (first !== undefined) throw invalid(`files[${first}] and files[${i}] have the same destination ${path}; each file needs its own`);
    seen.set(path, i);
  });
  const folders = new Set(destinations.flatMap(ancestorsOf));
  if (folders.size > MAX_FOLDERS_PER_UPLOAD) {
    throw invalid(`the destinations name ${folders.size} folders; one request may name at most ${MAX_FOLDERS_PER_UPLOAD} (parents included): send the rest in another`);
  }
  destinations.forEach((path, i) => {
    if (folders.has(path)) throw invalid(`files[${i}] goes to ${path}, which another file of this request needs as a folder`);
  });
  return destinations;
}

function destinationOf(part: UploadPart, target: UploadTarget, i: number): string {
  const original = () => {
    if (part.filename === '') throw invalid(`files[${i}] has no filename; give it one, or set metadata[${i}].name or .path`);
    return parseName(part.filename, `files[${i}] filename`);
  };
  return targetPath(target, original, (field) => `metadata[${i}].${field}`);
}

/**
 * The file path a destination names (spec 4.1): `path`; else `folder` with `name` or, failing that, the
 * name `unnamed` gives; else the root with either. `param` names a field in validation errors.
 */
export function targetPath(target: UploadTarget, unnamed: () => string, param: (field: keyof UploadTarget) => string): string {
  if (target.path !== undefined) {
    const path = parsePath(target.path, param('path'));
    if (path === ROOT) throw invalid(`${param('path')} must name a file, not the root folder`);
    return path;
  }
  const name = target.name !== undefined ? parseName(target.name, param('name')) : undefined;
  if (target.folder !== undefined) {
    const folder = parsePath(target.folder, param('folder'), { allowTrailingSlash: true });
    return childPath(folder, name ?? unnamed(), `${param('folder')} with the file name`);
  }
  return joinPath(ROOT, name ?? unnamed());
}

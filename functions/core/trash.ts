import { createHash, randomBytes } from 'node:crypto';
import { type FileNode, type FileRecords, type Job, MAX_FILES_PER_TRASH, type TrashMember, type TrashReason, type TrashRow, type TrashStamp } from './ports';

// The trash (issue 28, docs/trash-design.md): what deletes and replacements take from the tree is kept as
// trash items for `trashDays` days, then purged. The writes that move a record into or out of the trash are
// `FileRecords.trashMany` and `FileRecords.restore`; the items are `TrashStore`'s (protocol/README.md, "Trash").

const DAY_MS = 86_400_000;

/**
 * How a request treats what it removes: `days` 0 (or no policy) deletes as before; more keeps it in the
 * trash that long. `by` is the id of the key the request runs under; `now` its clock (tests move it).
 */
export interface TrashPolicy {
  days: number;
  by?: string;
  now?: () => number;
}

/** Whether `policy` keeps what is removed (a positive `days`). */
export function trashOn(policy: TrashPolicy | undefined): policy is TrashPolicy {
  return policy !== undefined && policy.days > 0;
}

/** The moment `policy`'s clock reads. */
export function nowOf(policy: TrashPolicy | undefined): Date {
  return new Date(policy?.now ? policy.now() : Date.now());
}

/** The stamp of rows a write makes now, for `reason`: deleted or replaced now, purged `days` later. */
export function stampOf(policy: TrashPolicy, reason: TrashReason): TrashStamp {
  const now = nowOf(policy);
  return {
    reason,
    deletedAt: now.toISOString(),
    purgeAt: new Date(now.getTime() + policy.days * DAY_MS).toISOString(),
    ...(policy.by !== undefined ? { deletedBy: policy.by } : {}),
  };
}

/**
 * Puts the files records replaced into the trash, `replaced` rows of `MAX_FILES_PER_TRASH` a write; `each`
 * wraps each write (step 7 reports a failed one and goes on).
 */
export async function trashReplaced(
  records: FileRecords,
  policy: TrashPolicy,
  drive: string,
  replaced: readonly FileNode[],
  each: (write: () => Promise<void>, group: readonly FileNode[]) => Promise<void> = (write) => write(),
  /** `once`: the journal sweep's (`FileRecords.keepReplaced`). */
  options: { once?: boolean } = {},
): Promise<void> {
  const stamp = stampOf(policy, 'replaced');
  for (let i = 0; i < replaced.length; i += MAX_FILES_PER_TRASH) {
    const group = replaced.slice(i, i + MAX_FILES_PER_TRASH);
    await each(async () => void (await records.keepReplaced(drive, group, stamp, options)), group);
  }
}

/** Who starts a job, as `Job.createdBy` notes it: the key of the request's policy, if it has one. */
export function startedBy(policy: Pick<TrashPolicy, 'by'> | undefined): Pick<Job, 'createdBy'> {
  return policy?.by !== undefined ? { createdBy: policy.by } : {};
}

/**
 * The policy a job's step runs under: the worker's (which has no caller), with the key that started the job as
 * the one its rows and journal entries name, as the request's would.
 */
export function policyOfJob<P extends TrashPolicy | undefined>(policy: P, job: Pick<Job, 'createdBy'>): P {
  return policy && policy.by === undefined && job.createdBy !== undefined ? { ...policy, by: job.createdBy } : policy;
}

/**
 * A UUIDv7 (RFC 9562): 48 bits of milliseconds, the version, 74 random bits: ids made later sort after, so a
 * backward read of a drive's rows is newest first. Ids of one millisecond sort at random among themselves.
 */
export function trashId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * An id that sorts after every `trashId` made at or before `now` and before every one made later: where a
 * newest-first read of the rows starts to see only what was trashed by then (an empty-trash's first cursor).
 */
export function trashIdBound(now: Date): string {
  const hex = (Math.max(0, Math.floor(now.getTime())) % 2 ** 48).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-ffff-ffff-ffffffffffff`;
}

/**
 * The id of the folder row a recursive delete's job fills: a UUIDv7 of the job's creation time whose random
 * bits are the job id's hash, so every step of the job (and the request) names the same row.
 */
export function trashIdOf(job: { id: string; createdAt: string }): string {
  const bytes = createHash('sha256').update(job.id).digest().subarray(0, 16);
  bytes.writeUIntBE(Math.max(0, Date.parse(job.createdAt)) % 2 ** 48, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The row of a file trashed on its own (deleted, or replaced), stamped `stamp`, with a new id. */
export function fileRow(file: FileNode, stamp: TrashStamp): TrashRow {
  const { pending: _, ...record } = file;
  return { id: trashId(Date.parse(stamp.deletedAt)), type: 'file', path: file.path, bytes: file.size, files: 1, ...stamp, file: record, state: 'trashed' };
}

/** The path of `file` relative to the folder row's path: its member's sort key. */
export function relativeTo(row: Pick<TrashRow, 'path'>, path: string): string {
  if (!path.startsWith(`${row.path}/`)) throw new RangeError(`${path} is not below the trashed folder ${row.path}`);
  return path.slice(row.path.length + 1);
}

/** The member a file becomes in a folder row. */
export function fileMember(row: Pick<TrashRow, 'path'>, file: FileNode): TrashMember {
  const { pending: _, ...record } = file;
  return { relative: relativeTo(row, file.path), file: record };
}

/** Whether the row may be listed and restored at `now`: before its `purgeAt`. */
export function restorable(row: Pick<TrashRow, 'purgeAt'>, now: Date): boolean {
  return now.getTime() < Date.parse(row.purgeAt);
}

/** How long a purge's claim holds before another purge (the sweep) may take the row over: one that died. */
export const PURGE_LEASE_MS = 5 * 60_000;

/**
 * The record a folder restore writes for `member` of `row` at `to`: the member's file as it was trashed (its
 * id, key, ETag, size and creation time), moved (`movedAt` now) unless it goes back where it was.
 */
export function restoredRecord(row: TrashRow, member: TrashMember, to: string, now: Date): FileNode {
  const { movedAt, ...record } = member.file!;
  const back = to === `${row.path}/${member.relative}`;
  return { ...record, path: to, ...(back ? (movedAt ? { movedAt } : {}) : { movedAt: now.toISOString() }) };
}

import type { FileNode, FolderNode, Job, TrashRow, UploadSession } from '../ports';

// The states of the write-ordering protocol (README.md beside this file) as types, each derived from the
// fields stored today (no storage format change): a reader sees every state of a folder, a file's bytes or a
// job in one place, and a `switch` over `state` must handle each.

/** A folder's state: what readers see of it and whether writers may store into it. */
export type FolderState =
  /** Readers see it; writers may store into it. */
  | { state: 'live' }
  /** Taken by a recursive delete: gone for readers, with everything below it; refuses writers. */
  | { state: 'deleting'; mode: 'recursive' }
  /** Taken by an empty-folder delete, which removes it if it has no children or else clears the mark. */
  | { state: 'deleting'; mode: 'empty' }
  /** Taken by the folder move `job`, at either end: readers see it; writers and deletes wait for the move. */
  | { state: 'moving'; job: string };

/** The state of `folder`, from its `deleting` and `moving` fields (which the stores never set together). */
export function folderState(folder: Pick<FolderNode, 'deleting' | 'moving'>): FolderState {
  if (folder.deleting) return { state: 'deleting', mode: folder.deleting };
  if (folder.moving !== undefined) return { state: 'moving', job: folder.moving };
  return { state: 'live' };
}

/**
 * A recorded file's state: `pending` while the journal entry (or large-upload session) that wrote it may
 * still judge its bytes by this path, so the record is not moved; `settled` after. Whether that item is
 * still open is the uploads table's to say: `open` is asked only for a record that names one.
 */
export type RecordState = { state: 'pending'; item: string } | { state: 'settled' };

export function recordState(file: Pick<FileNode, 'pending'>, open: (item: string) => boolean): RecordState {
  return file.pending !== undefined && open(file.pending) ? { state: 'pending', item: file.pending } : { state: 'settled' };
}

/**
 * What names an object's bytes, in the order an upload goes through them (and a removal after): a journal
 * entry before its record is written, a record (pending, then settled), a journal entry again once a
 * transaction removed or replaced that record, then nothing (the object is deleted).
 */
export type BytesState =
  | { state: 'journaled'; entry: string }
  | { state: 'recorded'; record: RecordState; path: string }
  | { state: 'journaled for removal'; entry: string }
  /** Named by a trash row (a file's) or a member of one not claimed by a purge: restorable until its `purgeAt`. */
  | { state: 'trashed'; row: string }
  /** Named by a trash row claimed by a purge (or a member under one): deleted, then its items. */
  | { state: 'purging'; row: string }
  | { state: 'gone' };

/**
 * The state of an object's bytes, from the record that names it (at most one), the open journal entries that
 * name it, whether it is stored, and whether a record ever named it (an entry opened after its record went is
 * a removal's). `orphaned`: stored and named by nothing, which only an interrupted clean-up leaves (fsck's).
 */
export function bytesState(
  found: { record?: FileNode; entries: readonly string[]; stored: boolean; everRecorded: boolean; trash?: Pick<TrashRow, 'id' | 'purging'> },
  open: (item: string) => boolean,
): BytesState | { state: 'orphaned' } {
  if (found.record) return { state: 'recorded', record: recordState(found.record, open), path: found.record.path };
  // A trash item and an open entry may name one key (a pending record trashed): the trash item holds it.
  if (found.trash) return found.trash.purging !== undefined ? { state: 'purging', row: found.trash.id } : { state: 'trashed', row: found.trash.id };
  if (found.entries.length > 0) return found.everRecorded ? { state: 'journaled for removal', entry: found.entries[0] } : { state: 'journaled', entry: found.entries[0] };
  return found.stored ? { state: 'orphaned' } : { state: 'gone' };
}

/**
 * A large upload's session as a completion finds it, once claimed: `open` while its multipart upload stands
 * (nothing is assembled, so no record of it was ever written); `assembled` once an earlier completion put the
 * parts together, with whether a record of it may have been written since: `none` (no completion marked it
 * `recording` before a record write, or the last one released it knowing none of its records stands), or
 * `unknown` (a completion may have written the record and then died, or failed to end the session, before it
 * answered; the record may have been deleted, moved or replaced since). An `unknown` session's object is never
 * recorded again: a completion only confirms a record of it standing at its path (protocol/README.md, "A large
 * upload's session").
 */
export type SessionState = { state: 'open' } | { state: 'assembled'; record: 'none' | 'unknown' };

export function sessionState(multipartStands: boolean, session: Pick<UploadSession, 'recording'>): SessionState {
  if (multipartStands) return { state: 'open' };
  return { state: 'assembled', record: session.recording ? 'unknown' : 'none' };
}

/** A job's state: one step at a time works on a running job; a done one says how it ended. */
export type JobState = { state: 'running' } | { state: 'done'; ended: NonNullable<Job['ended']> | 'deleted' };

export function jobState(job: Pick<Job, 'status' | 'ended' | 'kind'>): JobState {
  if (job.status === 'running') return { state: 'running' };
  return { state: 'done', ended: job.ended ?? 'deleted' };
}

/**
 * The protocol's transitions of a folder, by the `NodeStore` call that makes each: its state before and
 * after. A call whose condition fails changes nothing (README.md, "Transitions").
 */
export const FOLDER_TRANSITIONS = {
  /** A writer makes a missing folder (unmarked), or a move makes its destination (marked from birth). */
  createFolder: { from: ['absent'], to: ['live', 'moving'] },
  /**
   * A delete takes the folder; `recursive` also takes one marked `empty`. Refused while a move holds it. A
   * writer letting go of a folder it made marks it `empty` only from `live` (`{ unmarked: true }`).
   */
  markDeleting: { from: ['live', 'deleting'], to: ['deleting'] },
  /** An empty-folder delete (or a writer letting go) found children and gives up. */
  unmarkDeleting: { from: ['deleting'], to: ['live'] },
  /** A delete removes the folder once it is empty. */
  removeFolder: { from: ['deleting'], to: ['absent'] },
  /** A folder move takes the folder (a source, or a subfolder before its children are read). */
  markMoving: { from: ['live', 'moving'], to: ['moving'] },
  /** A folder move is done with the folder (a destination), or stops. */
  unmarkMoving: { from: ['moving'], to: ['live'] },
  /**
   * A move removes an emptied source (its own mark), or a destination its own mark still holds
   * (`{ movingJob }`). (Writers letting go of a folder now mark it first: `markDeleting`, then `removeFolder`.)
   */
  removeIfSame: { from: ['live', 'moving', 'deleting'], to: ['absent'] },
} as const satisfies Record<string, { from: readonly (FolderState['state'] | 'absent')[]; to: readonly (FolderState['state'] | 'absent')[] }>;

/**
 * A trash row's state (protocol/README.md, "Trash"): a folder's row fills while its delete job runs; a row
 * is then trashed, and a restore or a purge claims it (one of them: each claim refuses the other).
 */
export type TrashState = { state: 'filling'; job?: string } | { state: 'trashed' } | { state: 'restoring'; job: string } | { state: 'purging'; by: string };

export function trashState(row: Pick<TrashRow, 'state' | 'job' | 'restoring' | 'purging'>): TrashState {
  if (row.state === 'filling') return { state: 'filling', ...(row.job !== undefined ? { job: row.job } : {}) };
  if (row.purging !== undefined) return { state: 'purging', by: row.purging };
  if (row.restoring !== undefined) return { state: 'restoring', job: row.restoring };
  return { state: 'trashed' };
}

/** The protocol's transitions of a trash row, by the call that makes each (each one conditional write). */
export const TRASH_TRANSITIONS = {
  /** A file delete or replacement writes a file's row trashed; a recursive delete writes its folder's row filling. */
  trashMany: { from: ['absent'], to: ['trashed'] },
  begin: { from: ['absent'], to: ['filling'] },
  /** The delete job is done: the row counts its files and gets its due entry. */
  filled: { from: ['filling'], to: ['trashed'] },
  /** A purge or a restore job claims the row (a purge that died is taken over past its lease). */
  claim: { from: ['trashed', 'purging', 'restoring'], to: ['purging', 'restoring'] },
  /**
   * A restore job ends with members left (they stayed: their paths were taken, or the job stopped), or its
   * request gives up its claim before any write into the tree (the destination changed meanwhile).
   */
  release: { from: ['restoring'], to: ['trashed'] },
  /** A restore job's page: its files' members leave the row (records in); the row stays claimed. */
  restoreMembers: { from: ['restoring'], to: ['restoring'] },
  /** A file's restore (its transaction), a purge after the bytes, a restore job that emptied the row. */
  restore: { from: ['trashed'], to: ['absent'] },
  remove: { from: ['purging', 'restoring'], to: ['absent'] },
} as const satisfies Record<string, { from: readonly (TrashState['state'] | 'absent')[]; to: readonly (TrashState['state'] | 'absent')[] }>;

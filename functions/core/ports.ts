import type { Readable } from 'node:stream';

/** A stored file: its record in the node table, pointing at its bytes in the object store. */
export interface FileNode {
  kind: 'file';
  id: string;
  path: string;
  size: number;
  contentType: string;
  createdAt: string;
  objectKey: string;
  /**
   * The content's hash, as S3 computes ETags: the hex MD5 of the bytes, or for a file assembled from parts
   * the hex MD5 of the parts' MD5s followed by `-<parts>`. Clients compute it locally to tell a file unchanged.
   */
  etag: string;
  /**
   * The uploads-table item (a journal entry, or a large upload's session) that still names this record's
   * bytes under its path: set by the upload that wrote the record, and stale once that item is gone. A
   * record is not moved while it stands (`protocol/states.ts`, `RecordState`).
   */
  pending?: string;
  /** When the record last moved (absent if never): a share link made before a move does not open after it, even back at its path. */
  movedAt?: string;
}

/** A folder; the root `/` exists implicitly and has no node. */
export interface FolderNode {
  kind: 'folder';
  id: string;
  path: string;
  createdAt: string;
  /**
   * Set once a delete has taken the folder: it refuses new children until the delete removes it (or, `empty`,
   * gives up), and with `recursive` it is gone for readers. States and transitions: `protocol/states.ts`.
   */
  deleting?: DeleteMark;
  /**
   * The id of the move job that took the folder, at either end: the folder being moved, and the folder it
   * is moved to. Readers see both (each file is at its old path or its new one, never both); writers and
   * deletes are refused until the move is done.
   */
  moving?: string;
  /**
   * Set once a mkdir answered for the folder, having found it made by another request (`keepFolder`): a
   * writer that made it and then fails leaves it (`markDeleting` with `{ unmarked: true }` refuses it), as
   * the mkdir promised it is there.
   */
  kept?: true;
  /**
   * Given to `createFolder` with `moving` by a folder move making a folder at its destination: the path of the
   * folder it stands for. Stored with the job as the item's `moveJob`, for the change feed to tell the move's
   * end (docs/change-feed-design.md); never read back.
   */
  movedFrom?: string;
}

export type DeleteMark = 'recursive' | 'empty';

/**
 * What `NodeStore.removeIfSame` asks of a folder besides its id: `unmarked`, no `deleting`, no `moving` and
 * not `kept` (writers letting go of a folder they made now mark it first, `markDeleting` with the same
 * condition; this one stays for a removal with no look for children); `movingJob`, that
 * job's `moving` mark (a move letting go of a folder it made, which another move of the same folder may have
 * made again with the same id).
 */
export type RemoveCondition = { unmarked: true } | { movingJob: string };

export type DriveNode = FileNode | FolderNode;

/** Bytes `start` to `end` of an object, both inclusive, as in HTTP's `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * What a conditional file write found: the file it replaced, or that a folder (or, not replacing, a file)
 * blocked it; `precondition` when the write carried a `WriteCondition` and was refused (by that condition,
 * which a folder at the path fails too).
 */
export type PutFileResult = { ok: true; replaced?: FileNode } | { ok: false; precondition?: true };

/**
 * What a request asks of the file its write replaces, checked by the write itself (protocol/README.md,
 * "Transitions"): `ifMatch`, a file with that ETag (`FileNode.etag`, unquoted) stands at the path;
 * `ifNoneMatch`, nothing does. Either way the write's own record passes too (a retry of a saved write).
 */
export type WriteCondition = { ifMatch: string } | { ifNoneMatch: '*' };

/**
 * The records of every drive, keyed by drive + parent folder + name. Every method is scoped to one
 * drive; reads are strongly consistent. Each write is one conditional write; the write-ordering protocol
 * that orders them (which call makes which state of a folder, under which condition, and the order each
 * operation follows) is stated in `protocol/README.md`.
 */
export interface NodeStore {
  /** The node at `path`, or undefined. */
  get(drive: string, path: string): Promise<DriveNode | undefined>;
  /** The nodes at `paths` that exist, by path (batched reads). */
  getMany(drive: string, paths: readonly string[]): Promise<Map<string, DriveNode>>;
  /** Every direct child of `folder`, all pages. */
  children(drive: string, folder: string): Promise<DriveNode[]>;
  /**
   * At most `limit` direct children of `folder` whose names come after `after` (all, without it), in name
   * byte order; `last` names the last one read when more follow (a page may be shorter than `limit`).
   */
  childrenPage(drive: string, folder: string, limit: number, after?: string): Promise<{ nodes: DriveNode[]; last?: string }>;
  /** Whether `folder` has at least one child. */
  hasChildren(drive: string, folder: string): Promise<boolean>;
  /**
   * Writes `folder` unless a node holds its path; returns the folder there afterwards (marks included), or
   * undefined for a file. A folder with a `moving` mark is written only where nothing stands.
   */
  createFolder(drive: string, folder: FolderNode): Promise<FolderNode | undefined>;
  /**
   * Notes the folder `folder` (by id) `kept`, as a mkdir answers for it; returns it as noted (marks included),
   * or undefined, writing nothing, if that folder is no longer there (removed, or made anew with another id).
   */
  keepFolder(drive: string, folder: FolderNode): Promise<FolderNode | undefined>;
  /**
   * Writes `file` unless a folder holds its path (or, with `replace: false`, anything); reports the file it
   * replaced. With `condition`, only if the condition holds (it then stands for `replace`), else `{ ok: false, precondition: true }`.
   */
  putFile(drive: string, file: FileNode, options?: { replace?: boolean; condition?: WriteCondition }): Promise<PutFileResult>;
  /**
   * Removes the node at `path` if it is still the one with id `id` (a write undone, or a node let go), and, as
   * `only` asks, a folder no delete or move has marked (`unmarked`), or one the move `movingJob` holds.
   * Returns false, changing nothing, when that node is not there (never written, or replaced since) or the
   * condition fails.
   */
  removeIfSame(drive: string, path: string, id: string, only?: RemoveCondition): Promise<boolean>;
  /**
   * Puts `previous` back at `path` if the node there is still the one with id `id` (a replacing write undone).
   * Returns false, changing nothing, when that node is not there (never written, or replaced since).
   */
  restoreIfSame(drive: string, path: string, id: string, previous: DriveNode): Promise<boolean>;
  /**
   * Marks the folder `folder` (by id) as taken by a delete (`recursive` wins over `empty`); returns it as
   * marked, or undefined if that folder is no longer there. A folder a move has taken is returned unmarked,
   * with its `moving`: the delete must wait for the move. With `{ unmarked: true }` (a writer letting go of
   * a folder it made), only a folder with no `deleting`, no `moving` and not `kept` is marked; any other
   * answers undefined.
   */
  markDeleting(drive: string, folder: FolderNode, mark: DeleteMark, only?: { unmarked: true }): Promise<FolderNode | undefined>;
  /**
   * Marks the folder `folder` (by id) as taken by the move `job`, unless a delete or another move has it;
   * returns it as marked, or undefined.
   */
  markMoving(drive: string, folder: FolderNode, job: string): Promise<FolderNode | undefined>;
  /**
   * Clears the move `job`'s mark from the folder `folder` (by id); false if it does not hold it. `stopped`: the
   * move stopped, and the folder stays where it was made (the change feed shows it made, not moved).
   */
  unmarkMoving(drive: string, folder: FolderNode, job: string, ended?: 'stopped'): Promise<boolean>;
  /** Clears an `empty` mark of the folder `folder` (by id): the delete gave up; false if it is not there. */
  unmarkDeleting(drive: string, folder: FolderNode): Promise<boolean>;
  /** Removes the folder `folder` if it is still there with its id and a delete mark; false otherwise. */
  removeFolder(drive: string, folder: FolderNode): Promise<boolean>;
}

/**
 * Set (true) by a store's adapter on the error of a write that no attempt of can have made: the store refused
 * each attempt outright (a throttle, a malformed request). Absent, the write may have been made: a lost reply,
 * a timeout or a server fault on some attempt (`NodeStore.putFile`).
 */
export const WRITE_REFUSED = Symbol.for('drive.writeRefused');

/**
 * Writes that change where a file's record is and the bookkeeping of its bytes at once: each is one
 * DynamoDB transaction, all or nothing, made with an idempotency token (a retry after a lost reply finds its
 * own write done, and an outcome never rests on reading an empty path, which a move also leaves). Their
 * conditions, and why each is there, are in `protocol/README.md` ("Transitions"): a move is conditional on
 * the ids read at both ends, on both parents standing unmarked (but for the folder move making it), and on
 * the record's `pending` item being closed; a removal opens a journal entry for the bytes in the same write.
 */
export interface FileRecords {
  /** Moves `file` (as read at its path) to `to`, under the conditions above. */
  move(drive: string, file: FileNode, to: string, expected: MoveExpectation): Promise<MoveOutcome>;
  /**
   * Removes the records of `files` (distinct paths, at most `MAX_FILES_PER_REMOVE`) if each still holds its
   * id, and opens one journal entry for their bytes (to be swept after `sweepAfter`), all in one write:
   * returns the entry's id; or, if any record changed, removes nothing and returns the files whose record did.
   */
  removeMany(drive: string, files: readonly FileNode[], sweepAfter: Date): Promise<{ entry: string } | { changed: FileNode[] }>;
  /**
   * Moves the records of `files` (distinct paths, at most `MAX_FILES_PER_TRASH`) into the trash if each still
   * holds its id, all in one write (protocol/README.md, "Trash"): with `rows`, each becomes a row of its own
   * (with its due entry); with `folder`, each becomes a member of that folder row (its path relative to the
   * row's). A record still `pending` gets its note in the same write. Returns the rows written (none for
   * members); or, if any record changed, writes nothing and returns the files whose record did.
   */
  trashMany(drive: string, files: readonly FileNode[], into: TrashInto): Promise<{ trashed: TrashRow[] } | { changed: FileNode[] }>;
  /**
   * Puts the file of the trash row `row` back as a record at `to` (the same id, key, ETag, size and creation
   * time; `movedAt` set when `to` is not where it was taken from) and removes the row and its due entry, in
   * one write, if: at `to` stands nothing (or `expected.replacing`, which becomes a row of its own, `replaced`);
   * the parent (`expected.parent`, none for the root) stands unmarked; the row stands unclaimed (given
   * `expected.job`: claimed by that job, and no other) and before its `purgeAt` at `expected.now`.
   */
  restore(drive: string, row: TrashRow, to: string, expected: RestoreExpectation): Promise<RestoreOutcome>;
  /**
   * Writes a row (stamped `stamp`) and its due entry for each of `files`, records a write has just replaced
   * (an upload's step 7, in place of deleting their bytes), with each pending record's note, in one write
   * (at most `MAX_FILES_PER_TRASH`). Unconditional: the records are gone already, and their keys are named by
   * nothing else. But `once` (the journal sweep's, whose runs may overlap): each note only where none stands
   * yet, so that a key another run has just put into the trash gets no second row: a file whose note stands is
   * left out (no row), the others are written. Returns the rows written.
   */
  keepReplaced(drive: string, files: readonly FileNode[], stamp: TrashStamp, options?: { once?: boolean }): Promise<TrashRow[]>;
  /**
   * Puts the files of members of the folder row `row` back as records at their `to` paths (a folder restore's
   * page, at most `MAX_FILES_PER_TRASH`; the same id, key, ETag, size and creation time) and removes those
   * members, in one write, if: at each `to` stands nothing; each member stands; each of `expected.parents`
   * stands unmarked; the row stands `trashed`, claimed by `expected.job`, before its `purgeAt`. Returns the
   * records written; or, writing nothing, the indexes of the files whose destination is taken or whose member
   * is gone (`taken`: tried again without them, they stay in the trash), or the first other condition that failed.
   */
  restoreMembers(drive: string, row: TrashRow, files: readonly { member: TrashMember; to: string }[], expected: MembersExpectation): Promise<MembersOutcome>;
}

/** What a folder restore's page expects: the folders its files go into, its job's claim on the row, its clock. */
export interface MembersExpectation {
  parents: readonly FolderNode[];
  job: string;
  now: Date;
}

/** A folder restore's page written, or what refused it. */
export type MembersOutcome = { restored: FileNode[] } | { restored: false; taken: number[] } | { restored: false; changed: 'folders' | 'item' };

/** Records one `FileRecords.trashMany` takes: with a row and a due entry each, 75 of a transaction's 100 items. */
export const MAX_FILES_PER_TRASH = 25;

/** Why a trash item was made: a delete, or a write that replaced the file. */
export type TrashReason = 'deleted' | 'replaced';

/** What every row made by one write shares: why, when, by which key, and when it is purged. */
export interface TrashStamp {
  reason: TrashReason;
  deletedAt: string;
  purgeAt: string;
  /** The id of the key whose request trashed it. */
  deletedBy?: string;
}

/**
 * Where `trashMany` puts the records: rows of their own, members of a folder row, or (one record, a restore
 * withdrawing) back into the row it was restored from, as that row was. With `putBack`, the row the restore
 * made of the file it overwrote: that file's record takes the path again in the same write (in place of the
 * restored one, not removed), and its row and due entry go, if that row still stands restorable at `now` and
 * unclaimed (else nothing is written: a restore or purge of it explains it).
 */
export type TrashInto = { rows: TrashStamp } | { folder: TrashRow } | { back: TrashRow; putBack?: { row: TrashRow; now: Date } };

/**
 * An item the trash lists (protocol/README.md, "Trash"): a file deleted or replaced (its record kept whole), or
 * a folder deleted (its files and folders are its members). Never a node: no path can produce its key.
 */
export interface TrashRow extends TrashStamp {
  /** A UUIDv7: ids sort by the time they were made. */
  id: string;
  type: 'file' | 'folder';
  /** Where it was taken from. */
  path: string;
  /** Its bytes (a folder: its files' sum). */
  bytes: number;
  /** 1 for a file; a folder's file count. */
  files: number;
  /** A file's record, as it stood. */
  file?: FileNode;
  /** A folder's id and creation time. */
  folderId?: string;
  folderCreatedAt?: string;
  /** A folder's row is `filling` while its delete job runs, `trashed` after; a file's is `trashed`. */
  state: 'filling' | 'trashed';
  /** The delete job filling a folder's row. */
  job?: string;
  /** A claim: the restore job, or the purge (request or job id), that holds the row; when it was taken. */
  restoring?: string;
  purging?: string;
  claimedAt?: string;
}

/** A file or folder inside a trashed folder: `relative` is its path below the row's (no leading slash). */
export interface TrashMember {
  relative: string;
  file?: FileNode;
  folder?: { id: string; createdAt: string };
}

/** What a restore expects: the parent it read at the destination, the file it replaces there, its clock. */
export interface RestoreExpectation {
  parent?: FolderNode;
  /** The file at `to` the restore overwrites, made a row (`stamp`, `replaced`) in the same write. */
  replacing?: FileNode;
  stamp?: TrashStamp;
  /** When the restore is made: a row at or past its `purgeAt` is no longer restorable. */
  now: Date;
  /** A restore job holding the row's claim: the row must be claimed by it (an unclaimed row refuses it too). */
  job?: string;
}

/** A restore done (the record written, and the row made of what it replaced), or which expectation failed. */
export type RestoreOutcome = { restored: true; file: FileNode; replaced?: TrashRow } | { restored: false; changed: 'destination' | 'folders' | 'item' };

/**
 * The trash's own items (rows, members, due entries) in the nodes table, beside the records; the writes that
 * move a record into or out of the trash are `FileRecords`' (one transaction each).
 */
export interface TrashStore {
  /** The row `id` of `drive` (read consistently), or undefined. */
  get(drive: string, id: string): Promise<TrashRow | undefined>;
  /** At most `limit` rows of `drive`, newest first, after the row id `after`; `last` when more may follow. */
  list(drive: string, limit: number, after?: string): Promise<{ rows: TrashRow[]; last?: string }>;
  /** At most `limit` members of the row `id`, in path order (parents first), after `after`. */
  members(drive: string, id: string, limit: number, after?: string): Promise<{ members: TrashMember[]; last?: string }>;
  /** Writes a folder's row as its delete begins (`filling`, no due entry yet). */
  begin(drive: string, row: TrashRow): Promise<void>;
  /** Puts a member of the folder row `id` (a folder, before its walk descends; idempotent). */
  putMember(drive: string, id: string, member: TrashMember): Promise<void>;
  /** Removes a folder's row still `filling` with no member (its delete was refused before its mark); false otherwise. */
  abandon(drive: string, id: string): Promise<boolean>;
  /** Ends a folder row's filling: `trashed`, with its counts and `purgeAt`, and its due entry written (one write); false if not filling. */
  filled(drive: string, id: string, counts: { files: number; bytes: number; purgeAt: string }): Promise<boolean>;
  /**
   * Claims the row for a purge or a restore by `by` at `now`: the row stands `trashed` with no claim, or a
   * claim of its own kind by `by`, or (a purge) a purge's claim older than `leaseMs`. Returns the row as
   * claimed, or undefined (nothing written).
   */
  claim(drive: string, id: string, kind: 'purge' | 'restore', by: string, now: Date, leaseMs: number): Promise<TrashRow | undefined>;
  /**
   * Gives up a restore's claim `by` (the row stays, with what is left of it: `counts`; given counts, the row's
   * folder was made by that restore, so its `folderId` goes: a later restore of what is left makes a new one).
   */
  release(drive: string, id: string, by: string, counts?: { files: number; bytes: number }): Promise<boolean>;
  /** Removes members of the row `id` (a purge's, after their bytes). */
  removeMembers(drive: string, id: string, relatives: readonly string[]): Promise<void>;
  /** Removes the row and its due entry if claimed by `by` (a purge after the bytes, a restore that emptied it); false otherwise. */
  remove(drive: string, id: string, by: string): Promise<boolean>;
  /** Rows due by `now` (their `purgeAt` passed), oldest first, at most `limit`: the sweep's index. */
  due(now: Date, limit: number): Promise<{ drive: string; id: string; purgeAt: string }[]>;
  /** Drops a due entry whose row is gone (the sweep). */
  dropDue(entry: { drive: string; id: string; purgeAt: string }): Promise<void>;
}

/** Records one `FileRecords.removeMany` takes: a DynamoDB transaction holds 100 items, the journal entry one of them. */
export const MAX_FILES_PER_REMOVE = 99;

/** What a move expects to find: the folders it reads as the parents (none for the root), and the file it replaces. */
export interface MoveExpectation {
  sourceParent?: FolderNode;
  destinationParent?: FolderNode;
  /** The file at `to` the move replaces (its bytes are noted in the journal in the same write); none: `to` is empty. */
  replacing?: FileNode;
  /** When the journal entry for replaced bytes may be swept. */
  sweepAfter: Date;
  /** With trash on: the replaced file becomes a row (this stamp, `replaced`) in the move's write instead of a journal entry. */
  trash?: TrashStamp;
  /** The folder move making this move, whose marks the parents may carry; any other move's mark refuses it. */
  job?: string;
}

/** A move done (with the journal entry naming the bytes it replaced), or which expectation failed. */
export type MoveOutcome = { moved: true; journal?: string; trashed?: TrashRow } | { moved: false; changed: 'source' | 'destination' | 'folders' | 'pending' };

/** The bytes of files, under opaque keys. */
export interface ObjectStore {
  /**
   * Stores `body` under `key`. `md5`, the body's MD5 in hex when the caller has it (a file's etag), is how the
   * store has the bytes checked on arrival instead of hashing them again (S3's `Content-MD5`).
   */
  put(key: string, body: Buffer, contentType: string, md5?: string): Promise<void>;
  /**
   * Opens the object (or only `range` of it, which must lie within the object) for reading, or undefined if
   * there is none under `key`. `size` is the number of bytes the body will yield.
   */
  open(key: string, range?: ByteRange): Promise<{ body: Readable; size: number } | undefined>;
  /** Deletes the objects under `keys` (batched); absent keys are ignored. */
  deleteMany(keys: readonly string[]): Promise<void>;
}

/** Server-side copies of objects: no byte passes through the function. */
export interface ObjectCopier {
  /**
   * Copies the object `from` (of `size` bytes) to `to`; returns the copy's content hash as S3 computes its
   * ETag (unquoted), or undefined if there is no object `from`.
   */
  copy(from: string, to: string, size: number): Promise<string | undefined>;
}

/** Bytes an upload stores ahead of their records: each file's path and the key of its bytes. */
export interface JournalEntry {
  id: string;
  drive: string;
  files: { path: string; objectKey: string }[];
  /** When the upload that opened the entry has surely ended, whatever became of it. */
  sweepAfter: string;
  /** The id of the key whose request opened it (`UploadJournal.open`'s `by`): who removed what its sweep trashes. */
  createdBy?: string;
  /** Noted by `UploadJournal.withdraw`: the writer that opened it withdrew, so no record of its may stand. */
  withdrawn?: true;
  /** The note's records its own replaced (`WithdrawnNote`), each at its path: what goes back where its own goes. */
  replaced?: FileNode[];
  /**
   * Bytes of records in `replaced` that the writer, finding its own record taken, left to the sweep
   * (`UploadJournal.leave`): kept if a record at the path names them then; else, with the trash on, trashed
   * (`replaced`, by `createdBy`) as the record `replaced` names, or deleted where the note could not hold it (gap 12).
   */
  left?: { path: string; objectKey: string }[];
}

/**
 * What a writer noted on its journal entry as it withdrew (`UploadJournal.withdraw`): the record each of its own
 * replaced, at that record's path (none where it replaced nothing). A writer that put one of its records back
 * puts back, in its place, what it replaced (protocol/README.md, "Writers", step 6; gap 12).
 */
export interface WithdrawnNote {
  replaced: FileNode[];
}

/**
 * A note of the bytes each upload is about to store, taken before they are stored and closed once the
 * upload has accounted for them (recorded, or deleted). An upload interrupted in between (a timeout, a
 * crash) leaves its entry open, and the sweep (`sweepJournal`) deletes the bytes no record points to.
 */
export interface UploadJournal {
  /**
   * Notes `files` of `drive`, to be swept after `sweepAfter` unless closed first, by the request of the key `by`;
   * returns the id of each file's entry (files share one).
   */
  open(drive: string, files: readonly { path: string; objectKey: string }[], sweepAfter: Date, by?: string): Promise<string[]>;
  /** Closes entries whose bytes are accounted for (an id named twice is closed once). */
  close(ids: readonly string[]): Promise<void>;
  /** The open entries past their `sweepAfter`. */
  due(now: Date): Promise<JournalEntry[]>;
  /** The object keys every open entry names, its `left` ones included (fsck counts them in flight, not orphaned). */
  openKeys(): Promise<string[]>;
  /**
   * Notes on the open entries `ids` that the writer that opened them withdrew (409) and leaves them to the
   * sweep: written before its undo, so that a writer that replaced one of its records and puts it back reads
   * the note after (protocol/README.md, "Writers", step 6). `replaced[i]` (parallel to `ids`): the record the
   * commit's i-th record replaced, which the note carries (`WithdrawnNote`). Only for entries that one commit's
   * records alone name (an upload of several files, a file copy); never a large upload's session. A closed
   * entry is left closed. Failure paths only.
   */
  withdraw(ids: readonly string[], replaced?: readonly (FileNode | undefined)[]): Promise<void>;
  /**
   * The note on the item under `id` (what a record's `pending` names) if it is an open journal entry noted
   * withdrawn: a read (GetItem, consistent). An entry closed (its upload stored its files), one still open
   * without the note (its upload has not withdrawn, and if it does it finds its record itself), or a large
   * upload's session all answer undefined. Asked only on an upload's failure path, after it put the record back.
   */
  withdrew(id: string): Promise<WithdrawnNote | undefined>;
  /**
   * Notes on the open entries `ids` (`ids[i]` the entry of `files[i]`; undefined: none) the bytes of records
   * its note names that the sweep is to judge (`JournalEntry.left`): the writer found its own record taken, so
   * whether what it replaced comes back is another request's doing. One conditional write an entry; a closed
   * entry is left closed. Failure paths only (gap 12).
   */
  leave(ids: readonly string[], files: readonly ({ path: string; objectKey: string } | undefined)[]): Promise<void>;
  /**
   * The trash notes on keys of the entry `entry` (`TrashNote`), by key: which trash item now holds bytes the
   * entry names, so that the sweep keeps them (or, the entry noted withdrawn, purges that item). One batched read.
   */
  trashNotes(entry: string, keys: readonly string[]): Promise<Map<string, TrashNote>>;
}

/**
 * Written with every trash item made of a record still `pending` (protocol/README.md, "Trash"): the item that
 * holds the bytes its journal entry names. `relative`: a member of the folder row `id`.
 */
export interface TrashNote {
  drive: string;
  id: string;
  relative?: string;
}

/**
 * Work on a folder too big for one request (an extension of the spec): a recursive delete, or a folder move.
 * Taken by a request, which answers `200` if the work is done within its time budget, else `202` with the
 * job, which the worker finishes in steps.
 */
export interface Job {
  /** The id clients see (a UUID). */
  id: string;
  drive: string;
  /**
   * `delete`: everything in `path` goes. `move`: the folder at `path`, with everything in it, goes to `to`.
   * `copy`: everything in `path` is copied below `to`. `empty`: the folder at `path` (`folderId`) goes if it
   * has no children, as an empty-folder delete (or a writer letting go of a folder it made) marked it `empty`;
   * else its mark is cleared (noted before the mark, so that a request dying after it leaves the job to
   * finish it; never shown to clients, whose requests answer at once). `empty-trash`: every trash row at or
   * below `path` trashed by the request's time purged (`DELETE /drive/trash?path=`; no folder: `folderId` is '').
   */
  kind: 'delete' | 'move' | 'copy' | 'empty' | 'restore' | 'empty-trash';
  /** The folder the job works on, and the id of the folder it marked there. */
  path: string;
  folderId: string;
  /**
   * A move's or copy's destination (where a moved folder keeps its id), and the id of the folder a copy made
   * there; a restore's destination and the folder it restores into (`toCreatedAt`: that folder's creation time).
   */
  to?: string;
  toId?: string;
  toCreatedAt?: string;
  /** A restore's trash row (`restore`: a trashed folder put back at `to`, `path` being where it was taken from). */
  trashId?: string;
  /**
   * How far a copy has gone: the last path below `path` it copied, in the listing's order (an empty-trash
   * job: the last trash row id it passed, newest first; rows after it in that order are left to do). A move notes
   * `MOVE_READ_ABOVE` here once its request has read the folders above both ends after its marks: a step of a
   * move without it reads them itself (protocol/README.md, "A folder move", step 5).
   */
  cursor?: string;
  status: 'running' | 'done';
  /** Files deleted (or moved) so far; at the end, all of them. */
  files: number;
  /** An empty-trash job's trash items purged so far, and the bytes they held (`files` counts their files). */
  items?: number;
  bytes?: number;
  /**
   * How a move that is done ended: `moved`, or `stopped` when something it could not wait out blocked it (a
   * path in the destination taken by another request): what had moved stays moved, the rest stays put.
   */
  ended?: 'moved' | 'copied' | 'restored' | 'stopped';
  createdAt: string;
  /**
   * The id of the key whose request started it (never its secret), when that request had one: a step the
   * worker runs writes trash rows and journal entries under it, as the request would have (`deleted_by`).
   */
  createdBy?: string;
  /** When a request or the worker last advanced the job: one that stops advancing is resumed (`resumeStalledJobs`). */
  updatedAt: string;
}

/** Jobs, each kept a day after it ends for clients to read. */
export interface JobStore {
  create(job: Job): Promise<void>;
  /** The job `id` of `drive`, or undefined (another drive's jobs are not found). */
  get(drive: string, id: string): Promise<Job | undefined>;
  /**
   * Claims the job `id` of `drive` for `leaseMs`, so that one step at a time works on it: returns it, `'busy'`
   * while another step's claim holds, or undefined if there is none. A claim whose step died lapses.
   */
  claim(drive: string, id: string, leaseMs: number): Promise<Job | 'busy' | undefined>;
  /** Gives up a claim. */
  release(id: string): Promise<void>;
  /** Adds `files` to the job's count and notes it advanced now (to `cursor`, for a copy; `more`: an empty-trash job's items and bytes). */
  advanced(id: string, files: number, cursor?: string, more?: { items: number; bytes: number }): Promise<void>;
  /** Ends the job: done, with `files` more deleted or moved (and, for a move, how it `ended`). */
  finish(id: string, files: number, ended?: Job['ended']): Promise<void>;
  /** Running jobs that have not advanced since `before`. */
  stalled(before: Date): Promise<Job[]>;
  /**
   * Adds `job` to its drive's list of running jobs (one item per drive, which `admitJob` caps) if the list
   * holds fewer than `max`, in one conditional write, noting when; false (nothing written) if it is full.
   */
  reserveBackground(job: Pick<Job, 'id' | 'drive'>, max: number): Promise<boolean>;
  /** Notes `job` as handed to the worker (idempotent, whatever the list holds). */
  toBackground(job: Pick<Job, 'id' | 'drive'>): Promise<void>;
  /** Takes `job` off its drive's list of background jobs (idempotent). */
  fromBackground(job: Pick<Job, 'id' | 'drive'>): Promise<void>;
  /**
   * The jobs `drive`'s list holds, with when each was reserved (none for one only handed off); some may have
   * ended since, or never been written: the list is a hint, checked by `admitJob`.
   */
  inBackground(drive: string): Promise<BackgroundEntry[]>;
}

/** A job on its drive's list of running jobs. */
export interface BackgroundEntry {
  id: string;
  /** When `reserveBackground` listed it (ISO 8601). */
  reservedAt?: string;
}

/** The queue that feeds the job worker (SQS in AWS, the host's embedded queue locally). */
export interface JobQueue {
  /** Asks the worker to advance `job` (after `delaySeconds`, at most 900): at least once, maybe more, as a step is safe to run twice. */
  send(job: Pick<Job, 'id' | 'drive'>, options?: { delaySeconds?: number }): Promise<void>;
}

/** A large upload in progress: bytes go straight to S3 in parts; the record is written on completion. */
export interface UploadSession {
  /** The `upload_id` clients see. */
  id: string;
  drive: string;
  path: string;
  size: number;
  contentType: string;
  /** The file's id and object key, fixed at the start so the parts land where the record will point. */
  fileId: string;
  objectKey: string;
  /** The object store's id of the multipart upload. */
  multipartId: string;
  partSize: number;
  partCount: number;
  /** The id of the key that started it (never its secret): to every other key but an admin it does not exist. Absent on sessions from before. */
  createdBy?: string;
  /**
   * A key minted by the token exchange that started it: its trust rule and token subject. A key minted later
   * under the same rule for the same subject (the job's next exchange) may carry the session on.
   */
  createdUnder?: { trustId: string; subject: string };
  /**
   * The start's `if_match` / `if_none_match`: checked at the start, again before assembly, and held by the
   * record's write at completion (`putFile`'s condition). Absent: the file replaces whatever stands there.
   */
  condition?: WriteCondition;
  createdAt: string;
  expiresAt: string;
  /**
   * Set by a completion once the object is assembled, just before it writes the record (`markRecording`), and
   * removed by its release when it ends knowing that no record of this session stands or can come back: while
   * set, a record of it may have been written (and deleted, moved or replaced since), so no later completion
   * writes one again (`sessionState`, protocol/README.md, "A large upload's session").
   */
  recording?: true;
}

/** Upload sessions, each removed by the store once past `expiresAt` (eventually). */
export interface UploadSessionStore {
  put(session: UploadSession): Promise<void>;
  /** The session `id` of `drive`, claimed or not; undefined if there is none (or it is another drive's). */
  get(drive: string, id: string): Promise<UploadSession | undefined>;
  /**
   * Claims the session `id` of `drive` for `leaseMs`, so that one request at a time completes or aborts it:
   * returns it, `'busy'` while another claim holds it, or undefined if there is none (or it is another drive's).
   * A claim whose holder died lapses after `leaseMs`.
   */
  claim(drive: string, id: string, leaseMs: number): Promise<UploadSession | 'busy' | undefined>;
  /** Sets `recording` on the session `id` (one conditional write; a session gone meanwhile stays gone). */
  markRecording(id: string): Promise<void>;
  /**
   * Gives up a claim and keeps the session, for another try; `recordFree`: the holder knows that no record
   * of the session stands or can come back, and `recording` is removed in the same write.
   */
  release(id: string, recordFree?: boolean): Promise<void>;
  /** Ends the session. */
  remove(id: string): Promise<void>;
}

/** A part as the object store holds it. */
export interface StoredPart {
  number: number;
  etag: string;
  size: number;
}

/** What a presigned read URL makes its answer say: the headers the API's own download would send. */
export interface ReadUrlHeaders {
  contentType: string;
  contentDisposition: string;
  cacheControl: string;
}

/** Short-lived URLs that read one object straight from the object store, with no API in between. */
export interface ObjectUrls {
  /**
   * A presigned GET of the object `key`, valid for `expiresInSeconds`, whose answer carries `headers` in place
   * of the object's own (S3's `response-*` overrides). It reads that key and no other; Drive never rewrites a
   * key (every upload and copy writes a fresh one), so it reads the bytes the record named when it was signed,
   * or nothing once they are deleted.
   */
  readUrl(key: string, headers: ReadUrlHeaders, expiresInSeconds: number): Promise<string>;
}

/** Multipart uploads in the object store, with parts sent by clients to presigned URLs. */
export interface MultipartStore {
  /** Starts a multipart upload of the object `key`; returns its id. */
  begin(key: string, contentType: string): Promise<string>;
  /** Presigned URLs for parts `first` to `first + count - 1`, each valid for `expiresInSeconds`. */
  partUrls(key: string, multipartId: string, first: number, count: number, expiresInSeconds: number): Promise<string[]>;
  /** The parts uploaded so far, by number; undefined if the upload no longer exists. */
  listParts(key: string, multipartId: string): Promise<StoredPart[] | undefined>;
  /**
   * Assembles the object from `parts` (ascending): `'done'`, or `'gone'` if the upload no longer exists (it
   * was completed or aborted), or `'rejected'` if the store refused the parts (one was replaced meanwhile).
   */
  complete(key: string, multipartId: string, parts: readonly { number: number; etag: string }[]): Promise<'done' | 'gone' | 'rejected'>;
  /**
   * The size and content hash of the object `key` (S3's ETag, unquoted: for an object assembled from parts,
   * the MD5 of their MD5s with `-<parts>`), or undefined if there is none.
   */
  head(key: string): Promise<{ size: number; etag: string } | undefined>;
  /** Abandons the upload and its parts; an upload already gone is no error. */
  abort(key: string, multipartId: string): Promise<void>;
}

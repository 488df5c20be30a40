import type { components } from './generated/drive-api';

// The API's answers as the client reads them: the types openapi-typescript generates from the API's OpenAPI
// document (./generated/drive-api.ts, written by `npm run openapi` at the repository's root, checked by a test
// there), less or plus what the client itself tolerates or adds, said at each.

type Wire = components['schemas'];

/** A stored file, as upload and large-upload completion return it (spec section 2). */
export type DriveFile = Wire['File'];

/**
 * A file as a listing shows it: a `DriveFile` without `url`. Its `etag`, only when listed with `etags: true`,
 * is the content hash as S3 computes ETags (hex MD5 for a file stored by one upload request; `<hex MD5 of the
 * parts' MD5s>-<parts>` for a large upload). Files stored before the server kept hashes show their `id` there.
 */
export type DriveFileEntry = Wire['FileEntry'];

/** A folder as a listing shows it. */
export type DriveFolderEntry = Wire['FolderEntry'];

/** The contents of a folder (with `recursive`, at every depth). */
export type Listing = Wire['Listing'];

/** One change in the drive, as the change feed gives it (GET /drive/changes). */
export type DriveChange = Wire['Change'];

/**
 * A page of a folder's recent activity (GET /drive/changes/recent): its changes newest first, a feed cursor
 * that follows on after them, and `next_before` for the page of older ones (null when none is older).
 */
export type RecentChanges = Wire['RecentChanges'];

/** A folder, as creating it returns it. */
export type DriveFolder = Wire['Folder'];

/** What deleting files did: the paths whose file is gone, and those that held none. */
export type FilesDeletion = Wire['DeletedFiles'] & {
  /**
   * Paths a retry found empty after an attempt that got no clear answer: that attempt deleted them (its
   * answer is lost), or they held nothing. Either way no file is there.
   */
  already_gone: string[];
};

/** What deleting a folder did. `files_deleted` is 0 when `alreadyGone`. */
export type FolderDeletion = Wire['DeletedFolder'] & {
  /**
   * A retry found the folder already gone after an earlier attempt got no clear answer: that attempt
   * deleted it (its `files_deleted` is lost), or someone else did. Either way the folder is gone.
   */
  alreadyGone?: boolean;
};

/** A delete too big for one request, as `GET /drive/jobs/{id}` reports it (the server answered `202`). */
export type DeleteJob = Wire['DeleteJob'];

/** What a move or a copy answers: the File or Folder entry at its new path, as a listing shows it. */
export type DriveEntry = DriveFileEntry | DriveFolderEntry;

/** What a job that stopped short failed with: the API's code and message. */
export type JobError = Wire['JobFailure'];

/**
 * A folder move too big for one request, as `GET /drive/jobs/{id}` reports it (the server answered `202`):
 * `result` is the folder at `to` once done, null until then and for a move that stopped short (`error`:
 * what had moved is at `to`, the rest still at `path`).
 */
export type MoveJob = Wire['MoveJob'];

/** A folder copy too big for one request, as `GET /drive/jobs/{id}` reports it (the server answered `202`). */
export type CopyJob = Wire['CopyJob'];

/**
 * A folder restore too big for one request, as `GET /drive/jobs/{id}` reports it (the server answered `202`):
 * `result` is the restored folder once done; a restore a delete or move of the destination stopped ends
 * `done` with `result: null` and an `error`, what it did not restore still in the trash.
 */
export type RestoreJob = Wire['RestoreJob'];

/**
 * Emptying a folder's trash, too much for one request, as `GET /drive/jobs/{id}` reports it (the server
 * answered `202`): `files_purged` so far, and once done the `result` the request would have answered.
 */
export type EmptyTrashJob = Wire['EmptyTrashJob'];

/** Any job `GET /drive/jobs/{id}` reports. */
export type DriveJob = DeleteJob | MoveJob | CopyJob | RestoreJob | EmptyTrashJob;

/** Something a delete or a replacement put in the trash (issue 28), as `GET /drive/trash` lists it. */
export type TrashItem = Wire['TrashItem'];

/** One page of the trash: its items newest first, the cursor of the next page, and what the trash holds in the scope asked. */
export type TrashPage = Wire['TrashPage'];

/**
 * What a restore answers: the File, or the Folder (a folder item comes back whole, with its ids); a folder
 * restored by a job, the job's `result`: the Folder entry (`id`, `name`, `path`), as a move's job gives it.
 */
export type RestoredEntry = DriveFile | DriveFolder | DriveFolderEntry;

/** What purging one trash item freed (`DELETE /drive/trash/{id}`). */
export type PurgedItem = Wire['PurgedItem'];

/** What emptying a folder's trash purged (`DELETE /drive/trash?path=`). */
export type EmptiedTrash = Wire['EmptiedTrash'];

/**
 * The answer to `POST /drive/uploads`: a large-upload session with a presigned URL per part. `part_count` and
 * `next_part` may be absent, from a server before paging: then `parts` holds every part's URL.
 */
export type UploadSession = Omit<Wire['UploadSession'], 'part_count' | 'next_part'> & Partial<Pick<Wire['UploadSession'], 'part_count' | 'next_part'>>;

/** A file's headers, as `HEAD /drive/download` gives them (the client's own: headers, not a JSON body). */
export interface FileHead {
  size: number;
  /** The `ETag` header without its quotes. */
  etag: string;
  contentType: string | undefined;
  lastModified: string | undefined;
}

/** A share link as making it returns it: `url` opens the file with no key until `expires_at`, or a revoke. */
export type ShareLink = Wire['CreatedLink'];

/** A share link as listing shows it: never its URL, whose token the server does not keep. */
export type ShareLinkEntry = Wire['Link'];

/**
 * What `GET /drive/download?redirect=true` gives: a presigned S3 URL of the file's bytes until `expires_at`,
 * and the size and content hash (`etag`, unquoted) of the version it reads.
 */
export type DirectDownload = Wire['DirectDownload'];

/** What `GET /drive/whoami` says of the calling key: its role, the folder it is confined to (if any), its drive and id. */
export type KeyIdentity = Wire['Whoami'];

/** A stored file, as upload and large-upload completion return it (spec section 2). */
export interface DriveFile {
  id: string;
  name: string;
  path: string;
  /** The absolute URL that downloads it. */
  url: string;
  size: number;
  created_at: string;
}

/** A file as a listing shows it: a `DriveFile` without `url`. */
export type DriveFileEntry = Omit<DriveFile, 'url'> & {
  /**
   * Only when listed with `etags: true`: the content hash, as S3 computes ETags (hex MD5 for a file stored
   * by one upload request; `<hex MD5 of the parts' MD5s>-<parts>` for a large upload). Files stored before
   * the server kept hashes show their `id` here instead.
   */
  etag?: string;
};

/** A folder as a listing shows it. */
export interface DriveFolderEntry {
  id: string;
  name: string;
  path: string;
}

/** The contents of a folder (with `recursive`, at every depth). */
export interface Listing {
  folder: string;
  files: DriveFileEntry[];
  folders: DriveFolderEntry[];
}

/** A folder, as creating it returns it. */
export interface DriveFolder {
  id: string;
  path: string;
  created_at: string;
}

/** What deleting files did: the paths whose file is gone, and those that held none. */
export interface FilesDeletion {
  deleted: string[];
  not_found: string[];
  /**
   * Paths a retry found empty after an attempt that got no clear answer: that attempt deleted them (its
   * answer is lost), or they held nothing. Either way no file is there.
   */
  already_gone: string[];
}

/** What deleting a folder did. */
export interface FolderDeletion {
  deleted: boolean;
  path: string;
  /** Files removed. 0 when `alreadyGone`. */
  files_deleted: number;
  /**
   * A retry found the folder already gone after an earlier attempt got no clear answer: that attempt
   * deleted it (its `files_deleted` is lost), or someone else did. Either way the folder is gone.
   */
  alreadyGone?: boolean;
}

/** A delete too big for one request, as `GET /drive/jobs/{id}` reports it (the server answered `202`). */
export interface DeleteJob {
  id: string;
  type: 'delete-folder';
  status: 'running' | 'done';
  path: string;
  /** Files deleted so far. */
  files_deleted: number;
  created_at: string;
  updated_at: string;
  /** Where the job is read. */
  url: string;
  /** The delete's answer, once `status` is `done`. */
  result: { deleted: boolean; path: string; files_deleted: number } | null;
}

/** What a move or a copy answers: the File or Folder entry at its new path, as a listing shows it. */
export type DriveEntry = DriveFileEntry | DriveFolderEntry;

/** What a job that stopped short failed with: the API's code and message. */
export interface JobError {
  code: string;
  message: string;
}

/** A folder move too big for one request, as `GET /drive/jobs/{id}` reports it (the server answered `202`). */
export interface MoveJob {
  id: string;
  type: 'move-folder';
  status: 'running' | 'done';
  /** The folder being moved. */
  path: string;
  to: string;
  /** Files moved so far. */
  files_moved: number;
  created_at: string;
  updated_at: string;
  url: string;
  /** The folder at `to`, once `status` is `done`; null until then, and for a move that stopped short (`error`). */
  result: DriveFolderEntry | null;
  /** Why a move that is `done` stopped short: what had moved is at `to`, the rest still at `path`. */
  error?: JobError;
}

/** A folder copy too big for one request, as `GET /drive/jobs/{id}` reports it (the server answered `202`). */
export interface CopyJob extends Omit<MoveJob, 'type' | 'files_moved'> {
  type: 'copy-folder';
  /** Files copied so far. */
  files_copied: number;
}

/** Any job `GET /drive/jobs/{id}` reports. */
export type DriveJob = DeleteJob | MoveJob | CopyJob;

/** The answer to `POST /drive/uploads`: a large-upload session with a presigned URL per part. */
export interface UploadSession {
  upload_id: string;
  path: string;
  size: number;
  part_size: number;
  /** Parts the file is cut into; the first URLs come in `parts`, the rest from `GET /drive/uploads/{id}/parts`. */
  part_count?: number;
  parts: { number: number; url: string }[];
  /** The first part whose URL `parts` does not hold; null (or absent, from a server before paging) when it holds them all. */
  next_part?: number | null;
  expires_at: string;
}

/** A file's headers, as `HEAD /drive/download` gives them. */
export interface FileHead {
  size: number;
  /** The `ETag` header without its quotes. */
  etag: string;
  contentType: string | undefined;
  lastModified: string | undefined;
}

/** A share link as making it returns it: `url` opens the file with no key until `expires_at`, or a revoke. */
export interface ShareLink {
  /** The link's id (the SHA-256 of the token in `url`): what lists show and what revokes it. */
  id: string;
  /** The absolute URL; its token is shown in this answer only. */
  url: string;
  path: string;
  expires_at: string;
}

/** A share link as listing shows it: never its URL, whose token the server does not keep. */
export interface ShareLinkEntry {
  id: string;
  path: string;
  created_at: string;
  expires_at: string;
}

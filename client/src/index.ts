export { Drive } from './drive';
export type { DriveOptions, TransferOptions, UploadItem, UploadSource, UploadOutcome, UploadReport, UploadProgress, UploadOptions, DownloadToFileOptions } from './drive';
export type { Download, DownloadOptions } from './download';
export { DriveError, isAbortError } from './errors';
export type { DriveErrorCode } from './errors';
export type { RetryOptions, TransportStats, Bucket } from './transport';
export type { CopyJob, DeleteJob, DirectDownload, DriveEntry, DriveFile, DriveFileEntry, DriveFolder, DriveFolderEntry, DriveJob, FileHead, FilesDeletion, FolderDeletion, JobError, Listing, MoveJob, ShareLink, ShareLinkEntry, UploadSession } from './types';
export { ContentEtagHash, contentEtag, etagForm, fileContentEtag, multipartEtag, partSizeFor, partsOf } from './content-etag';
export type { Clock } from './rate-limit-pacer';

export { Drive } from './drive';
export type { DriveOptions, UploadItem, UploadSource, UploadOutcome, UploadReport, UploadProgress, UploadOptions, DownloadToFileOptions } from './drive';
export type { Download, DownloadOptions } from './download';
export { DriveError, isAbortError } from './errors';
export type { DriveErrorCode } from './errors';
export type { RetryOptions, TransportStats, Bucket } from './transport';
export type { DeleteJob, DriveFile, DriveFileEntry, DriveFolder, DriveFolderEntry, FileHead, FilesDeletion, FolderDeletion, Listing, ShareLink, ShareLinkEntry, UploadSession } from './types';
export { contentEtag, etagForm, fileContentEtag, multipartEtag, partSizeFor, partsOf } from './content-etag';
export type { Clock } from './rate-limit-pacer';

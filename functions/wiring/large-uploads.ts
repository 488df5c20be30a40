import { DynamoUploadSessions } from '../aws/dynamo-upload-sessions';
import { S3MultipartStore } from '../aws/s3-multipart-store';
import { setting } from '../config';
import type { LargeUploadDeps, LargeUploadLimits } from '../core/large-upload';
import { MAX_UPLOAD_EXPIRY_SECONDS, S3_MAX_OBJECT_BYTES } from '../core/large-upload';
import { dynamodb } from './dynamodb';
import { jobs } from './jobs';
import { journal } from './journal';
import { nodes } from './nodes';
import { records } from './records';
import { bucket, objects, s3 } from './objects';
import { signer } from './signer';

export const largeUploads: LargeUploadDeps = {
  nodes,
  objects,
  parts: new S3MultipartStore(s3, bucket, signer),
  sessions: new DynamoUploadSessions(dynamodb, setting('uploadsTable')),
  jobs,
  records,
  journal,
};

/**
 * `DRIVE_MAX_FILE_BYTES` (default and ceiling: S3's 5 TiB) and `DRIVE_UPLOAD_EXPIRY_SECONDS` (default 1 hour,
 * at most a day: the bucket's lifecycle rule aborts multipart uploads a day after they start).
 */
export const largeUploadLimits: LargeUploadLimits = {
  maxFileBytes: Math.min(setting('maxFileBytes') ?? S3_MAX_OBJECT_BYTES, S3_MAX_OBJECT_BYTES),
  expirySeconds: Math.min(setting('uploadExpirySeconds') ?? 3600, MAX_UPLOAD_EXPIRY_SECONDS),
};

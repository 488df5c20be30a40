import type { LargeUploadDeps, LargeUploadLimits } from '../core/large-upload';
import { S3_MAX_OBJECT_BYTES } from '../core/large-upload';
import { DynamoUploadSessions } from './dynamo-upload-sessions';
import { dynamodb, nodes } from './dynamodb';
import { requireEnv } from './env';
import { objects, s3 } from './s3';
import { S3MultipartStore } from './s3-multipart-store';

export const largeUploads: LargeUploadDeps = {
  nodes,
  objects,
  parts: new S3MultipartStore(s3, requireEnv('DRIVE_BUCKET')),
  sessions: new DynamoUploadSessions(dynamodb, requireEnv('DRIVE_UPLOADS_TABLE')),
};

/** `DRIVE_MAX_FILE_BYTES` (default and ceiling: S3's 5 TiB) and `DRIVE_UPLOAD_EXPIRY_SECONDS` (default 1 hour). */
export const largeUploadLimits: LargeUploadLimits = {
  maxFileBytes: Math.min(positiveInteger('DRIVE_MAX_FILE_BYTES', S3_MAX_OBJECT_BYTES), S3_MAX_OBJECT_BYTES),
  // SigV4 presigned URLs last at most 7 days.
  expirySeconds: Math.min(positiveInteger('DRIVE_UPLOAD_EXPIRY_SECONDS', 3600), 7 * 24 * 3600),
};

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number (got ${JSON.stringify(raw)})`);
  return value;
}

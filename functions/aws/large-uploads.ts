import { S3Client } from '@aws-sdk/client-s3';
import type { LargeUploadDeps, LargeUploadLimits } from '../core/large-upload';
import { MAX_UPLOAD_EXPIRY_SECONDS, S3_MAX_OBJECT_BYTES } from '../core/large-upload';
import { DynamoUploadSessions } from './dynamo-upload-sessions';
import { dynamodb, nodes } from './dynamodb';
import { requireEnv } from './env';
import { emulatorConfig, objects, s3 } from './s3';
import { S3MultipartStore } from './s3-multipart-store';

/**
 * Signs the part URLs. The SDK's default checksums (WHEN_SUPPORTED) would sign a CRC32 of the empty body
 * into every UploadPart URL (`x-amz-checksum-crc32=AAAAAA==`), which the parts' bytes cannot match.
 */
const signer = new S3Client({ ...emulatorConfig(), requestChecksumCalculation: 'WHEN_REQUIRED' });

export const largeUploads: LargeUploadDeps = {
  nodes,
  objects,
  parts: new S3MultipartStore(s3, requireEnv('DRIVE_BUCKET'), signer),
  sessions: new DynamoUploadSessions(dynamodb, requireEnv('DRIVE_UPLOADS_TABLE')),
};

/**
 * `DRIVE_MAX_FILE_BYTES` (default and ceiling: S3's 5 TiB) and `DRIVE_UPLOAD_EXPIRY_SECONDS` (default 1 hour,
 * at most a day: the bucket's lifecycle rule aborts multipart uploads a day after they start).
 */
export const largeUploadLimits: LargeUploadLimits = {
  maxFileBytes: Math.min(positiveInteger('DRIVE_MAX_FILE_BYTES', S3_MAX_OBJECT_BYTES), S3_MAX_OBJECT_BYTES),
  expirySeconds: Math.min(positiveInteger('DRIVE_UPLOAD_EXPIRY_SECONDS', 3600), MAX_UPLOAD_EXPIRY_SECONDS),
};

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number (got ${JSON.stringify(raw)})`);
  return value;
}

import { S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore, signWithContentMd5 } from '../aws/s3-object-store';
import { QUIET_SDK_LOGGER } from '../aws/sdk-logger';
import { setting } from '../config';
import { countAwsCalls } from '../telemetry/aws-call-counter';
import './clean-up-report';

const endpoint = setting('s3Endpoint');

/** What the local emulator needs of an S3 client, or nothing in AWS. */
export function emulatorConfig() {
  // The emulator needs path-style addressing and does not understand the SDK's default streaming checksums
  // (aws-chunked bodies).
  return endpoint
    ? { endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const }
    : {};
}

/** The S3 client of this container, its middleware stack resolved once per command type; a PutObject with Content-MD5 is signed without hashing its body again. */
export const s3 = countAwsCalls(signWithContentMd5(new S3Client({ cacheMiddleware: true, logger: QUIET_SDK_LOGGER, ...emulatorConfig() })), 's3');

export const bucket = setting('bucket');

/** Objects above `DRIVE_SINGLE_COPY_MAX_BYTES` are copied in parts: unset, S3's 5 GiB. */
export const objects = new S3ObjectStore(s3, bucket, setting('singleCopyMaxBytes'));

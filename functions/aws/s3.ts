import { S3Client } from '@aws-sdk/client-s3';
import { requireEnv } from './env';
import { S3ObjectStore } from './s3-object-store';
import { QUIET_SDK_LOGGER } from './sdk-logger';
import { countAwsCalls } from '../telemetry/aws-call-counter';

const endpoint = process.env.DRIVE_S3_ENDPOINT;

/**
 * One client per container, its middleware stack resolved once per command type. `DRIVE_S3_ENDPOINT`
 * points it at the local emulator, which needs path-style addressing and does not understand the SDK's
 * default streaming checksums (aws-chunked bodies).
 */
export const s3 = countAwsCalls(new S3Client({ cacheMiddleware: true, logger: QUIET_SDK_LOGGER, ...emulatorConfig() }), 's3');

/** What the local emulator needs of a client, or nothing in AWS. */
export function emulatorConfig() {
  return endpoint
    ? { endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const }
    : {};
}

/** Objects above `DRIVE_SINGLE_COPY_MAX_BYTES` are copied in parts: unset, S3's 5 GiB (tests lower it to reach the parts path). */
export const objects = new S3ObjectStore(s3, requireEnv('DRIVE_BUCKET'), Number(process.env.DRIVE_SINGLE_COPY_MAX_BYTES) || undefined);

import { S3Client } from '@aws-sdk/client-s3';
import { emulatorConfig } from './objects';

/**
 * The S3 client that signs the URLs clients use (large-upload parts, direct downloads). The SDK's default
 * checksums (WHEN_SUPPORTED) would sign a CRC32 of the empty body into every UploadPart URL
 * (`x-amz-checksum-crc32=AAAAAA==`), which the parts' bytes cannot match, and ask S3 for checksums on reads.
 */
export const signer = new S3Client({ ...emulatorConfig(), requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });

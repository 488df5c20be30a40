import { CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, GetObjectCommand, S3Client, UploadPartCopyCommand } from '@aws-sdk/client-s3';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LOCAL_RESOURCES, localCredentials } from '../../emulators';
import { type RunningHost, startHost, stopHost } from '../../../../test/support/local-host';

// The gateway's copy-source check (lib/local/emulators.ts refuseUnsafeS3) covers the whole header: s3rver's
// CopyObject and the emulated UploadPartCopy read all of it as the key, and path.join resolves its ".."
// segments, so a check of what precedes a "?" let a signed copy read any file named like an object.

const KEY = 'emulator-key-29hVHaTbDrEgNFVFcigNCYZW';
let host: RunningHost;
let endpoints: { s3: string };

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `emu:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off' });
  endpoints = JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as typeof endpoints;
});

afterAll(() => stopHost(host));

const s3With = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
  new S3Client({ endpoint: endpoints.s3, forcePathStyle: true, region: 'us-east-1', credentials, requestChecksumCalculation: 'WHEN_REQUIRED', maxAttempts: 1 });

it('refuses a CopyObject whose source climbs out of the bucket after a "?"', async () => {
  const s3 = s3With(await localCredentials(host.dataDir));
  await writeFile(join(host.dataDir, 'outside.txt._S3rver_object'), 'not the store');
  // <dataDir>/s3/drive-files/a?/../../../outside.txt → <dataDir>/outside.txt
  const CopySource = `${LOCAL_RESOURCES.bucket}/a?/../../../outside.txt`;
  const copied = await s3.send(new CopyObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen', CopySource })).then(
    () => 'copied',
    (error: { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode,
  );
  const read = await s3.send(new GetObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen' })).then(
    (out) => out.Body!.transformToString(),
    () => undefined,
  );
  s3.destroy();
  expect(read).toBeUndefined();
  expect(copied).not.toBe('copied');
});

it('refuses an UploadPartCopy whose source climbs out of the bucket after a "?"', async () => {
  const s3 = s3With(await localCredentials(host.dataDir));
  await writeFile(join(host.dataDir, 'outside2.txt._S3rver_object'), 'not the store either');
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen2' }));
  const CopySource = `${LOCAL_RESOURCES.bucket}/a?/../../../outside2.txt`;
  const part = await s3.send(new UploadPartCopyCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen2', UploadId, PartNumber: 1, CopySource })).then(
    (out) => out,
    () => undefined,
  );
  let read: string | undefined;
  if (part) {
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen2', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.CopyPartResult?.ETag }] } }));
    read = await (await s3.send(new GetObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen2' }))).Body!.transformToString();
  }
  s3.destroy();
  expect(read).toBeUndefined();
  expect(part).toBeUndefined();
});

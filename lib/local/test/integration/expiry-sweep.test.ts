import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateMultipartUploadCommand, ListPartsCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toSessionItem } from '../../../../functions/aws/dynamo-upload-sessions';
import { type Emulators, LOCAL_REGION, LOCAL_RESOURCES, startEmulators } from '../../emulators';
import { LIFECYCLE_ABORT_AFTER_MS, abortStaleUploads, expireItems } from '../../expiry';
import { removeDataDir } from '../../../../test/support/local-host';

// What the local host does in place of DynamoDB's TTL and the bucket's lifecycle rule, on the emulators.

let dataDir: string;
let emulators: Emulators;
let dynamodb: DynamoDBClient;
let s3: S3Client;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-expiry-'));
  emulators = await startEmulators(dataDir);
  dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: LOCAL_REGION, credentials: emulators.credentials });
  s3 = new S3Client({ endpoint: emulators.s3Endpoint, forcePathStyle: true, region: LOCAL_REGION, credentials: emulators.credentials, requestChecksumCalculation: 'WHEN_REQUIRED' });
});

afterAll(async () => {
  dynamodb.destroy();
  s3.destroy();
  await emulators.close();
  await removeDataDir(dataDir);
});

const dir = () => join(dataDir, 's3');
const uploadsTable = { name: LOCAL_RESOURCES.uploadsTable, keys: ['id'], ttlAttribute: 'expiresAt' };

it('removes expired items of the uploads table and nothing more, as TTL does: the multipart upload stays', async () => {
  const key = 'sweep/f1';
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: key }));
  const session = (id: string, expiresAt: number) =>
    toSessionItem({
      id,
      drive: 'sweep',
      path: '/big.bin',
      size: 10,
      contentType: 'application/octet-stream',
      fileId: 'f1',
      objectKey: key,
      multipartId: UploadId!,
      partSize: 10,
      partCount: 1,
      createdAt: new Date(expiresAt - 3_600_000).toISOString(),
      expiresAt: new Date(expiresAt).toISOString(),
    });
  const expired = session('00000000-0000-4000-8000-000000000001', Date.now() - 3_600_000);
  const live = session('00000000-0000-4000-8000-000000000002', Date.now() + 3_600_000);
  // A completion holds the expired one claimed: TTL pays no heed (the completion refuses an expired session itself).
  await dynamodb.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Item: { ...expired, claimedUntil: { N: String(Date.now() + 60_000) } } }));
  await dynamodb.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Item: live }));

  expect(await expireItems(dynamodb, uploadsTable)).toBe(1);
  expect((await dynamodb.send(new GetItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Key: { id: expired.id } }))).Item).toBeUndefined();
  expect((await dynamodb.send(new GetItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Key: { id: live.id } }))).Item).toBeDefined();
  // The parts are the lifecycle rule's, a day after the start.
  const parts = await s3.send(new ListPartsCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: key, UploadId }));
  expect(parts.UploadId).toBe(UploadId);
  expect(await abortStaleUploads(dir(), LOCAL_RESOURCES.bucket, LIFECYCLE_ABORT_AFTER_MS)).toBe(0);
  expect(await abortStaleUploads(dir(), LOCAL_RESOURCES.bucket, LIFECYCLE_ABORT_AFTER_MS, Date.now() + LIFECYCLE_ABORT_AFTER_MS + 1000)).toBe(1);
  await expect(s3.send(new ListPartsCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: key, UploadId }))).rejects.toMatchObject({ name: 'NoSuchUpload' });
});

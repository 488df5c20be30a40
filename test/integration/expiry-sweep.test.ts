import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toSessionItem } from '../../functions/aws/dynamo-upload-sessions';
import { type Emulators, LOCAL_REGION, LOCAL_RESOURCES, startEmulators } from '../../lib/local/emulators';
import { sweepExpiredUploads } from '../../lib/local/expiry';
import { removeDataDir } from '../support/local-host';

// The local sweep of expired large uploads (what TTL and the lifecycle rule do in AWS), on the emulators.

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

it('leaves an expired session that a completion holds claimed, and ends it once the claim is gone', async () => {
  const key = 'sweep/f1';
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: key }));
  const session = toSessionItem({
    id: '00000000-0000-4000-8000-000000000001',
    drive: 'sweep',
    path: '/big.bin',
    size: 10,
    contentType: 'application/octet-stream',
    fileId: 'f1',
    objectKey: key,
    multipartId: UploadId!,
    partSize: 10,
    partCount: 1,
    createdAt: new Date(Date.now() - 7_200_000).toISOString(),
    expiresAt: new Date(Date.now() - 3_600_000).toISOString(),
  });
  // A `complete` claimed it a moment ago and is still assembling.
  await dynamodb.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Item: { ...session, claimedUntil: { N: String(Date.now() + 60_000) } } }));

  expect(await sweepExpiredUploads(dynamodb, s3, LOCAL_RESOURCES)).toBe(0);
  const kept = await dynamodb.send(new GetItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Key: { id: session.id } }));
  expect(kept.Item).toBeDefined();

  await dynamodb.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Item: session }));
  expect(await sweepExpiredUploads(dynamodb, s3, LOCAL_RESOURCES)).toBe(1);
  expect((await dynamodb.send(new GetItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Key: { id: session.id } }))).Item).toBeUndefined();
});

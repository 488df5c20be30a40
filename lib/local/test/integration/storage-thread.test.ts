import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_REGION, LOCAL_RESOURCES } from '../../emulators';
import { startEmulatorsThread } from '../../storage-thread';
import { removeDataDir } from '../../../../test/support/local-host';

// `npm start` runs the embedded S3 and DynamoDB on a thread of their own (lib/local/storage-thread.ts).

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-storage-thread-'));
});

afterAll(() => removeDataDir(dataDir));

async function withStorage(use: (clients: { dynamodb: DynamoDBClient; s3: S3Client }) => Promise<void>): Promise<void> {
  const died: Error[] = [];
  const storage = await startEmulatorsThread(dataDir, (error) => died.push(error));
  const config = { region: LOCAL_REGION, credentials: storage.credentials };
  const dynamodb = new DynamoDBClient({ ...config, endpoint: storage.dynamodbEndpoint });
  const s3 = new S3Client({ ...config, endpoint: storage.s3Endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
  try {
    await use({ dynamodb, s3 });
  } finally {
    dynamodb.destroy();
    s3.destroy();
    await storage.close();
  }
  expect(died).toEqual([]);
}

it('serves both emulators from the thread, and a close keeps what they stored for the next start', async () => {
  await withStorage(async ({ dynamodb, s3 }) => {
    await dynamodb.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Item: { id: { S: 'kept' }, note: { S: 'across starts' } } }));
    await s3.send(new PutObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'thread/kept', Body: 'bytes' }));
  });
  await withStorage(async ({ dynamodb, s3 }) => {
    const { Item } = await dynamodb.send(new GetItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Key: { id: { S: 'kept' } }, ConsistentRead: true }));
    expect(Item?.note).toEqual({ S: 'across starts' });
    const object = await s3.send(new GetObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'thread/kept' }));
    expect(await object.Body!.transformToString()).toBe('bytes');
  });
});

it('says why when the storage cannot start', async () => {
  // A file where the data dir's folder for DynamoDB would be.
  const blocked = await mkdtemp(join(tmpdir(), 'drive-storage-thread-'));
  await writeFile(join(blocked, 'dynamodb'), 'not a folder');
  try {
    await expect(startEmulatorsThread(blocked, () => undefined)).rejects.toThrow(/^the storage thread did not start: /);
  } finally {
    await removeDataDir(blocked);
  }
});

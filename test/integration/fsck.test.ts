import { DeleteItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keyOf, toItem } from '../../functions/aws/dynamo-node-store';
import { localCredentials } from '../../lib/local/emulators';
import { DriveClient, type FileJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, removeDataDir, startHost, stopHost } from '../support/local-host';

const KEY = 'fsck-key-R0usiepXdS8DWuMQlx8K9I5TJ8X';

const fsck = runFsck;

const count = (output: string, label: string) => Number(new RegExp(`(\\d+)  ${label}`).exec(output)?.[1]);

let host: RunningHost;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `fsck:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
});

afterAll(() => stopHost(host));

describe('npm run fsck', () => {
  it('finds what the API leaves clean, and every kind of damage done behind its back; --repair mends what it may', async () => {
    const drive = new DriveClient(host.url, KEY);
    const uploaded = await json<{ data: FileJson[] }>(
      drive.upload(
        ['keep', 'lose-bytes', 'orphan-parent', 'plain', 'truncated', 'swapped'].map((name) => ({ data: name, filename: `${name}.txt` })),
        [{ folder: '/docs' }, { folder: '/docs' }, { folder: '/tree/deep' }, {}, { folder: '/docs' }, { folder: '/docs' }],
      ),
    );
    expect(uploaded.status).toBe(200);
    expect((await fsck(host.dataDir)).code).toBe(0);

    // Damage, straight through the SDK on the running host's emulators.
    const endpoints = JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
    const config = { region: 'us-east-1', credentials: await localCredentials(host.dataDir) };
    const s3 = new S3Client({ ...config, endpoint: endpoints.s3, forcePathStyle: true });
    const dynamodb = new DynamoDBClient({ ...config, endpoint: endpoints.dynamodb });
    const lostBytes = uploaded.body.data[1];
    await s3.send(new DeleteObjectCommand({ Bucket: endpoints.bucket, Key: `fsck/${lostBytes.id}` }));
    await s3.send(new PutObjectCommand({ Bucket: endpoints.bucket, Key: 'fsck/no-record', Body: 'x' }));
    // Bytes changed behind Drive's back: one object cut short, one replaced by others of the same size.
    await s3.send(new PutObjectCommand({ Bucket: endpoints.bucket, Key: `fsck/${uploaded.body.data[4].id}`, Body: 'trunc' }));
    await s3.send(new PutObjectCommand({ Bucket: endpoints.bucket, Key: `fsck/${uploaded.body.data[5].id}`, Body: 'SWAPPED' }));
    await dynamodb.send(new DeleteItemCommand({ TableName: endpoints.nodesTable, Key: keyOf('fsck', '/tree/deep') }));
    await dynamodb.send(
      new PutItemCommand({ TableName: endpoints.nodesTable, Item: toItem('fsck', { kind: 'folder', id: 'x', path: '/plain.txt/inside', createdAt: new Date().toISOString() }) }),
    );
    s3.destroy();
    dynamodb.destroy();

    const damaged = await fsck(host.dataDir);
    expect(damaged.code).toBe(1);
    expect(count(damaged.output, 'records whose object is missing')).toBe(1);
    expect(count(damaged.output, 'records whose object differs \\(size or content hash\\)')).toBe(2);
    expect(damaged.output).toContain('fsck:/docs/truncated.txt (record 9 bytes');
    expect(damaged.output).toContain('fsck:/docs/swapped.txt (record 7 bytes');
    expect(count(damaged.output, 'objects no record points to')).toBe(1);
    expect(count(damaged.output, 'folders whose parent is missing')).toBe(1);
    expect(count(damaged.output, 'nodes below a file')).toBe(1);
    expect(damaged.output).toContain('fsck:/docs/lose-bytes.txt');

    const repaired = await fsck(host.dataDir, '--repair', '--grace-minutes', '0');
    const after = repaired.output.slice(repaired.output.indexOf('After repair:'));
    expect(count(after, 'objects no record points to')).toBe(0);
    expect(count(after, 'folders whose parent is missing')).toBe(0);
    // Never deleted: a record, even one without bytes or below a file; those stay for a person to judge.
    expect(count(after, 'records whose object is missing')).toBe(1);
    expect(count(after, 'nodes below a file')).toBe(1);
    expect(repaired.code).toBe(1);
    expect((await drive.list({ folder: '/tree/deep' })).status).toBe(200);
    expect(await (await drive.download({ path: '/docs/keep.txt' })).text()).toBe('keep');
  });
});

describe('npm run fsck without a running host', () => {
  it('opens the data dir itself', async () => {
    const stopped = await startHost({ DRIVE_API_KEYS: `fsck:${KEY}` });
    await new DriveClient(stopped.url, KEY).upload([{ data: 'x', filename: 'x.txt' }], [{ folder: '/a/b' }]);
    await stopped.stop();
    try {
      const result = await fsck(stopped.dataDir);
      expect(result.code).toBe(0);
      expect(result.output).toContain('clean');
    } finally {
      await removeDataDir(stopped.dataDir);
    }
  });
});

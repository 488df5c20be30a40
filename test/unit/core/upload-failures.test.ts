import { BatchGetItemCommand, ConditionalCheckFailedException, DeleteItemCommand, DynamoDBClient, GetItemCommand, ProvisionedThroughputExceededException, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoNodeStore } from '../../../functions/aws/dynamo-node-store';
import { S3ObjectStore } from '../../../functions/aws/s3-object-store';
import { reportCleanUpsTo } from '../../../functions/core/clean-up';
import { uploadFiles } from '../../../functions/core/upload';
import { reportCleanUp } from '../../../functions/telemetry/clean-up-report';

const dynamodb = mockClient(DynamoDBClient);
const s3 = mockClient(S3Client);
const deps = {
  nodes: new DynamoNodeStore(new DynamoDBClient({ region: 'us-east-1' }), 'nodes'),
  objects: new S3ObjectStore(new S3Client({ region: 'us-east-1' }), 'bucket'),
};
const old = {
  pk: { S: 'd#/' }, sk: { S: 'a.txt' }, kind: { S: 'file' }, id: { S: 'old' }, path: { S: '/a.txt' },
  createdAt: { S: '2026-01-01T00:00:00.000Z' }, size: { N: '1' }, contentType: { S: 'text/plain' }, objectKey: { S: 'd/old' },
};
const folderP = { pk: { S: 'd#/' }, sk: { S: 'p' }, kind: { S: 'folder' }, id: { S: 'p' }, path: { S: '/p' }, createdAt: { S: '2026-01-01T00:00:00.000Z' } };
const parts = [
  { filename: 'a.txt', data: Buffer.from('a') },
  { filename: 'b.txt', data: Buffer.from('b') },
];

// As the composition root (functions/wiring/) installs it in a function.
beforeAll(() => reportCleanUpsTo(reportCleanUp));

beforeEach(() => {
  dynamodb.reset();
  s3.reset();
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  s3.on(DeleteObjectsCommand).resolves({});
  dynamodb.on(BatchGetItemCommand).resolves({ Responses: { nodes: [] } });
});

afterEach(() => jest.restoreAllMocks());

/** The JSON lines written to stdout since the test began (the clean-up's own, straight to stdout). */
function loggedLines(): Record<string, unknown>[] {
  return (process.stdout.write as unknown as jest.Mock).mock.calls.map(([text]) => JSON.parse(String(text)) as Record<string, unknown>);
}

/** DynamoDB's throttle after the SDK's retries: a refusal of the request itself (`$fault: 'client'`), so nothing was written. */
const throttled = (message: string) => new ProvisionedThroughputExceededException({ message, $metadata: {} });
const deletedKeys = () => s3.commandCalls(DeleteObjectsCommand).flatMap((c) => c.args[0].input.Delete!.Objects!.map((o) => o.Key));
const putKeys = () => s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input.Key);

describe('Function: uploadFiles, when AWS fails part-way', () => {
  it('a failing S3 put: writes no record and deletes the bytes it stored', async () => {
    s3.on(PutObjectCommand).resolvesOnce({}).rejectsOnce(new Error('S3 unavailable'));

    await expect(uploadFiles(deps, 'd', parts, undefined)).rejects.toThrow('S3 unavailable');

    expect(dynamodb.commandCalls(PutItemCommand)).toHaveLength(0);
    expect(deletedKeys().sort()).toEqual(putKeys().sort());
  });

  it('a failing record write after the bytes are stored: undoes the writes made, only where ours stands, then deletes every byte', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).resolvesOnce({}).rejectsOnce(throttled('throttled'));
    dynamodb.on(GetItemCommand).resolves({});
    dynamodb.on(DeleteItemCommand).resolves({});

    await expect(uploadFiles(deps, 'd', parts, undefined)).rejects.toThrow('throttled');

    const reverted = dynamodb.commandCalls(DeleteItemCommand).map((c) => c.args[0].input);
    // b.txt's path reads empty after its failed write: nothing to undo there, and its bytes are free.
    expect(reverted.map((input) => input.Key!.sk.S).sort()).toEqual(['a.txt']);
    expect(reverted.every((input) => input.ConditionExpression === '#id = :id')).toBe(true);
    expect(deletedKeys().sort()).toEqual(putKeys().sort());
  });

  it('a write whose reply was lost but which was saved: counts as written, so the upload stands', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).callsFakeOnce(() => Promise.reject(new Error('socket hang up'))).resolves({});
    dynamodb.on(GetItemCommand).callsFake((input: { Key: { sk: { S: string } } }) => {
      const file = dynamodb.commandCalls(PutItemCommand)[0].args[0].input.Item!;
      return { Item: input.Key.sk.S === file.sk.S ? file : undefined };
    });

    const files = await uploadFiles(deps, 'd', [parts[0]], undefined);

    expect(files).toHaveLength(1);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(0);
  });

  it('a saved write whose reply was lost, then a later failure: keeps that file, since the one it replaced is unknown', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).callsFakeOnce(() => Promise.reject(new Error('socket hang up'))).resolves({});
    dynamodb.on(GetItemCommand).callsFake(() => ({ Item: dynamodb.commandCalls(PutItemCommand)[0].args[0].input.Item! }));
    // The folder /p is there; the look after the write fails.
    dynamodb.on(BatchGetItemCommand).resolvesOnce({ Responses: { nodes: [folderP] } }).rejects(new Error('throttled'));
    dynamodb.on(DeleteItemCommand).resolves({});

    await expect(uploadFiles(deps, 'd', [parts[0]], [{ folder: '/p' }])).rejects.toThrow('throttled');

    expect(dynamodb.commandCalls(DeleteItemCommand)).toHaveLength(0);
    expect(deletedKeys()).toEqual([]);
  });

  it('a write whose reply was lost and which another upload then replaced: keeps its bytes, which that upload may put back', async () => {
    // The write was saved; before it could be read back, another upload replaced it (and may fail and restore it).
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).rejects(new Error('socket hang up'));
    dynamodb.on(GetItemCommand).resolves({ Item: { ...old, path: { S: '/p/a.txt' }, id: { S: 'rival' } } });
    dynamodb.on(BatchGetItemCommand).resolves({ Responses: { nodes: [folderP] } });
    dynamodb.on(DeleteItemCommand).rejects(new ConditionalCheckFailedException({ message: 'not ours', $metadata: {} }));

    await expect(uploadFiles(deps, 'd', [parts[0]], [{ folder: '/p' }])).rejects.toThrow('socket hang up');

    expect(deletedKeys()).toEqual([]);
  });

  // A lost reply with the path read back empty: the write may have been saved and the record deleted since
  // (into the trash, whose row names the bytes), so they stay, for the scheduled check if nothing names them.
  it('a write whose reply was lost, its path empty when read back: the upload fails and keeps the bytes', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).rejects(new Error('socket hang up'));
    dynamodb.on(GetItemCommand).resolves({});

    await expect(uploadFiles(deps, 'd', [parts[0]], undefined)).rejects.toThrow('socket hang up');
    expect(deletedKeys()).toEqual([]);
  });

  it('a write that failed and was not saved: the upload fails, leaving nothing', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).rejects(throttled('throttled for good'));
    dynamodb.on(GetItemCommand).resolves({});
    dynamodb.on(DeleteItemCommand).resolves({});

    await expect(uploadFiles(deps, 'd', [parts[0]], undefined)).rejects.toThrow('throttled for good');

    expect(deletedKeys()).toEqual(putKeys());
  });

  it('a failure after a record another upload has since replaced: keeps the bytes that upload may restore', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).resolves({});
    dynamodb.on(BatchGetItemCommand).resolvesOnce({ Responses: { nodes: [folderP] } }).rejects(new Error('throttled'));
    dynamodb.on(DeleteItemCommand).rejects(new ConditionalCheckFailedException({ message: 'replaced since', $metadata: {} }));

    await expect(uploadFiles(deps, 'd', [parts[0]], [{ folder: '/p' }])).rejects.toThrow('throttled');

    expect(deletedKeys()).toEqual([]);
  });

  it('deletes the replaced bytes, never its own, even when the write was retried', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).callsFake((input: { Item: Record<string, unknown> }) => ({ Attributes: input.Item }));

    await uploadFiles(deps, 'd', [parts[0]], undefined);

    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(0);
  });

  it('a failing delete of replaced bytes: the upload stands, orphans are logged for fsck', async () => {
    s3.on(PutObjectCommand).resolves({});
    s3.on(DeleteObjectsCommand).rejects(new Error('S3 unavailable'));
    dynamodb.on(PutItemCommand).resolves({ Attributes: old });

    const files = await uploadFiles(deps, 'd', [parts[0]], undefined);

    expect(files.map((f) => f.path)).toEqual(['/a.txt']);
    expect(deletedKeys()).toEqual(['d/old']);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ level: 'WARN', orphaned_keys: ['d/old'], OrphanedObjects: 1 }));
  });

  it('a failing delete after a failed put: names every key of the upload as orphaned', async () => {
    s3.on(PutObjectCommand).resolvesOnce({}).rejectsOnce(new Error('S3 unavailable'));
    s3.on(DeleteObjectsCommand).rejects(new Error('S3 still unavailable'));

    await expect(uploadFiles(deps, 'd', parts, undefined)).rejects.toThrow('S3 unavailable');

    const line = loggedLines().find((l) => l.orphaned_keys !== undefined)!;
    expect([...(line.orphaned_keys as string[])].sort()).toEqual(putKeys().sort());
    expect(line).toMatchObject({ OrphanedObjects: 2, error: { message: 'S3 still unavailable' } });
  });

  it('a failing undo: names exactly the bytes it was freeing, not the replaced file it put back', async () => {
    s3.on(PutObjectCommand).resolves({});
    s3.on(DeleteObjectsCommand).rejects(new Error('S3 unavailable'));
    // a.txt replaces `old`; b.txt's write fails and its path reads empty: the undo puts `old` back and frees both new objects.
    dynamodb.on(PutItemCommand).resolvesOnce({ Attributes: old }).rejectsOnce(throttled('throttled')).resolves({});
    dynamodb.on(GetItemCommand).resolves({});

    await expect(uploadFiles(deps, 'd', parts, undefined)).rejects.toThrow('throttled');

    const line = loggedLines().find((l) => l.orphaned_keys !== undefined)!;
    expect([...(line.orphaned_keys as string[])].sort()).toEqual(putKeys().sort());
    expect(line.orphaned_keys).not.toContain('d/old');
  });
});

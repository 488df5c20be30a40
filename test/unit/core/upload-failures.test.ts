import { BatchGetItemCommand, DeleteItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoNodeStore } from '../../../functions/aws/dynamo-node-store';
import { S3ObjectStore } from '../../../functions/aws/s3-object-store';
import { uploadFiles } from '../../../functions/core/upload';

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
const parts = [
  { filename: 'a.txt', data: Buffer.from('a') },
  { filename: 'b.txt', data: Buffer.from('b') },
];

beforeEach(() => {
  dynamodb.reset();
  s3.reset();
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
  dynamodb.on(BatchGetItemCommand).resolves({ Responses: { nodes: [] } });
  s3.on(DeleteObjectsCommand).resolves({});
});

afterEach(() => jest.restoreAllMocks());

const deletedKeys = () => s3.commandCalls(DeleteObjectsCommand).flatMap((c) => c.args[0].input.Delete!.Objects!.map((o) => o.Key));
const putKeys = () => s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input.Key);

describe('Function: uploadFiles, when AWS fails part-way', () => {
  it('a failing S3 put: writes no record and deletes the bytes it stored', async () => {
    s3.on(PutObjectCommand).resolvesOnce({}).rejectsOnce(new Error('S3 unavailable'));

    await expect(uploadFiles(deps, 'd', parts, undefined)).rejects.toThrow('S3 unavailable');

    expect(dynamodb.commandCalls(PutItemCommand)).toHaveLength(0);
    expect(deletedKeys().sort()).toEqual(putKeys().sort());
  });

  it('a failing record write after the bytes are stored: undoes every write, only where ours stands, then deletes every byte', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).resolvesOnce({}).rejectsOnce(new Error('throttled'));
    dynamodb.on(DeleteItemCommand).resolves({});

    await expect(uploadFiles(deps, 'd', parts, undefined)).rejects.toThrow('throttled');

    const reverted = dynamodb.commandCalls(DeleteItemCommand).map((c) => c.args[0].input);
    expect(reverted.map((input) => input.Key!.sk.S).sort()).toEqual(['a.txt', 'b.txt']);
    expect(reverted.every((input) => input.ConditionExpression === '#id = :id')).toBe(true);
    expect(deletedKeys().sort()).toEqual(putKeys().sort());
  });

  it('a write whose reply was lost: undoes it too, restoring the file it replaced', async () => {
    dynamodb.on(BatchGetItemCommand).resolves({ Responses: { nodes: [old] } });
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).rejectsOnce(new Error('socket hang up')).resolves({});

    await expect(uploadFiles(deps, 'd', [parts[0]], undefined)).rejects.toThrow('socket hang up');

    const restore = dynamodb.commandCalls(PutItemCommand)[1].args[0].input;
    expect(restore.Item!.objectKey).toEqual({ S: 'd/old' });
    expect(restore.ConditionExpression).toBe('#id = :id');
    expect(restore.ExpressionAttributeValues![':id']).toEqual({ S: putKeys()[0]!.slice(2) });
    expect(deletedKeys()).toEqual(putKeys());
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
    expect(console.error).toHaveBeenCalledWith(expect.stringContaining('orphaned objects'));
  });
});

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

  it('a failing record write after the bytes are stored: undoes the records written and deletes every byte', async () => {
    s3.on(PutObjectCommand).resolves({});
    dynamodb.on(PutItemCommand).resolvesOnce({}).rejectsOnce(new Error('throttled'));
    dynamodb.on(DeleteItemCommand).resolves({});

    await expect(uploadFiles(deps, 'd', parts, undefined)).rejects.toThrow('throttled');

    const reverted = dynamodb.commandCalls(DeleteItemCommand);
    expect(reverted).toHaveLength(1);
    expect(reverted[0].args[0].input.ConditionExpression).toBe('#id = :id');
    expect(deletedKeys().sort()).toEqual(putKeys().sort());
  });

  it('a failing delete of replaced bytes: the upload stands, orphans are logged for fsck', async () => {
    const old = {
      pk: { S: 'd#/' }, sk: { S: 'a.txt' }, kind: { S: 'file' }, id: { S: 'old' }, path: { S: '/a.txt' },
      createdAt: { S: '2026-01-01T00:00:00.000Z' }, size: { N: '1' }, contentType: { S: 'text/plain' }, objectKey: { S: 'd/old' },
    };
    s3.on(PutObjectCommand).resolves({});
    s3.on(DeleteObjectsCommand).rejects(new Error('S3 unavailable'));
    dynamodb.on(PutItemCommand).resolves({ Attributes: old });

    const files = await uploadFiles(deps, 'd', [parts[0]], undefined);

    expect(files.map((f) => f.path)).toEqual(['/a.txt']);
    expect(console.error).toHaveBeenCalledWith(expect.stringContaining('orphaned objects'));
  });
});

import {
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoNodeStore } from '../../../functions/aws/dynamo-node-store';
import type { FileNode } from '../../../functions/core/ports';

const dynamodb = mockClient(DynamoDBClient);
const store = new DynamoNodeStore(new DynamoDBClient({ region: 'us-east-1' }), 'nodes');

const folderItem = (path: string) => ({
  pk: { S: `d#${path.slice(0, path.lastIndexOf('/')) || '/'}` },
  sk: { S: path.slice(path.lastIndexOf('/') + 1) },
  kind: { S: 'folder' },
  id: { S: `id-${path}` },
  path: { S: path },
  createdAt: { S: '2026-01-01T00:00:00.000Z' },
});

const file: FileNode = {
  kind: 'file',
  id: 'f1',
  path: '/docs/a.txt',
  size: 3,
  contentType: 'text/plain',
  createdAt: '2026-01-01T00:00:00.000Z',
  objectKey: 'd/f1',
  etag: '900150983cd24fb0d6963f7d28e17f72',
};

beforeEach(() => {
  dynamodb.reset();
  jest.spyOn(Math, 'random').mockReturnValue(0); // no backoff delay
});

afterEach(() => jest.restoreAllMocks());

describe('Class: DynamoNodeStore', () => {
  describe('Method: deleteMany', () => {
    it('deletes in batches of 25, the batch with the last paths only after the others', async () => {
      const order: number[] = [];
      dynamodb.on(BatchWriteItemCommand).callsFake(async (input: { RequestItems: { nodes: unknown[] } }) => {
        const size = input.RequestItems.nodes.length;
        await new Promise((resolve) => setTimeout(resolve, size === 10 ? 0 : 20)); // the last batch would win a race
        order.push(size);
        return {};
      });

      await store.deleteMany('d', Array.from({ length: 60 }, (_, i) => `/x/${i}`));

      expect(order).toEqual([25, 25, 10]);
      const last = dynamodb.commandCalls(BatchWriteItemCommand).at(-1)!.args[0].input.RequestItems!.nodes;
      expect(last.at(-1)).toEqual({ DeleteRequest: { Key: { pk: { S: 'd#/x' }, sk: { S: '59' } } } });
    });

    it('sends a batch that spans depths only after the deeper batches, so a failure orphans nothing', async () => {
      const order: string[] = [];
      dynamodb.on(BatchWriteItemCommand).callsFake(async (input: { RequestItems: { nodes: { DeleteRequest: { Key: { pk: { S: string } } } }[] } }) => {
        const depths = new Set(input.RequestItems.nodes.map((r) => r.DeleteRequest.Key.pk.S.split('/').length));
        await new Promise((resolve) => setTimeout(resolve, depths.size === 1 && input.RequestItems.nodes.length === 25 ? 20 : 0));
        order.push(`${input.RequestItems.nodes.length}${depths.size > 1 ? ' mixed' : ''}`);
        return {};
      });
      const deep = Array.from({ length: 30 }, (_, i) => `/t/a/f${i}`);
      const shallow = Array.from({ length: 20 }, (_, i) => `/t/b${i}`);

      await store.deleteMany('d', [...deep, ...shallow, '/t']);

      expect(order).toEqual(['25', '25 mixed', '1']);
    });

    it('resends unprocessed items and gives up with an error after repeated throttling', async () => {
      const stuck = [{ DeleteRequest: { Key: { pk: { S: 'd#/' }, sk: { S: 'x' } } } }];
      dynamodb.on(BatchWriteItemCommand).resolvesOnce({ UnprocessedItems: { nodes: stuck } }).resolvesOnce({});
      await store.deleteMany('d', ['/x', '/y']);
      expect(dynamodb.commandCalls(BatchWriteItemCommand)[1].args[0].input.RequestItems!.nodes).toEqual(stuck);

      dynamodb.reset();
      dynamodb.on(BatchWriteItemCommand).resolves({ UnprocessedItems: { nodes: stuck } });
      await expect(store.deleteMany('d', ['/x'])).rejects.toThrow(/left 1 deletes unprocessed after 8 attempts/);
    });
  });

  describe('Method: removeFolder', () => {
    it('deletes only a folder, and tells a missing path from a file', async () => {
      dynamodb
        .on(DeleteItemCommand)
        .resolvesOnce({ Attributes: folderItem('/a') })
        .rejectsOnce(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }))
        .rejectsOnce(new ConditionalCheckFailedException({ message: 'failed', $metadata: {}, Item: { ...folderItem('/f'), kind: { S: 'file' }, size: { N: '1' }, contentType: { S: 'text/plain' }, objectKey: { S: 'd/f' } } }));
      dynamodb.on(GetItemCommand).resolves({});

      expect(await store.removeFolder('d', '/a')).toEqual(expect.objectContaining({ kind: 'folder', path: '/a' }));
      expect(await store.removeFolder('d', '/a')).toBe('missing');
      expect(await store.removeFolder('d', '/f')).toBe('file');
      expect(dynamodb.commandCalls(DeleteItemCommand)[0].args[0].input.ConditionExpression).toBe('#kind = :folder');
    });
  });

  describe('Method: get', () => {
    it('answers undefined for the root, which has no item, without a call', async () => {
      expect(await store.get('d', '/')).toBeUndefined();
      expect(dynamodb.commandCalls(GetItemCommand)).toHaveLength(0);
    });
  });

  describe('Method: children', () => {
    it('follows every page of the folder partition', async () => {
      dynamodb
        .on(QueryCommand)
        .resolvesOnce({ Items: [folderItem('/p/a')], LastEvaluatedKey: { pk: { S: 'd#/p' }, sk: { S: 'a' } } })
        .resolvesOnce({ Items: [folderItem('/p/b')] });

      const children = await store.children('d', '/p');

      expect(children.map((c) => c.path)).toEqual(['/p/a', '/p/b']);
      expect(dynamodb.commandCalls(QueryCommand)[1].args[0].input.ExclusiveStartKey).toEqual({ pk: { S: 'd#/p' }, sk: { S: 'a' } });
      expect(dynamodb.commandCalls(QueryCommand)[0].args[0].input.ExpressionAttributeValues).toEqual({ ':pk': { S: 'd#/p' } });
    });
  });

  describe('Method: putFile', () => {
    it('reports the file it replaced', async () => {
      const old = { ...folderItem('/docs/a.txt'), kind: { S: 'file' }, size: { N: '9' }, contentType: { S: 'text/plain' }, objectKey: { S: 'd/old' } };
      dynamodb.on(PutItemCommand).resolves({ Attributes: old });

      const result = await store.putFile('d', file);

      expect(result).toEqual({ ok: true, replaced: expect.objectContaining({ objectKey: 'd/old', size: 9 }) });
      expect(dynamodb.commandCalls(PutItemCommand)[0].args[0].input.ConditionExpression).toBe('attribute_not_exists(#pk) OR #kind = :file');
    });

    it('reports no replacement when the old item is its own (an SDK retry of a saved write)', async () => {
      const own = { ...folderItem('/docs/a.txt'), kind: { S: 'file' }, id: { S: 'f1' }, size: { N: '3' }, contentType: { S: 'text/plain' }, objectKey: { S: 'd/f1' } };
      dynamodb.on(PutItemCommand).resolves({ Attributes: own });

      expect(await store.putFile('d', file)).toEqual({ ok: true, replaced: undefined });
    });

    it('reports a folder at the path as a refusal, without reading it', async () => {
      dynamodb.on(PutItemCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));

      expect(await store.putFile('d', file)).toEqual({ ok: false });
      expect(dynamodb.commandCalls(GetItemCommand)).toHaveLength(0);
    });
  });

  describe('Method: createFolder', () => {
    const folder = { kind: 'folder' as const, id: 'new', path: '/docs', createdAt: '2026-01-01T00:00:00.000Z' };

    it('creates a missing folder, or returns the existing one, in one conditional update', async () => {
      dynamodb.on(UpdateItemCommand).resolvesOnce({}).resolvesOnce({ Attributes: folderItem('/docs') });

      expect(await store.createFolder('d', folder)).toEqual(folder);
      expect(await store.createFolder('d', folder)).toEqual(expect.objectContaining({ id: 'id-/docs' }));
      expect(dynamodb.commandCalls(UpdateItemCommand)[0].args[0].input).toMatchObject({
        ConditionExpression: 'attribute_not_exists(#pk) OR #kind = :folder',
        ReturnValues: 'ALL_OLD',
      });
    });

    it('answers undefined where a file is', async () => {
      dynamodb.on(UpdateItemCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));
      expect(await store.createFolder('d', folder)).toBeUndefined();
      expect(dynamodb.commandCalls(GetItemCommand)).toHaveLength(0);
    });
  });
});

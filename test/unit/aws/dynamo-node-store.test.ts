import {
  BatchGetItemCommand,
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
  describe('Method: getMany', () => {
    it('reads in strongly consistent batches of 100, resending unprocessed keys, and skips the root', async () => {
      const stuck = { Keys: [{ pk: { S: 'd#/' }, sk: { S: 'p0' } }] };
      dynamodb
        .on(BatchGetItemCommand)
        .resolvesOnce({ Responses: { nodes: [folderItem('/p1')] }, UnprocessedKeys: { nodes: stuck } })
        .resolves({ Responses: { nodes: [folderItem('/p0')] } });

      const found = await store.getMany('d', ['/', ...Array.from({ length: 150 }, (_, i) => `/p${i}`)]);

      expect([...found.keys()].sort()).toEqual(['/p0', '/p1']);
      const calls = dynamodb.commandCalls(BatchGetItemCommand).map((call) => call.args[0].input.RequestItems!.nodes);
      expect(calls.map((request) => request.Keys!.length).sort((a, b) => a - b)).toEqual([1, 50, 100]);
      expect(calls.every((request) => request.ConsistentRead === true)).toBe(true);
    });
  });

  describe('Method: childrenPage', () => {
    it('reads one item past the page to tell whether another follows', async () => {
      dynamodb.on(QueryCommand).resolvesOnce({ Items: [folderItem('/p/a'), folderItem('/p/b'), folderItem('/p/c')], LastEvaluatedKey: { pk: { S: 'd#/p' }, sk: { S: 'c' } } });

      expect(await store.childrenPage('d', '/p', 2)).toEqual({ nodes: [expect.objectContaining({ path: '/p/a' }), expect.objectContaining({ path: '/p/b' })], last: 'b' });
      expect(dynamodb.commandCalls(QueryCommand)[0].args[0].input.Limit).toBe(3);
    });

    it('goes on after a page cut short by the 1 MB a Query returns at most', async () => {
      dynamodb.on(QueryCommand).resolvesOnce({ Items: [folderItem('/p/a')], LastEvaluatedKey: { pk: { S: 'd#/p' }, sk: { S: 'a' } } }).resolvesOnce({ Items: [folderItem('/p/b')] });

      expect(await store.childrenPage('d', '/p', 5)).toEqual({ nodes: [expect.objectContaining({ path: '/p/a' })], last: 'a' });
      expect(await store.childrenPage('d', '/p', 5, 'a')).toEqual({ nodes: [expect.objectContaining({ path: '/p/b' })] });
      expect(dynamodb.commandCalls(QueryCommand)[1].args[0].input.ExclusiveStartKey).toEqual({ pk: { S: 'd#/p' }, sk: { S: 'a' } });
    });
  });

  describe('Method: markDeleting', () => {
    const folder = { kind: 'folder' as const, id: 'id-/a', path: '/a', createdAt: '2026-01-01T00:00:00.000Z' };

    it('marks the folder with that id and returns it marked; a folder replaced since is not marked', async () => {
      dynamodb
        .on(UpdateItemCommand)
        .resolvesOnce({ Attributes: { ...folderItem('/a'), deleting: { S: 'recursive' } } })
        .rejectsOnce(new ConditionalCheckFailedException({ message: 'failed', $metadata: {}, Item: { ...folderItem('/a'), id: { S: 'other' } } }));

      expect(await store.markDeleting('d', folder, 'recursive')).toEqual({ ...folder, deleting: 'recursive' });
      expect(await store.markDeleting('d', folder, 'recursive')).toBeUndefined();
      expect(dynamodb.commandCalls(UpdateItemCommand)[0].args[0].input.ConditionExpression).toBe('#kind = :folder AND #id = :id AND attribute_not_exists(#moving)');
    });

    it('never turns a recursive delete into an empty-folder one: the folder comes back as the recursive delete marked it', async () => {
      dynamodb.on(UpdateItemCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {}, Item: { ...folderItem('/a'), deleting: { S: 'recursive' } } }));

      expect(await store.markDeleting('d', folder, 'empty')).toEqual({ ...folder, deleting: 'recursive' });
      expect(dynamodb.commandCalls(UpdateItemCommand)[0].args[0].input.ConditionExpression).toContain('#deleting = :mark');
    });
  });

  describe('Method: removeFolder', () => {
    it('deletes only the marked folder with the id given', async () => {
      const folder = { kind: 'folder' as const, id: 'id-/a', path: '/a', createdAt: '2026-01-01T00:00:00.000Z', deleting: 'recursive' as const };
      dynamodb.on(DeleteItemCommand).resolvesOnce({}).rejectsOnce(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));

      expect(await store.removeFolder('d', folder)).toBe(true);
      expect(await store.removeFolder('d', folder)).toBe(false);
      expect(dynamodb.commandCalls(DeleteItemCommand)[0].args[0].input).toMatchObject({
        ConditionExpression: '#id = :id AND attribute_exists(#deleting)',
        ExpressionAttributeValues: { ':id': { S: 'id-/a' } },
      });
    });
  });

  describe('Method: removeIfSame', () => {
    it('deletes the item only while it holds the node with the id given', async () => {
      const failed = new ConditionalCheckFailedException({ message: 'failed', $metadata: {} });
      dynamodb.on(DeleteItemCommand).resolvesOnce({}).rejectsOnce(failed);

      expect(await store.removeIfSame('d', '/docs/a.txt', 'f1')).toBe(true);
      expect(await store.removeIfSame('d', '/docs/a.txt', 'f1')).toBe(false);
      expect(dynamodb.commandCalls(DeleteItemCommand)[0].args[0].input).toMatchObject({
        Key: { pk: { S: 'd#/docs' }, sk: { S: 'a.txt' } },
        ConditionExpression: '#id = :id',
        ExpressionAttributeValues: { ':id': { S: 'f1' } },
      });
    });
  });

  describe('Method: removeIfSame, with a condition on marks', () => {
    it('adds the marks asked to the same conditional delete, without a read', async () => {
      dynamodb.on(DeleteItemCommand).resolves({});

      await store.removeIfSame('d', '/docs', 'id-/docs', { unmarked: true });
      await store.removeIfSame('d', '/docs', 'id-/docs', { movingJob: 'job1' });

      const [unmarked, moving] = dynamodb.commandCalls(DeleteItemCommand).map((call) => call.args[0].input);
      expect(unmarked).toMatchObject({
        ConditionExpression: '#id = :id AND attribute_not_exists(#deleting) AND attribute_not_exists(#moving) AND attribute_not_exists(#kept)',
        ExpressionAttributeValues: { ':id': { S: 'id-/docs' } },
      });
      expect(moving).toMatchObject({ ConditionExpression: '#id = :id AND #moving = :job', ExpressionAttributeValues: { ':id': { S: 'id-/docs' }, ':job': { S: 'job1' } } });
      expect(dynamodb.commandCalls(GetItemCommand)).toHaveLength(0);
    });
  });

  describe('Method: restoreIfSame', () => {
    it('puts the previous node back only while the item holds the node with the id given', async () => {
      const failed = new ConditionalCheckFailedException({ message: 'failed', $metadata: {} });
      dynamodb.on(PutItemCommand).resolvesOnce({}).rejectsOnce(failed);
      const previous: FileNode = { ...file, id: 'f0', objectKey: 'd/f0' };

      expect(await store.restoreIfSame('d', file.path, 'f1', previous)).toBe(true);
      expect(await store.restoreIfSame('d', file.path, 'f1', previous)).toBe(false);
      expect(dynamodb.commandCalls(PutItemCommand)[0].args[0].input).toMatchObject({
        Item: { id: { S: 'f0' }, path: { S: '/docs/a.txt' } },
        ConditionExpression: '#id = :id',
        ExpressionAttributeValues: { ':id': { S: 'f1' } },
      });
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

  describe('Method: keepFolder', () => {
    const folder = { kind: 'folder' as const, id: 'id-/docs', path: '/docs', createdAt: '2026-01-01T00:00:00.000Z' };

    it('notes the folder read in one update conditional on its id, and answers it as noted', async () => {
      dynamodb.on(UpdateItemCommand).resolvesOnce({ Attributes: { ...folderItem('/docs'), kept: { BOOL: true } } });

      expect(await store.keepFolder('d', folder)).toEqual(expect.objectContaining({ id: 'id-/docs', kept: true }));
      expect(dynamodb.commandCalls(UpdateItemCommand)[0].args[0].input).toMatchObject({
        UpdateExpression: 'SET #kept = :kept',
        ConditionExpression: '#kind = :folder AND #id = :id',
        ReturnValues: 'ALL_NEW',
      });
    });

    it('answers undefined, with no read, when that folder is not there', async () => {
      dynamodb.on(UpdateItemCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));
      expect(await store.keepFolder('d', folder)).toBeUndefined();
      expect(dynamodb.commandCalls(GetItemCommand)).toHaveLength(0);
    });
  });
});

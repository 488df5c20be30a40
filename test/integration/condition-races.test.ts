import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { DynamoNodeStore, toItem } from '../../functions/aws/dynamo-node-store';
import { DynamoUploadSessions } from '../../functions/aws/dynamo-upload-sessions';
import { DriveError } from '../../functions/core/errors';
import { completeUpload, startUpload } from '../../functions/core/large-upload';
import type { FileNode, MultipartStore, NodeStore, ObjectStore, WriteCondition } from '../../functions/core/ports';
import { uploadFiles } from '../../functions/core/upload';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// The conditions of an upload (`if_match`, `if_none_match`) as the DynamoDB adapter writes them: a rival
// replace forced between the upload's read (which the condition passes) and its record's write, on the
// embedded DynamoDB. Only the write's condition expression can refuse it there (test/model/conditions.test.ts
// runs every order over the memory port, which copies this condition).

const dynamo = useEmbeddedDynamo('condition-races');
let store: DynamoNodeStore;
let drive: string;
let count = 0;

beforeAll(() => {
  store = new DynamoNodeStore(dynamo.client, LOCAL_RESOURCES.nodesTable);
});

beforeEach(() => {
  drive = `conditions-${++count}`;
});

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

function objectStore(): ObjectStore & { keys: Set<string> } {
  const keys = new Set<string>();
  return { keys, put: async (key) => void keys.add(key), open: async () => undefined, deleteMany: async (gone) => gone.forEach((key) => keys.delete(key)) };
}

function file(path: string, body: string, id = `id-${body}`): FileNode {
  return { kind: 'file', id, path, size: body.length, contentType: 'text/plain', createdAt: '2026-11-27T00:00:00.000Z', objectKey: `${drive}/${id}`, etag: md5(body) };
}

/** The store, with `rival` run once just before the first `putFile` of `path` the upload makes. */
function rivalBeforeWrite(path: string, rival: () => Promise<unknown>): NodeStore {
  let ran = false;
  return new Proxy(store, {
    get(target, method: keyof NodeStore) {
      const real = target[method] as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        if (method === 'putFile' && !ran && (args[1] as FileNode).path === path) {
          ran = true;
          await rival();
        }
        return real.apply(target, args);
      };
    },
  });
}

const refusal = (promise: Promise<unknown>) => promise.then(() => 'stored', (error: unknown) => (error instanceof DriveError ? `${error.status} ${error.message}` : error));

describe('a condition held by the record write on DynamoDB', () => {
  it('refuses an if_match upload of one file whose version was replaced after its read: 412, nothing stored', async () => {
    await store.putFile(drive, file('/c/f', 'v0'));
    const objects = objectStore();
    const nodes = rivalBeforeWrite('/c/f', () => store.putFile(drive, file('/c/f', 'rival')));
    const answer = await refusal(uploadFiles({ nodes, objects }, drive, [{ filename: 'f', data: Buffer.from('mine') }], [{ path: '/c/f', ifMatch: md5('v0') }]));
    expect(answer).toBe(`412 the condition failed for /c/f (if_match "${md5('v0')}": no file with that ETag is there); nothing of this upload is stored`);
    expect(await store.get(drive, '/c/f')).toMatchObject({ id: 'id-rival' });
    expect([...objects.keys]).toEqual([]);
  });

  it('refuses a two-file upload whose second file lost its version meanwhile: its first file withdrawn too', async () => {
    await store.putFile(drive, file('/c/f', 'v0'));
    const objects = objectStore();
    const nodes = rivalBeforeWrite('/c/f', () => store.putFile(drive, file('/c/f', 'rival')));
    const parts = [{ filename: 'g', data: Buffer.from('new') }, { filename: 'f', data: Buffer.from('mine') }];
    const answer = await refusal(uploadFiles({ nodes, objects }, drive, parts, [{ path: '/c/g' }, { path: '/c/f', ifMatch: `"${md5('v0')}"` }]));
    expect(answer).toMatch(/^412 the condition failed for \/c\/f /);
    expect(await store.get(drive, '/c/g')).toBeUndefined();
    expect(await store.get(drive, '/c/f')).toMatchObject({ id: 'id-rival' });
    expect([...objects.keys]).toEqual([]);
  });

  it('refuses an if_none_match upload when a file was stored after its read', async () => {
    await store.createFolder(drive, { kind: 'folder', id: 'c', path: '/c', createdAt: '2026-11-27T00:00:00.000Z' });
    const objects = objectStore();
    const nodes = rivalBeforeWrite('/c/n', () => store.putFile(drive, file('/c/n', 'rival')));
    const answer = await refusal(uploadFiles({ nodes, objects }, drive, [{ filename: 'n', data: Buffer.from('mine') }], [{ path: '/c/n', ifNoneMatch: '*' }]));
    expect(answer).toBe('412 the condition failed for /c/n (if_none_match "*": a file is there); nothing of this upload is stored');
    expect(await store.get(drive, '/c/n')).toMatchObject({ id: 'id-rival' });
    expect([...objects.keys]).toEqual([]);
  });

  it.each([
    ['if_match', { ifMatch: md5('v0') }, `412 the condition failed for /c/big (if_match "${md5('v0')}": no file with that ETag is there); nothing of this upload is stored`],
    ['if_none_match', { ifNoneMatch: '*' }, '412 the condition failed for /c/big (if_none_match "*": a file is there); nothing of this upload is stored'],
  ] as [string, WriteCondition, string][])(
    'refuses a large upload\'s completion (%s) when a file was stored after its check before assembly: 412, the assembled object deleted, the session ended',
    async (name, condition, message) => {
      if (name === 'if_match') await store.putFile(drive, file('/c/big', 'v0'));
      else await store.createFolder(drive, { kind: 'folder', id: 'c', path: '/c', createdAt: '2026-11-27T00:00:00.000Z' });
      // Storage in memory (one part, assembled on `complete`); the session in the uploads table, condition and all.
      const held = new Set<string>();
      const objects: ObjectStore = { put: async () => undefined, open: async () => undefined, deleteMany: async (keys) => keys.forEach((key) => held.delete(key)) };
      let open = false;
      const parts: MultipartStore = {
        begin: async () => ((open = true), 'mp'),
        partUrls: async (_key, _id, first, count) => Array.from({ length: count }, (_, i) => `https://s3.test/part${first + i}`),
        listParts: async () => (open ? [{ number: 1, etag: '"e1"', size: 100 }] : undefined),
        complete: async (key) => ((open = false), held.add(key), 'done'),
        head: async (key) => (held.has(key) ? { size: 100, etag: 'e-1' } : undefined),
        abort: async () => void (open = false),
      };
      const sessions = new DynamoUploadSessions(dynamo.client, LOCAL_RESOURCES.uploadsTable);
      const { session } = await startUpload({ nodes: store, objects, parts, sessions }, drive, { path: '/c/big', size: 100, condition }, { maxFileBytes: 1000, expirySeconds: 3600 });
      expect((await sessions.get(drive, session.id))?.condition).toEqual(condition);

      const nodes = rivalBeforeWrite('/c/big', () => store.putFile(drive, file('/c/big', 'rival')));
      const answer = await refusal(completeUpload({ nodes, objects, parts, sessions }, drive, session.id, [{ number: 1, etag: '"e1"' }]));
      expect(answer).toBe(message);
      expect(await store.get(drive, '/c/big')).toMatchObject({ id: 'id-rival' });
      expect([...held]).toEqual([]);
      expect(await sessions.get(drive, session.id)).toBeUndefined();
    },
  );

  it('lets a write through whose condition still holds, and an SDK retry of it find its own record', async () => {
    const v0 = file('/c/f', 'v0');
    await store.putFile(drive, v0);
    const mine = file('/c/f', 'mine');
    expect(await store.putFile(drive, mine, { condition: { ifMatch: md5('v0') } })).toEqual({ ok: true, replaced: v0 });
    // The same write again, as the SDK retries one whose reply was lost: its own record passes.
    expect(await store.putFile(drive, mine, { condition: { ifMatch: md5('v0') } })).toEqual({ ok: true, replaced: undefined });
    expect(await store.putFile(drive, file('/c/f', 'other'), { condition: { ifMatch: md5('v0') } })).toEqual({ ok: false, precondition: true });
  });

  it('matches a record from before content hashes by its id, which its ETag is', async () => {
    const old = file('/c/old', 'old', 'a0b1c2d3-0000-4000-8000-000000000000');
    const item = toItem(drive, old);
    delete item.etag;
    await dynamo.client.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.nodesTable, Item: item }));
    expect(await store.get(drive, '/c/old')).toMatchObject({ etag: old.id });
    expect(await store.putFile(drive, file('/c/old', 'x'), { condition: { ifMatch: md5('old') } })).toEqual({ ok: false, precondition: true });
    expect(await store.putFile(drive, file('/c/old', 'y'), { condition: { ifMatch: old.id } })).toMatchObject({ ok: true });
  });
});

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { deleteFolder } from '../../functions/core/delete-folder';
import { ensureFolder } from '../../functions/core/folders';
import { ROOT, parentOf } from '../../functions/core/paths';
import type { DriveNode, FileNode, NodeStore, ObjectStore } from '../../functions/core/ports';
import { LOCAL_CREDENTIALS, LOCAL_REGION, LOCAL_RESOURCES, startEmbeddedDynamo } from '../../lib/local/emulators';
import { removeDataDir } from '../support/local-host';

// The rare interleavings of racing writers, forced step by step on the embedded DynamoDB: a store that
// runs a rival's calls at one exact point of the operation under test.

let dataDir: string;
let dynamo: { endpoint: string; close(): Promise<void> };
let client: DynamoDBClient;
let store: DynamoNodeStore;
let drive: string;
let driveCount = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-interleavings-'));
  dynamo = await startEmbeddedDynamo(dataDir);
  client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  store = new DynamoNodeStore(client, LOCAL_RESOURCES.nodesTable);
});

afterAll(async () => {
  client.destroy();
  await dynamo.close();
  await removeDataDir(dataDir);
});

beforeEach(() => {
  drive = `interleave-${++driveCount}`;
});

type Hook = (method: keyof NodeStore, args: unknown[]) => Promise<void> | void;

/** The real store, with `before` run ahead of each call the operation makes (not the rival's own calls). */
function interceptedStore(before: Hook, after: Hook = () => undefined): NodeStore {
  return new Proxy(store, {
    get(target, method: keyof NodeStore) {
      const real = target[method] as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        await before(method, args);
        const result = await real.apply(target, args);
        await after(method, args);
        return result;
      };
    },
  });
}

/** Bytes that nobody reads here: what matters is which keys a delete gives up. */
function objectLog(): ObjectStore & { deleted: string[] } {
  const deleted: string[] = [];
  return {
    deleted,
    put: async () => undefined,
    open: async () => undefined,
    deleteMany: async (keys) => void deleted.push(...keys),
  };
}

function file(path: string, id = `id-${path}`): FileNode {
  return { kind: 'file', id, path, size: 1, contentType: 'text/plain', createdAt: '2026-11-21T00:00:00.000Z', objectKey: `${drive}/${id}`, etag: id };
}

/** Every node of the drive below `/`, and each one's parent, which must be `/` or a folder. */
async function expectEveryParentAFolder(): Promise<DriveNode[]> {
  const all: DriveNode[] = [];
  const queue = [ROOT];
  while (queue.length > 0) {
    const folder = queue.shift()!;
    for (const child of await store.children(drive, folder)) {
      all.push(child);
      if (child.kind === 'folder') queue.push(child.path);
    }
  }
  for (const node of all) {
    const parent = parentOf(node.path);
    if (parent !== ROOT) expect(await store.get(drive, parent)).toMatchObject({ kind: 'folder', path: parent });
  }
  return all;
}

describe('interleavings of racing writers (embedded DynamoDB)', () => {
  it('a failed mkdir -p keeps a folder it created once another upload has stored a file in it', async () => {
    // Upload 1 makes /a/b/c upwards and meets the file /a; between its last folder and that, upload 2
    // stores /a/b/c/y and finds its folder there.
    await store.putFile(drive, file('/a'));
    let rivalRan = false;
    const nodes = interceptedStore(async (method, args) => {
      if (method === 'createFolder' && (args[1] as DriveNode).path === '/a' && !rivalRan) {
        rivalRan = true;
        await store.putFile(drive, file('/a/b/c/y'));
        await ensureFolder(store, drive, '/a/b/c', 'now', { readFirst: true });
      }
    });

    await expect(ensureFolder(nodes, drive, '/a/b/c', 'now')).rejects.toMatchObject({ code: 'conflict' });

    expect(rivalRan).toBe(true);
    const left = await store.children(drive, '/a/b/c');
    expect(left.map((node) => node.path)).toEqual(['/a/b/c/y']);
    expect(await store.get(drive, '/a/b/c')).toMatchObject({ kind: 'folder' });
    expect(await store.get(drive, '/a/b')).toMatchObject({ kind: 'folder' });
  });

  it('a failed mkdir -p that nobody raced removes every folder it created', async () => {
    await store.putFile(drive, file('/a'));

    await expect(ensureFolder(store, drive, '/a/b/c', 'now')).rejects.toMatchObject({ code: 'conflict' });

    expect(await store.children(drive, '/a/b')).toEqual([]);
    expect(await store.get(drive, '/a/b')).toBeUndefined();
  });

  it('an empty-folder delete whose folder is taken by a file while a late file lands in it: the late file goes with the folder', async () => {
    await ensureFolder(store, drive, '/f', 'now');
    const objects = objectLog();
    const nodes = interceptedStore(
      () => undefined,
      async (method) => {
        if (method === 'removeFolder') {
          await store.putFile(drive, file('/f/late.txt')); // an upload that had seen /f empty…
          await store.putFile(drive, file('/f')); // …and another that stores a file at the freed path
        }
      },
    );

    await expect(deleteFolder({ nodes, objects }, drive, '/f', false)).resolves.toBe(1);

    expect(await store.get(drive, '/f')).toMatchObject({ kind: 'file' });
    expect(await store.children(drive, '/f')).toEqual([]);
    expect(objects.deleted).toEqual([`${drive}/id-/f/late.txt`]);
    await expectEveryParentAFolder();
  });

  it('an empty-folder delete with a late file and nothing at its path: the folder goes back and the delete answers 409', async () => {
    await ensureFolder(store, drive, '/f', 'now');
    const objects = objectLog();
    const nodes = interceptedStore(
      () => undefined,
      async (method) => {
        if (method === 'removeFolder') await store.putFile(drive, file('/f/late.txt'));
      },
    );

    await expect(deleteFolder({ nodes, objects }, drive, '/f', false)).rejects.toMatchObject({ code: 'conflict' });

    expect(await store.get(drive, '/f')).toMatchObject({ kind: 'folder' });
    expect(objects.deleted).toEqual([]);
    await expectEveryParentAFolder();
  });

  it('a recursive delete that late files keep reaching stops chasing them and gives the last ones their folders back', async () => {
    await store.putFile(drive, file('/t/sub/0.txt'));
    await ensureFolder(store, drive, '/t/sub', 'now');
    const objects = objectLog();
    let late = 0;
    const nodes = interceptedStore(async (method, args) => {
      // Each look into a deleted folder finds a new subfolder with a file: an upload that made it while its
      // parent still stood (so the upload succeeded), and wrote it after the delete's previous look.
      const folder = args[1] as string;
      if (method === 'children' && folder.startsWith('/t/sub') && !(await store.get(drive, folder))) {
        late++;
        await store.putFile(drive, file(`${folder}/d/x.txt`));
        await store.createFolder(drive, { kind: 'folder', id: `late-${late}`, path: `${folder}/d`, createdAt: 'now' });
      }
    });

    const deleted = await deleteFolder({ nodes, objects }, drive, '/t', true);

    const left = await expectEveryParentAFolder();
    const lastFolder = `/t/sub${'/d'.repeat(late)}`;
    expect(left.filter((node) => node.kind === 'file').map((node) => node.path)).toEqual([`${lastFolder}/x.txt`]);
    expect(late).toBeGreaterThan(2);
    expect(deleted).toBe(late); // the first file and every late one but the last
    expect(objects.deleted).toHaveLength(deleted);
  });
});

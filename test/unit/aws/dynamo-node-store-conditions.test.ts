import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoNodeStore } from '../../../functions/aws/dynamo-node-store';
import type { FolderNode } from '../../../functions/core/ports';
import { LOCAL_RESOURCES } from '../../../lib/local/emulators';
import { useEmbeddedDynamo } from '../../support/embedded-dynamo';

// The node store's conditional writes against the embedded DynamoDB, through the real SDK: what a condition
// lets through is DynamoDB's to decide, which a mocked client cannot show (dynamo-node-store.test.ts checks
// the expressions sent; this file, what they do). One file of its own: that one mocks every DynamoDBClient.

const dynamo = useEmbeddedDynamo('node-store');
let client: DynamoDBClient;
let store: DynamoNodeStore;
let n = 0;

beforeAll(async () => {
  client = dynamo.client;
  store = new DynamoNodeStore(client, LOCAL_RESOURCES.nodesTable);
});

/** A fresh drive for each test, with one folder `/f` stored as `marks` say. */
async function folderIn(marks: Pick<FolderNode, 'deleting' | 'moving'> = {}): Promise<{ drive: string; folder: FolderNode }> {
  const drive = `d${++n}`;
  const folder: FolderNode = { kind: 'folder', id: `id${n}`, path: '/f', createdAt: '2026-01-01T00:00:00.000Z' };
  await store.createFolder(drive, folder);
  if (marks.moving) await store.markMoving(drive, folder, marks.moving);
  if (marks.deleting) await store.markDeleting(drive, folder, marks.deleting);
  return { drive, folder };
}

describe('DynamoNodeStore.keepFolder (a mkdir notes a folder it found)', () => {
  it('notes the folder read kept, keeping its id and marks', async () => {
    const { drive, folder } = await folderIn({ moving: 'job1' });
    expect(await store.keepFolder(drive, folder)).toEqual({ ...folder, moving: 'job1', kept: true });
    expect(await store.get(drive, '/f')).toEqual({ ...folder, moving: 'job1', kept: true });
  });

  it('makes nothing where nothing stands (gap 10: a note never makes a folder anew)', async () => {
    const drive = `d${++n}`;
    const gone: FolderNode = { kind: 'folder', id: 'read', path: '/k', createdAt: '2026-01-01T00:00:00.000Z' };
    expect(await store.keepFolder(drive, gone)).toBeUndefined();
    expect(await store.get(drive, '/k')).toBeUndefined();
  });

  it('leaves another folder at the path, and a file, as they are', async () => {
    const { drive, folder } = await folderIn();
    expect(await store.keepFolder(drive, { ...folder, id: 'read' })).toBeUndefined();
    expect(await store.get(drive, '/f')).toEqual(folder);
    const file = { kind: 'file' as const, id: 'read', path: '/g', size: 1, contentType: 'text/plain', createdAt: folder.createdAt, objectKey: `${drive}/read`, etag: 'e' };
    await store.putFile(drive, file);
    expect(await store.keepFolder(drive, { ...folder, id: 'read', path: '/g' })).toBeUndefined();
    expect(await store.get(drive, '/g')).toEqual(file);
  });
});

describe('DynamoNodeStore.createFolder', () => {
  it('leaves a folder as it is', async () => {
    const { drive, folder } = await folderIn();
    expect(await store.createFolder(drive, { ...folder, id: 'mine' })).toEqual(folder);
    expect(await store.get(drive, '/f')).toEqual(folder);
  });
});

describe('DynamoNodeStore.removeIfSame, with a condition on marks', () => {
  it('removes an unmarked folder with { unmarked: true }', async () => {
    const { drive, folder } = await folderIn();
    expect(await store.removeIfSame(drive, '/f', folder.id, { unmarked: true })).toBe(true);
    expect(await store.get(drive, '/f')).toBeUndefined();
  });

  it.each([{ moving: 'job1' }, { deleting: 'recursive' as const }, { deleting: 'empty' as const }])('leaves a folder marked %j with { unmarked: true }', async (marks) => {
    const { drive, folder } = await folderIn(marks);
    expect(await store.removeIfSame(drive, '/f', folder.id, { unmarked: true })).toBe(false);
    expect(await store.get(drive, '/f')).toMatchObject({ id: folder.id, ...marks });
  });

  it('removes a folder only while the move named holds it, with { movingJob }', async () => {
    const { drive, folder } = await folderIn({ moving: 'job1' });
    expect(await store.removeIfSame(drive, '/f', folder.id, { movingJob: 'job2' })).toBe(false);
    expect(await store.get(drive, '/f')).toMatchObject({ moving: 'job1' });
    expect(await store.removeIfSame(drive, '/f', folder.id, { movingJob: 'job1' })).toBe(true);
    expect(await store.get(drive, '/f')).toBeUndefined();
  });

  it('leaves an unmarked folder with { movingJob }', async () => {
    const { drive, folder } = await folderIn();
    expect(await store.removeIfSame(drive, '/f', folder.id, { movingJob: 'job1' })).toBe(false);
    expect(await store.get(drive, '/f')).toBeDefined();
  });

  it('leaves a folder a mkdir noted kept with { unmarked: true }', async () => {
    const { drive, folder } = await folderIn();
    expect(await store.keepFolder(drive, folder)).toEqual({ ...folder, kept: true });
    expect(await store.removeIfSame(drive, '/f', folder.id, { unmarked: true })).toBe(false);
    expect(await store.get(drive, '/f')).toEqual({ ...folder, kept: true });
    // The plain removal (a move letting go of an emptied source) still removes it.
    expect(await store.removeIfSame(drive, '/f', folder.id)).toBe(true);
  });

  it('still checks the id first: another folder at the path stays', async () => {
    const { drive } = await folderIn();
    expect(await store.removeIfSame(drive, '/f', 'other', { unmarked: true })).toBe(false);
    expect(await store.get(drive, '/f')).toBeDefined();
  });
});

describe('DynamoNodeStore.markDeleting, with { unmarked: true } (a writer letting go of a folder it made)', () => {
  it('marks an unmarked folder empty and answers it as marked', async () => {
    const { drive, folder } = await folderIn();
    expect(await store.markDeleting(drive, folder, 'empty', { unmarked: true })).toEqual({ ...folder, deleting: 'empty' });
    expect(await store.get(drive, '/f')).toEqual({ ...folder, deleting: 'empty' });
  });

  it.each([{ moving: 'job1' }, { deleting: 'recursive' as const }, { deleting: 'empty' as const }])('leaves a folder marked %j as it is, and answers undefined', async (marks) => {
    const { drive, folder } = await folderIn(marks);
    expect(await store.markDeleting(drive, folder, 'empty', { unmarked: true })).toBeUndefined();
    expect(await store.get(drive, '/f')).toEqual({ ...folder, ...marks });
  });

  it('leaves a folder a mkdir noted kept, and another folder at the path', async () => {
    const { drive, folder } = await folderIn();
    expect(await store.markDeleting(drive, { ...folder, id: 'other' }, 'empty', { unmarked: true })).toBeUndefined();
    await store.keepFolder(drive, folder);
    expect(await store.markDeleting(drive, folder, 'empty', { unmarked: true })).toBeUndefined();
    expect(await store.get(drive, '/f')).toEqual({ ...folder, kept: true });
  });
});

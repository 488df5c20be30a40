import { BatchWriteItemCommand, type BatchWriteItemCommandOutput, type DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { chunk } from '../../functions/aws/batches';
import { DynamoNodeStore, toItem } from '../../functions/aws/dynamo-node-store';
import { mapLimit } from '../../functions/core/concurrency';
import { listFolder, listPage } from '../../functions/core/list-folder';
import { ROOT, ancestorsOf, parentOf } from '../../functions/core/paths';
import type { DriveNode, FileNode, FolderNode, NodeStore } from '../../functions/core/ports';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// Listings in the spec's order (path bytes) at every depth, paged or whole, read from the table as they are
// sent: on the embedded DynamoDB, through the store the list function uses.

const dynamo = useEmbeddedDynamo('listing-order');
let client: DynamoDBClient;
let store: DynamoNodeStore;
let driveCount = 0;

beforeAll(async () => {
  client = dynamo.client;
  store = new DynamoNodeStore(client, LOCAL_RESOURCES.nodesTable);
});

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Writes `nodes` into `drive` as the store keeps them, 25 a BatchWriteItem: the listings read them, and how they
 * were made is not what these tests prove (thousands of single writes were most of this file's CPU).
 */
async function seed(drive: string, nodes: readonly DriveNode[]): Promise<void> {
  await mapLimit(chunk(nodes, 25), 4, async (batch) => {
    let requests: WriteRequest[] | undefined = batch.map((node) => ({ PutRequest: { Item: toItem(drive, node) } }));
    while (requests && requests.length > 0) {
      const written: BatchWriteItemCommandOutput = await client.send(new BatchWriteItemCommand({ RequestItems: { [LOCAL_RESOURCES.nodesTable]: requests } }));
      requests = written.UnprocessedItems?.[LOCAL_RESOURCES.nodesTable];
    }
  });
}

const folderAt = (path: string): FolderNode => ({ kind: 'folder', id: `folder${path}`, path, createdAt: '2026-11-25T00:00:00.000Z' });

/** A new drive holding files at `paths`, and every folder above them and `folders`. */
async function driveWith(paths: readonly string[], folders: readonly string[] = []): Promise<string> {
  const drive = `order-${++driveCount}`;
  const above = [...new Set([...paths.map(parentOf), ...folders].flatMap((folder) => [...ancestorsOf(folder), folder]))].filter((folder) => folder !== ROOT);
  const files = paths.map((path): FileNode => ({ kind: 'file', id: path, path, size: 1, contentType: 'text/plain', createdAt: '2026-11-25T00:00:00.000Z', objectKey: `${drive}/${path}`, etag: 'e' }));
  await seed(drive, [...above.map(folderAt), ...files]);
  return drive;
}

/** Every page at `limit`, in turn: the paths of each page's entries, files then folders. */
async function pagesOf(drive: string, folder: string, recursive: boolean, limit: number): Promise<{ files: string[]; folders: string[] }[]> {
  const pages = [];
  let after: string | undefined;
  do {
    const page = await listPage(store, drive, folder, { recursive, limit, after });
    pages.push({ files: page.files.map((file) => file.path), folders: page.folders.map((sub) => sub.path) });
    expect(page.files.length + page.folders.length).toBeLessThanOrEqual(limit);
    after = page.after;
  } while (after !== undefined);
  return pages;
}

/** A streamed listing's entries, its runs joined. */
async function collect<T>(runs: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const run of runs) out.push(...run);
  return out;
}

// Names that sort below `/` (space, `!`, `-`, `.`) put a sibling between a folder and what it holds:
// `/t/a` < `/t/a b` < `/t/a-b` < `/t/a.txt` < `/t/a/x`.
const TREE = ['/t/a/x.txt', '/t/a/b/y.txt', '/t/a/b-c/z.txt', '/t/a b/1.txt', '/t/a-b/2.txt', '/t/a.txt', '/t/a!', '/t/a-/3.txt', '/t/ab', '/t/é/4.txt', '/t/\u{1F600}.txt', '/t/\uFF21.txt'];

describe('recursive listings in path byte order', () => {
  it('the whole listing: files, then folders, each in path byte order', async () => {
    const drive = await driveWith(TREE, ['/t/empty/deeper']);
    const listing = await listFolder(store, drive, '/t', true);
    const files = (await collect(listing.files)).map((file) => file.path);
    const folders = (await collect(listing.folders)).map((folder) => folder.path);
    expect(files).toEqual([...TREE].sort(byBytes));
    expect(folders).toEqual(['/t/a', '/t/a b', '/t/a-', '/t/a-b', '/t/a/b', '/t/a/b-c', '/t/empty', '/t/empty/deeper', '/t/é'].sort(byBytes));
    expect(folders[0]).toBe('/t/a');
  });

  it.each([1, 2, 3, 5, 1000])('pages of %i, one after another, are the listing in path byte order', async (limit) => {
    const drive = await driveWith(TREE, ['/t/empty/deeper']);
    const pages = await pagesOf(drive, '/t', true, limit);
    const all = pages.flatMap((page) => [...page.files, ...page.folders].sort(byBytes));
    expect(all).toEqual([...all].sort(byBytes));
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(TREE.length + 9);
    if (limit < all.length) expect(pages.length).toBe(Math.ceil(all.length / limit));
  });

  it('resumes inside a folder whose siblings sort between it and its entries', async () => {
    const drive = await driveWith(['/r/a/1.txt', '/r/a/2.txt', '/r/a-x.txt', '/r/a.b/3.txt', '/r/b.txt']);
    // After /r/a/1.txt come the rest of /r/a, then /r/b.txt; /r/a-x.txt and /r/a.b sort before /r/a/.
    const page = await listPage(store, drive, '/r', { recursive: true, limit: 10, after: '/r/a/1.txt' });
    expect([...page.files, ...page.folders].map((node) => node.path).sort(byBytes)).toEqual(['/r/a/2.txt', '/r/b.txt']);
    // After /r/a-x.txt: /r/a.b, its file, then /r/a's files (a/ sorts after a.b), then /r/b.txt.
    const next = await listPage(store, drive, '/r', { recursive: true, limit: 10, after: '/r/a-x.txt' });
    expect([...next.files, ...next.folders].map((node) => node.path).sort(byBytes)).toEqual(['/r/a.b', '/r/a.b/3.txt', '/r/a/1.txt', '/r/a/2.txt', '/r/b.txt']);
  });
});

/** The store, counting the children it reads and the Queries it makes. */
function counting(target: NodeStore) {
  const seen = { queries: 0, children: 0, wholeFolders: 0 };
  const nodes = new Proxy(target, {
    get(t, method: keyof NodeStore) {
      const real = t[method] as (...args: unknown[]) => Promise<unknown>;
      if (method === 'children') {
        return async (...args: unknown[]) => {
          seen.wholeFolders++;
          return real.apply(t, args);
        };
      }
      if (method !== 'childrenPage') return real.bind(t);
      return async (...args: unknown[]) => {
        seen.queries++;
        const page = (await real.apply(t, args)) as { nodes: unknown[] };
        seen.children += page.nodes.length;
        return page;
      };
    },
  });
  return { nodes, seen };
}

describe('the whole listing is read as it is sent', () => {
  it('reads a page of the folder at a time: the first file costs one Query of at most 1,001 children', async () => {
    // 1,500 files: past one Query's page of 1,000, which is what this proves (2,500 proved it once more).
    const paths = Array.from({ length: 1500 }, (_, i) => `/big/f${String(i).padStart(5, '0')}`);
    const drive = await driveWith(paths);
    const { nodes, seen } = counting(store);
    const listing = await listFolder(nodes, drive, '/big', false);
    const files = listing.files[Symbol.asyncIterator]();
    const first = (await files.next()).value;
    expect(first?.[0]?.path).toBe('/big/f00000');
    expect({ queries: seen.queries, wholeFolders: seen.wholeFolders }).toEqual({ queries: 1, wholeFolders: 0 });
    expect(seen.children).toBeLessThanOrEqual(1001);
    expect(first!.length).toBeLessThanOrEqual(1000);
    let count = first!.length;
    for (let run = await files.next(); !run.done; run = await files.next()) count += run.value.length;
    expect(count).toBe(1500);
    expect(seen.queries).toBe(2);
  });

  it('walks again for the folders when it met more than it holds, and keeps the order', async () => {
    const folders = Array.from({ length: 1200 }, (_, i) => `/many/d${String(i).padStart(6, '0')}`);
    const drive = await driveWith([], folders);
    const { nodes, seen } = counting(store);
    const listing = await listFolder(nodes, drive, '/many', false, 1000);
    expect(await collect(listing.files)).toEqual([]);
    const firstWalk = seen.queries;
    const listed = (await collect(listing.folders)).map((folder) => folder.path);
    expect(listed).toEqual(folders);
    expect({ firstWalk, queries: seen.queries }).toEqual({ firstWalk: 2, queries: 4 });
  });

  it('hands on the folders its walk over the files met, when they are few', async () => {
    const drive = await driveWith(['/few/a/1.txt', '/few/b.txt', '/few/c/2.txt']);
    const { nodes, seen } = counting(store);
    const listing = await listFolder(nodes, drive, '/few', true);
    expect((await collect(listing.files)).map((file) => file.path)).toEqual(['/few/a/1.txt', '/few/b.txt', '/few/c/2.txt']);
    const queries = seen.queries;
    expect((await collect(listing.folders)).map((folder) => folder.path)).toEqual(['/few/a', '/few/c']);
    expect(seen.queries).toBe(queries);
  });

  it('asks ahead for at most 16 folders\' first pages, even when siblings named as prefixes of each other put them all off', async () => {
    // `a`, `a!`, `a!!`…: each sorts before the one before it plus `/`, so the walk enters none until it has read them all.
    const names = Array.from({ length: 40 }, (_, i) => `a${'!'.repeat(i)}`);
    const drive = await driveWith(names.map((name) => `/chain/${name}/f.txt`));
    const { nodes, seen } = counting(store);
    const listing = await listFolder(nodes, drive, '/chain', true);
    const files = listing.files[Symbol.asyncIterator]();
    const first = (await files.next()).value;
    expect(first?.[0]?.path).toBe(`/chain/${names.at(-1)}/f.txt`);
    expect(seen.queries).toBeLessThanOrEqual(1 + 16 + 1);
    let count = first!.length;
    for (let run = await files.next(); !run.done; run = await files.next()) count += run.value.length;
    expect({ count, queries: seen.queries }).toEqual({ count: 40, queries: 41 });
  });

  it('answers 404 before anything is read for a folder that is not there, or a file', async () => {
    const drive = await driveWith(['/here/file.txt']);
    await expect(listFolder(store, drive, '/nowhere', true)).rejects.toMatchObject({ code: 'not_found' });
    await expect(listFolder(store, drive, '/here/file.txt', false)).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('is a file') });
  });
});

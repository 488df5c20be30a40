import { createHash, randomBytes } from 'node:crypto';
import { DriveClient, type FileJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { putFiles, untilDone } from '../support/seeding';
import { type RestoreJobJson, deleteAndRestoreWhole, restoreItem, trashPage } from '../support/trash';

// The trash (issue 28) on the local host, against its embedded S3 and DynamoDB: deletes and replacements put
// what they remove in the trash, which lists, restores and purges it (docs/trash-design.md, "How each 'Done
// when' test will be built": 1, 3, 4 and 6). fsck after each.

const ADMIN = 'trash-admin-q8Zr2WbVNUe0p7LJ4s1TdXk';
const WRITER = 'trash-writer-M3hQ9cPzA1sB6nYt0kVfRwE';
const READER = 'trash-reader-Xw7Lq2EoN5aD9fJ3uHc8GmB';
const UPLOADER = 'trash-uploader-Tb4Kc9VxP2eR7yL1nQ6sWz';

let host: RunningHost;
let admin: DriveClient;

beforeAll(async () => {
  host = await startHost({
    DRIVE_API_KEYS: [`trash:${ADMIN}:admin`, `trash:${WRITER}:read-write:/mine`, `trash:${READER}:read-only`, `trash:${UPLOADER}:upload-only`].join(','),
    DRIVE_RATE_LIMITS: 'off',
    // The default (7 days), named: the purge_at the tests read is deleted_at plus these days.
    DRIVE_TRASH_DAYS: '7',
  });
  admin = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function upload(client: DriveClient, path: string, data: Uint8Array | string): Promise<FileJson> {
  const res = await json<{ data: FileJson[] }>(client.upload([{ data, filename: 'x.bin' }], [{ path }]));
  expect(res.status).toBe(200);
  return res.body.data[0];
}

const trash = trashPage;
const restore = restoreItem;

async function etagOf(client: DriveClient, path: string): Promise<{ status: number; etag: string | null; hash?: string }> {
  const res = await client.download({ path });
  if (res.status !== 200) return { status: res.status, etag: null };
  return { status: 200, etag: res.headers.get('etag'), hash: sha(new Uint8Array(await res.arrayBuffer())) };
}

const keyOf = (id: string, drive = 'trash') => `${drive}/${id}`;
const fsckClean = async () => expect((await runFsck(host.dataDir)).code).toBe(0);

describe('the trash', () => {
  it('keeps a deleted file: listed, restored with the same bytes and ETag', async () => {
    const bytes = randomBytes(5000);
    const file = await upload(admin, '/one/a.bin', bytes);
    const before = await etagOf(admin, '/one/a.bin');

    const deleted = await json<{ data: { deleted: string[] } }>(admin.request('DELETE', '/drive/files?path=/one/a.bin'));
    expect(deleted.body.data.deleted).toEqual(['/one/a.bin']);
    // Gone from downloads and listings at once.
    expect((await admin.download({ path: '/one/a.bin' })).status).toBe(404);
    const listed = await json<{ data: { files: unknown[] } }>(admin.list({ folder: '/one' }));
    expect(JSON.stringify(listed.body)).not.toContain('a.bin');

    const page = await trash(admin, { path: '/one' });
    expect(page.status).toBe(200);
    expect(page.body.data.items).toHaveLength(1);
    const [item] = page.body.data.items;
    expect(item).toMatchObject({ type: 'file', path: '/one/a.bin', size: 5000, reason: 'deleted', state: 'trashed' });
    expect(item.deleted_by).toMatch(/^[0-9a-f]{16}$/);
    expect(Date.parse(item.purge_at) - Date.parse(item.deleted_at)).toBe(7 * 86_400_000);
    expect(page.body.data.usage).toEqual({ items: 1, files: 1, bytes: 5000 });
    await fsckClean();

    const restored = await restore(admin, { id: item.id });
    expect(restored.status).toBe(200);
    expect(restored.body.data).toMatchObject({ id: file.id, path: '/one/a.bin', size: 5000 });
    const after = await etagOf(admin, '/one/a.bin');
    expect(after).toEqual({ status: 200, etag: before.etag, hash: sha(bytes) });
    expect((await trash(admin, { path: '/one' })).body.data.items).toEqual([]);
    // Restored once: a second restore finds no item.
    expect((await restore(admin, { id: item.id })).status).toBe(404);
    await fsckClean();
  });

  it("keeps an overwritten file's previous version, which restores to another path", async () => {
    await upload(admin, '/two/f.txt', 'version one');
    const v1 = await etagOf(admin, '/two/f.txt');
    await upload(admin, '/two/f.txt', 'version two');
    const v2 = await etagOf(admin, '/two/f.txt');
    const [item] = (await trash(admin, { path: '/two' })).body.data.items;
    expect(item).toMatchObject({ type: 'file', path: '/two/f.txt', size: 11, reason: 'replaced' });

    const taken = await restore(admin, { id: item.id });
    expect(taken.status).toBe(409);
    const elsewhere = await restore(admin, { id: item.id, to: '/two/old/f.txt' });
    expect(elsewhere.status).toBe(200);
    expect(await etagOf(admin, '/two/old/f.txt')).toEqual(v1);
    expect(await etagOf(admin, '/two/f.txt')).toEqual(v2);
    await fsckClean();
  });

  it('purges an item: its object is gone and fsck is clean', async () => {
    const file = await upload(admin, '/three/p.txt', 'purge me');
    await admin.request('DELETE', '/drive/files?path=/three/p.txt');
    const [item] = (await trash(admin, { path: '/three' })).body.data.items;
    expect((await storedState(host.dataDir)).objectKeys).toContain(keyOf(file.id));
    const purged = await json<{ data: unknown }>(admin.request('DELETE', `/drive/trash/${item.id}`));
    expect(purged.status).toBe(200);
    expect(purged.body.data).toEqual({ purged: true, id: item.id, files: 1, bytes: 8 });
    expect((await storedState(host.dataDir)).objectKeys).not.toContain(keyOf(file.id));
    expect((await trash(admin, { path: '/three' })).body.data.items).toEqual([]);
    expect((await json(admin.request('DELETE', `/drive/trash/${item.id}`))).status).toBe(404);
    await fsckClean();
  });

  it('lets each role do what the design gives it', async () => {
    const writer = new DriveClient(host.url, WRITER);
    const reader = new DriveClient(host.url, READER);
    const uploader = new DriveClient(host.url, UPLOADER);
    await upload(admin, '/mine/w.txt', 'mine');
    await upload(admin, '/theirs/t.txt', 'theirs');
    await admin.request('DELETE', '/drive/files?path=/mine/w.txt&path=/theirs/t.txt');
    const mine = (await trash(writer)).body.data.items;
    // A confined key sees only what was in its folder.
    expect(mine.map((item) => item.path)).toEqual(['/mine/w.txt']);
    const theirs = (await trash(admin, { path: '/theirs' })).body.data.items[0];
    expect((await restore(writer, { id: theirs.id })).status).toBe(404);
    expect((await json(writer.request('DELETE', `/drive/trash/${theirs.id}`))).status).toBe(404);
    // read-only lists, neither restores nor purges; upload-only sees none of it.
    expect((await trash(reader, { path: '/mine' })).status).toBe(200);
    expect((await restore(reader, { id: mine[0].id })).status).toBe(403);
    expect((await json(reader.request('DELETE', `/drive/trash/${mine[0].id}`))).status).toBe(403);
    expect((await trash(uploader)).status).toBe(403);
    expect((await restore(uploader, { id: mine[0].id })).status).toBe(403);
    expect((await json(writer.request('DELETE', '/drive/trash?path=/mine'))).status).toBe(403);
    // The writer purges in its folder; the admin empties a subtree.
    expect((await json(writer.request('DELETE', `/drive/trash/${mine[0].id}`))).status).toBe(200);
    const emptied = await json<{ data: { items: number } }>(admin.request('DELETE', '/drive/trash?path=/theirs'));
    expect(emptied.status).toBe(200);
    expect(emptied.body.data.items).toBe(1);
    expect((await trash(admin, { path: '/theirs' })).body.data.items).toEqual([]);
    await fsckClean();
  });

  it('moves a recursive delete into one folder item, which purges whole', async () => {
    for (let i = 0; i < 5; i++) await upload(admin, `/four/sub${i % 2}/f${i}.txt`, `file ${i}`);
    const res = await json<{ data: { files_deleted: number } }>(admin.deleteFolder({ path: '/four', recursive: 'true' }));
    expect(res.status).toBe(200);
    const [item] = (await trash(admin, { path: '/four' })).body.data.items;
    expect(item).toMatchObject({ type: 'folder', path: '/four', files: 5, size: 30, state: 'trashed' });
    // A file deleted with its folder is found by its own path too.
    expect((await trash(admin, { path: '/four/sub0' })).body.data.items.map((found) => found.id)).toEqual([item.id]);
    await fsckClean();
    expect((await json(admin.request('DELETE', `/drive/trash/${item.id}`))).status).toBe(200);
    await fsckClean();
  });
});

// docs/trash-design.md's test 2: a folder of 1,000 files deleted as a job and restored as a job comes back
// whole. No request budget (DRIVE_DELETE_BUDGET_MS=0): both answer 202 whatever the machine's speed.
describe('a folder deleted and restored as jobs', () => {
  let big: RunningHost;
  let client: DriveClient;
  beforeAll(async () => {
    big = await startHost({ DRIVE_API_KEYS: `big:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_TRASH_DAYS: '7', DRIVE_DELETE_BUDGET_MS: '0' });
    client = new DriveClient(big.url, ADMIN);
  });
  afterAll(() => stopHost(big));

  // 100 files here; 1,000 in the chaos tier (test/chaos/trash-restore.test.ts), a size test.
  it('comes back whole: the same paths, ids, sizes and ETags, the empty folder too; fsck clean', async () => {
    await deleteAndRestoreWhole(client, big.dataDir, '/hundred', 100);
  });

  it('leaves in the trash a file uploaded at one of its paths meanwhile, and restores the rest', async () => {
    await putFiles(client, Array.from({ length: 30 }, (_, i) => `/some/d${i % 3}/f${i}.txt`));
    const deleted = await json<{ data: { job: { url: string } } }>(client.deleteFolder({ path: '/some', recursive: 'true' }));
    await untilDone(deleted.body.data.job.url, client);
    const [item] = (await trash(client, { path: '/some' })).body.data.items;
    const taken = await upload(client, '/some/d1/f1.txt', 'uploaded since');
    const refused = await restore(client, { id: item.id });
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toBe('/some is taken; pass "overwrite": true to restore into the folder there');
    const res = await json<{ data: { job: RestoreJobJson } }>(
      client.request('POST', '/drive/trash/restore', { body: JSON.stringify({ id: item.id, overwrite: true }), headers: { 'Content-Type': 'application/json' } }),
    );
    expect(res.status).toBe(202);
    expect(await untilDone<RestoreJobJson>(res.body.data.job.url, client)).toMatchObject({ files_restored: 29 });
    expect(await textAtPath('/some/d1/f1.txt')).toBe('uploaded since');
    expect(taken.path).toBe('/some/d1/f1.txt');
    const [left] = (await trash(client, { path: '/some' })).body.data.items;
    expect(left).toMatchObject({ id: item.id, type: 'folder', files: 1, state: 'trashed' });
    expect((await runFsck(big.dataDir)).code).toBe(0);
  });

  async function textAtPath(path: string): Promise<string> {
    return (await client.download({ path })).text();
  }
});

describe('the trash turned off (DRIVE_TRASH_DAYS=0)', () => {
  let off: RunningHost;
  beforeAll(async () => {
    off = await startHost({ DRIVE_API_KEYS: `off:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_TRASH_DAYS: '0' });
  });
  afterAll(() => stopHost(off));

  it('deletes for good: the trash is empty, the bucket holds only the live files', async () => {
    const client = new DriveClient(off.url, ADMIN);
    const kept = await upload(client, '/z/kept.txt', 'kept');
    await upload(client, '/z/gone.txt', 'gone');
    await upload(client, '/z/over.txt', 'v1');
    const over = await upload(client, '/z/over.txt', 'v2');
    await upload(client, '/z/tree/t.txt', 'tree');
    await client.request('DELETE', '/drive/files?path=/z/gone.txt');
    await client.deleteFolder({ path: '/z/tree', recursive: 'true' });
    const page = await trash(client);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual({ items: [], next_cursor: null, usage: { items: 0, files: 0, bytes: 0 } });
    expect((await storedState(off.dataDir)).objectKeys.sort()).toEqual([keyOf(kept.id, 'off'), keyOf(over.id, 'off')].sort());
    expect((await runFsck(off.dataDir)).code).toBe(0);
  });
});

import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { FINAL_DELETES } from '../support/trash';

// DELETE /drive/files (an extension of the spec): files by path, their records and bytes, up to 1,000 a request.

const ADMIN = 'files-admin-29hVHaTbDrEgNFVFcigNCYZW';
const READER = 'files-reader-H2WYbhMyZ9SZaRESTDG4FsW';
const PUSHER = 'files-pusher-H2WYbhMyZ9SZaRESTDG4FsW';
const CONFINED = 'files-confined-HUjHPIBAxHnYhF53JE196';
const OTHER = 'files-other-29hVHaTbDrEgNFVFcigNCYZW';

let host: RunningHost;
let drive: DriveClient;

type Deleted = { data: { deleted: string[]; not_found: string[] } };

beforeAll(async () => {
  host = await startHost({
    ...FINAL_DELETES,
    DRIVE_API_KEYS: [`f:${ADMIN}:admin`, `f:${READER}:read-only`, `f:${PUSHER}:upload-only`, `f:${CONFINED}:read-write:/team`, `g:${OTHER}`].join(','),
    DRIVE_RATE_LIMITS: 'off',
  });
  drive = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

function deleteFiles(client: DriveClient, paths: string[]) {
  return json<Deleted & ErrorJson>(client.request('DELETE', `/drive/files?${paths.map((path) => `path=${encodeURIComponent(path)}`).join('&')}`));
}

function deleteFilesByBody(client: DriveClient, body: unknown) {
  return json<Deleted & ErrorJson>(client.request('DELETE', '/drive/files', { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
}

async function put(client: DriveClient, paths: string[]): Promise<void> {
  const res = await client.upload(
    paths.map((path) => ({ data: `bytes of ${path}`, filename: 'x' })),
    paths.map((path) => ({ path })),
  );
  expect(res.status).toBe(200);
}

/** The host's log line for the request `id` (written as the answer goes, so it may come just after it). */
async function requestLine(id: string): Promise<Record<string, unknown>> {
  for (;;) {
    const line = host.output().split('\n').find((text) => text.includes(`"request_id":"${id}"`) && text.includes('"message":"request"'));
    if (line) return JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function expectFsckClean(): Promise<void> {
  expect(await runFsck(host.dataDir)).toEqual({ code: 0, output: expect.stringContaining('clean') });
}

describe('DELETE /drive/files', () => {
  it('deletes each file, record and bytes, and says which paths held none', async () => {
    await put(drive, ['/d/a.txt', '/d/b.txt', '/d/keep.txt']);
    const before = (await storedState(host.dataDir)).objectKeys.length;

    const res = await deleteFiles(drive, ['/d/b.txt', '/d/missing.txt', '/d/a.txt', '/nowhere/x.txt']);
    expect(res).toEqual({ status: 200, body: { data: { deleted: ['/d/b.txt', '/d/a.txt'], not_found: ['/d/missing.txt', '/nowhere/x.txt'] } } });
    expect((await drive.download({ path: '/d/a.txt' })).status).toBe(404);
    expect(await (await drive.download({ path: '/d/keep.txt' })).text()).toBe('bytes of /d/keep.txt');
    expect((await storedState(host.dataDir)).objectKeys.length).toBe(before - 2);
    // The folder stays, as a file store's folders do when their files go.
    expect((await json<{ data: { files: { path: string }[] } }>(drive.list({ folder: '/d' }))).body.data.files.map((f) => f.path)).toEqual(['/d/keep.txt']);
    await expectFsckClean();
  });

  it('takes the paths in a JSON body too, and each path once', async () => {
    await put(drive, ['/body/1.txt', '/body/2.txt']);
    const res = await deleteFilesByBody(drive, { paths: ['/body/1.txt', '/body/2.txt', '/body/1.txt'] });
    expect(res).toEqual({ status: 200, body: { data: { deleted: ['/body/1.txt', '/body/2.txt'], not_found: [] } } });
    await expectFsckClean();
  });

  it('refuses a folder at any path with 409 and deletes nothing', async () => {
    await put(drive, ['/mixed/file.txt', '/mixed/sub/inner.txt']);
    const res = await deleteFiles(drive, ['/mixed/file.txt', '/mixed/sub']);
    expect({ status: res.status, code: res.body.error.code, message: res.body.error.message }).toEqual({ status: 409, code: 'conflict', message: expect.stringContaining('/mixed/sub is a folder') });
    expect((await drive.download({ path: '/mixed/file.txt' })).status).toBe(200);
    expect((await drive.download({ path: '/mixed/sub/inner.txt' })).status).toBe(200);
  });

  it.each([
    ['no path', '/drive/files', undefined, 422, 'path is required'],
    ['the root', '/drive/files?path=/', undefined, 422, 'not the root'],
    ['an invalid path', '/drive/files?path=/a/../b', undefined, 422, 'path[0]'],
    ['a relative path', '/drive/files?path=a.txt', undefined, 422, 'path[0]'],
    ['both forms', '/drive/files?path=/a', { paths: ['/b'] }, 400, 'not both'],
    ['paths that are not an array', '/drive/files', { paths: '/a' }, 400, 'paths must be an array'],
    ['a path that is not a string', '/drive/files', { paths: ['/a', 7] }, 400, 'paths[1] must be a string'],
    ['an unknown field', '/drive/files', { paths: ['/a'], recursive: true }, 400, 'unknown field recursive'],
    ['1,001 paths', '/drive/files', { paths: Array.from({ length: 1001 }, (_, i) => `/many/${i}`) }, 422, 'at most 1000 paths'],
  ])('refuses %s, naming what is wrong', async (_, route, body, status, message) => {
    const res = await json<ErrorJson>(drive.request('DELETE', route, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
    expect({ status: res.status, message: res.body.error.message }).toEqual({ status, message: expect.stringContaining(message) });
  });

  it('refuses paths that lie in more than 1,000 folders (each is read), with 422 naming the count', async () => {
    const paths = Array.from({ length: 600 }, (_, i) => `/wide/${i}/deeper/f.txt`);
    const res = await deleteFilesByBody(drive, { paths });
    expect({ status: res.status, message: res.body.error.message }).toEqual({ status: 422, message: expect.stringContaining('1201 folders') });
  });

  it('takes 1,000 paths in one request, in a bounded number of writes', async () => {
    const paths = Array.from({ length: 1000 }, (_, i) => `/thousand/${i}.txt`);
    for (let i = 0; i < paths.length; i += 250) await put(drive, paths.slice(i, i + 250));
    const answer = await drive.request('DELETE', '/drive/files', { body: JSON.stringify({ paths }), headers: { 'Content-Type': 'application/json' } });
    const res = await json<Deleted>(answer);
    expect({ status: res.status, deleted: res.body.data.deleted.length, notFound: res.body.data.not_found }).toEqual({ status: 200, deleted: 1000, notFound: [] });
    // The request's work is counted, not timed: 11 reads (100 keys each), 40 transactions (25 files each), 2
    // writes closing the journal's entries and the key's lookup; not a transaction per file, 1,000 of which
    // took 29 s on a busy host, one at a time behind the emulator's lock.
    const line = await requestLine(answer.headers.get('x-request-id')!);
    expect(line.aws_calls).toEqual({ dynamodb: expect.any(Number), s3: 1 });
    expect((line.aws_calls as { dynamodb: number }).dynamodb).toBeLessThanOrEqual(60);
    await expectFsckClean();
  });
});

describe('DELETE /drive/files and keys', () => {
  it('is refused to read-only and upload-only keys (403), and deletes nothing', async () => {
    await put(drive, ['/roles/x.txt']);
    for (const secret of [READER, PUSHER]) {
      const res = await deleteFiles(new DriveClient(host.url, secret), ['/roles/x.txt']);
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 403, code: 'forbidden' });
    }
    expect((await drive.download({ path: '/roles/x.txt' })).status).toBe(200);
  });

  it('confines a key to its folder: a path outside it is 403 and nothing of the request is deleted', async () => {
    await put(drive, ['/team/t.txt', '/private/p.txt']);
    const confined = new DriveClient(host.url, CONFINED);
    const outside = await deleteFiles(confined, ['/team/t.txt', '/private/p.txt']);
    expect({ status: outside.status, message: outside.body.error.message }).toEqual({ status: 403, message: expect.stringContaining('path[1] /private/p.txt is outside /team') });
    expect((await drive.download({ path: '/team/t.txt' })).status).toBe(200);
    expect(await deleteFiles(confined, ['/team/t.txt'])).toEqual({ status: 200, body: { data: { deleted: ['/team/t.txt'], not_found: [] } } });
    // A folder inside its own folder is named to it, as to any key.
    await put(drive, ['/team/sub/inner.txt']);
    const folder = await deleteFiles(confined, ['/team/sub']);
    expect({ status: folder.status, message: folder.body.error.message }).toEqual({ status: 409, message: expect.stringContaining('/team/sub is a folder') });
  });

  it("never reaches another drive's files: they are not found, and stay", async () => {
    await put(drive, ['/shared-name.txt']);
    expect(await deleteFiles(new DriveClient(host.url, OTHER), ['/shared-name.txt'])).toEqual({ status: 200, body: { data: { deleted: [], not_found: ['/shared-name.txt'] } } });
    expect((await drive.download({ path: '/shared-name.txt' })).status).toBe(200);
  });

  it('needs a key', async () => {
    expect((await deleteFiles(new DriveClient(host.url, 'not-a-key'), ['/x'])).status).toBe(401);
  });
});

describe('DELETE /drive/files racing uploads', () => {
  it('deletes racing replacing uploads of the same paths leave every path whole or gone, and nothing orphaned', async () => {
    const paths = Array.from({ length: 20 }, (_, i) => `/race/${i}.txt`);
    for (let round = 0; round < 5; round++) {
      await put(drive, paths);
      const [deleted] = await Promise.all([
        deleteFiles(drive, paths),
        put(drive, paths.slice(0, 10)),
        put(drive, paths.slice(10)),
      ]);
      expect(deleted.status).toBe(200);
      // Whatever stands at a path downloads whole.
      for (const path of paths) {
        const res = await drive.download({ path });
        expect([200, 404]).toContain(res.status);
        if (res.status === 200) expect(await res.text()).toBe(`bytes of ${path}`);
        else await res.arrayBuffer();
      }
    }
    // Once, after the last round (fsck is a process): an object a round orphaned stays orphaned.
    await expectFsckClean();
  });
});

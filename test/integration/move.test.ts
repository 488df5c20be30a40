import { DriveClient, type ErrorJson, type FileEntryJson, type FolderEntryJson, type ListingJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { FINAL_DELETES } from '../support/trash';
import { expectFsckClean, putFiles, textAt, treeOf, untilDone } from '../support/seeding';

// POST /drive/move (an extension of the spec): a file in one transaction, keeping its id and bytes; a folder
// file by file, a job past the request's budget. fsck is clean after each.

const ADMIN = 'move-admin-f6UrpcrOhwuH2C8YgGgAiPrZeO';
const READER = 'move-reader-CPmWEFPSAyKFHbhBD0xtiQ3p6';
const PUSHER = 'move-pusher-CPmWEFPSAyKFHbhBD0xtiQ3p6';
const CONFINED = 'move-confined-H2WYbhMyZ9SZaRESTDG4FsW';
const OTHER = 'move-other-f6UrpcrOhwuH2C8YgGgAiPrZeO';

const KEYS = [`m:${ADMIN}:admin`, `m:${READER}:read-only`, `m:${PUSHER}:upload-only`, `m:${CONFINED}:read-write:/team`, `n:${OTHER}`].join(',');

interface MoveJob {
  id: string;
  type: string;
  status: 'running' | 'done';
  path: string;
  to: string;
  files_moved: number;
  url: string;
  result: FolderEntryJson | null;
}

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: KEYS, DRIVE_RATE_LIMITS: 'off', ...FINAL_DELETES });
  drive = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

function move(client: DriveClient, body: unknown) {
  return json<{ data: FileEntryJson & FolderEntryJson & { job: MoveJob } } & ErrorJson>(
    client.request('POST', '/drive/move', { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  );
}

describe('POST /drive/move: a file', () => {
  it('moves the file, id and bytes kept, making the folders above its new path', async () => {
    await putFiles(drive, ['/mv/a.txt']);
    const before = await storedState(host.dataDir);
    const listed = await json<{ data: ListingJson }>(drive.list({ folder: '/mv' }));
    const id = listed.body.data.files[0].id;

    const res = await move(drive, { from: '/mv/a.txt', to: '/archive/2026/b.txt' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id, name: 'b.txt', path: '/archive/2026/b.txt', size: 18, created_at: expect.any(String) });
    expect(await textAt(drive, '/archive/2026/b.txt')).toBe('bytes of /mv/a.txt');
    expect(await textAt(drive, '/mv/a.txt')).toBe(404);
    // Not a byte copied: the same objects as before the move.
    expect((await storedState(host.dataDir)).objectKeys.sort()).toEqual(before.objectKeys.sort());
    await expectFsckClean(host.dataDir);
  });

  it('renames in place, and a move onto itself is the file as it is', async () => {
    await putFiles(drive, ['/ren/old name.txt']);
    expect((await move(drive, { from: '/ren/old name.txt', to: '/ren/new name.txt' })).body.data.path).toBe('/ren/new name.txt');
    expect(await treeOf(drive, '/ren')).toEqual(['/ren/new name.txt']);
    expect((await move(drive, { from: '/ren/new name.txt', to: '/ren/new name.txt' })).body.data.path).toBe('/ren/new name.txt');
  });

  it('refuses a taken destination with 409, and replaces a file with overwrite (its bytes deleted)', async () => {
    await putFiles(drive, ['/ow/a.txt', '/ow/b.txt']);
    const taken = await move(drive, { from: '/ow/a.txt', to: '/ow/b.txt' });
    expect(taken).toMatchObject({ status: 409, body: { error: { code: 'conflict', message: expect.stringContaining('"overwrite": true') } } });
    const objects = (await storedState(host.dataDir)).objectKeys.length;

    const replaced = await move(drive, { from: '/ow/a.txt', to: '/ow/b.txt', overwrite: true });
    expect(replaced.status).toBe(200);
    expect(await textAt(drive, '/ow/b.txt')).toBe('bytes of /ow/a.txt');
    expect(await treeOf(drive, '/ow')).toEqual(['/ow/b.txt']);
    expect((await storedState(host.dataDir)).objectKeys.length).toBe(objects - 1);
    await expectFsckClean(host.dataDir);
  });

  it('answers every error row with its status, moving nothing', async () => {
    await putFiles(drive, ['/err/f.txt', '/err/sub/g.txt']);
    const cases: [unknown, number, string, string][] = [
      [{ from: '/err/missing.txt', to: '/err/x.txt' }, 404, 'not_found', '/err/missing.txt'],
      [{ from: '/err/f.txt', to: '/err/sub', overwrite: true }, 409, 'conflict', 'is a folder'],
      [{ from: '/err/sub/g.txt', to: '/err/f.txt/g.txt' }, 409, 'conflict', '/err/f.txt is a file'],
      [{ from: '/err/sub', to: '/err/sub/deeper' }, 422, 'validation_error', 'into itself'],
      [{ from: '/', to: '/x' }, 422, 'validation_error', 'root'],
      [{ from: '/err/f.txt', to: '/' }, 422, 'validation_error', 'root'],
      [{ from: '/err/sub', to: '/err/f.txt' }, 409, 'conflict', 'taken'],
      ['not json', 400, 'bad_request', 'JSON'],
      [{ from: '/err/f.txt' }, 400, 'bad_request', 'to is required'],
      [{ from: 7, to: '/x' }, 400, 'bad_request', 'from must be a string'],
      [{ from: '/err/f.txt', to: '/err/y.txt', overwrite: 'yes' }, 400, 'bad_request', 'overwrite'],
      [{ from: '/err/f.txt', to: '/err/y.txt', also: 1 }, 400, 'bad_request', 'unknown field'],
      ['{"__proto__": {"from": "/err/f.txt"}, "to": "/err/y.txt"}', 400, 'bad_request', '__proto__'],
      [{ from: 'err/f.txt', to: '/err/y.txt' }, 422, 'validation_error', 'from'],
    ];
    for (const [body, status, code, words] of cases) {
      const res = await move(drive, body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status, code });
      expect(res.body.error.message).toContain(words);
    }
    expect(await treeOf(drive, '/err')).toEqual(['/err/f.txt', '/err/sub/', '/err/sub/g.txt']);
    await expectFsckClean(host.dataDir);
  });

  it('takes keys that may write, within their folder, and never another drive\'s files', async () => {
    await putFiles(drive, ['/team/t.txt', '/private/p.txt']);
    expect((await move(new DriveClient(host.url, READER), { from: '/team/t.txt', to: '/team/u.txt' })).status).toBe(403);
    expect((await move(new DriveClient(host.url, PUSHER), { from: '/team/t.txt', to: '/team/u.txt' })).status).toBe(403);
    const confined = new DriveClient(host.url, CONFINED);
    expect((await move(confined, { from: '/private/p.txt', to: '/team/p.txt' })).status).toBe(403);
    expect((await move(confined, { from: '/team/t.txt', to: '/private/t.txt' })).status).toBe(403);
    expect((await move(confined, { from: '/team/t.txt', to: '/team/sub/t.txt' })).status).toBe(200);
    // Another drive's key finds nothing at the path, and moves nothing.
    expect((await move(new DriveClient(host.url, OTHER), { from: '/private/p.txt', to: '/stolen.txt' })).status).toBe(404);
    expect(await textAt(drive, '/private/p.txt')).toBe('bytes of /private/p.txt');
  });
});

describe('POST /drive/move: a folder', () => {
  it('moves the folder with everything in it, ids kept, and answers its Folder entry', async () => {
    await putFiles(drive, ['/proj/a.txt', '/proj/src/b.txt', '/proj/src/deep/c.txt']);
    await drive.createFolder({ path: '/proj/empty' });
    const ids = new Map((await json<{ data: ListingJson }>(drive.list({ folder: '/proj', recursive: 'true' }))).body.data.folders.map((f) => [f.path.replace('/proj', '/done/proj'), f.id]));

    const res = await move(drive, { from: '/proj', to: '/done/proj' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: expect.any(String), name: 'proj', path: '/done/proj' });
    expect(await treeOf(drive, '/done/proj')).toEqual(['/done/proj/a.txt', '/done/proj/empty/', '/done/proj/src/', '/done/proj/src/b.txt', '/done/proj/src/deep/', '/done/proj/src/deep/c.txt']);
    expect(await treeOf(drive, '/proj')).toBe(404);
    expect(await textAt(drive, '/done/proj/src/deep/c.txt')).toBe('bytes of /proj/src/deep/c.txt');
    const moved = (await json<{ data: ListingJson }>(drive.list({ folder: '/done/proj', recursive: 'true' }))).body.data.folders;
    for (const folder of moved) expect({ path: folder.path, id: folder.id }).toEqual({ path: folder.path, id: ids.get(folder.path) });
    await expectFsckClean(host.dataDir);
  });
});

describe('a folder move past the request budget', () => {
  // One host for both tests. DRIVE_JOB_STEP_MS=0 makes each step move or remove one thing (a page of files,
  // or a folder) and send the job on, so the job crosses a step per folder whatever the machine's speed; 48
  // files in 12 folders cross as many steps as 240 did. A host killed mid-move is in
  // test/chaos/move-copy-crash.test.ts.
  const env = { ...FINAL_DELETES, DRIVE_API_KEYS: KEYS, DRIVE_RATE_LIMITS: 'off', DRIVE_MOVE_BUDGET_MS: '0', DRIVE_DELETE_BUDGET_MS: '0', DRIVE_JOB_STEP_MS: '0' };
  const paths = Array.from({ length: 48 }, (_, i) => `/big/d${i % 4}/e${i % 3}/f${i}.txt`);
  let jobs: RunningHost;

  beforeAll(async () => {
    jobs = await startHost(env);
  });

  afterAll(() => stopHost(jobs));

  it('answers 202 with a job that the worker finishes, over several steps', async () => {
    const client = new DriveClient(jobs.url, ADMIN);
    await putFiles(client, paths);
    const res = await move(client, { from: '/big', to: '/moved/big' });
    expect(res.status).toBe(202);
    expect(res.body.data.job).toMatchObject({ type: 'move-folder', status: 'running', path: '/big', to: '/moved/big' });
    const done = await untilDone<MoveJob>(res.body.data.job.url, client);
    expect(done).toMatchObject({ status: 'done', files_moved: 48, result: { name: 'big', path: '/moved/big' } });
    // A step for each of the 12 folders that hold files at least, each sent on by the last through the queue.
    const steps = jobs.output().split('\n').filter((line) => line.includes('advanced a job') && line.includes(done.id));
    expect(steps.length).toBeGreaterThanOrEqual(12);
    const moved = await treeOf(client, '/moved/big');
    expect((moved as string[]).filter((path) => !path.endsWith('/'))).toEqual(paths.map((path) => `/moved${path}`).sort());
    expect(await treeOf(client, '/big')).toBe(404);
    await expectFsckClean(jobs.dataDir);
  });

  it('advances with every step, however short its budget: a move and then a delete of a nested tree finish with steps of 0 ms', async () => {
    // A step walks from the top again; one that stopped before it moved or removed anything left the next
    // step where it started, and a job whose steps never got past re-entering its folders never ended.
    const client = new DriveClient(jobs.url, ADMIN);
    const nested = ['/n/a/b/c/one.txt', '/n/a/b/c/two.txt', '/n/a/b/three.txt', '/n/a/four.txt', '/n/x/y/five.txt'];
    await putFiles(client, nested);
    const moving = await move(client, { from: '/n', to: '/m/n' });
    expect(moving.status).toBe(202);
    expect(await untilDone<MoveJob>(moving.body.data.job.url, client)).toMatchObject({ status: 'done', files_moved: nested.length, result: { path: '/m/n' } });
    expect(((await treeOf(client, '/m/n')) as string[]).filter((path) => !path.endsWith('/'))).toEqual(nested.map((path) => `/m${path}`).sort());
    const deleted = await json<{ data: { job: MoveJob } }>(client.deleteFolder({ path: '/m', recursive: 'true' }));
    expect(deleted.status).toBe(202);
    expect(await untilDone<MoveJob>(deleted.body.data.job.url, client)).toMatchObject({ status: 'done', result: { deleted: true, path: '/m', files_deleted: nested.length } });
    expect(await treeOf(client, '/m')).toBe(404);
    await expectFsckClean(jobs.dataDir);
  });
});

describe('moves racing uploads and deletes on the same paths', () => {
  // fsck (a process) once, after the last round: each round has its own folder, and an orphan stays one.
  it('leaves each file whole at one path, and fsck clean, after six rounds', async () => {
    for (let round = 0; round < 6; round++) {
      const dir = `/race${round}`;
      await putFiles(drive, [`${dir}/a.txt`, `${dir}/sub/b.txt`]);
      const results = await Promise.all([
        move(drive, { from: `${dir}/a.txt`, to: `${dir}/moved/a.txt` }),
        drive.upload([{ data: 'new a', filename: 'a.txt' }], [{ folder: dir }]).then((r) => ({ status: r.status })),
        json(drive.request('DELETE', `/drive/files?path=${encodeURIComponent(`${dir}/a.txt`)}`)),
        move(drive, { from: `${dir}/a.txt`, to: `${dir}/other.txt`, overwrite: true }),
        move(drive, { from: `${dir}/sub`, to: `${dir}/sub2` }),
        drive.upload([{ data: 'new b', filename: 'c.txt' }], [{ folder: `${dir}/sub` }]).then((r) => ({ status: r.status })),
        json(drive.request('DELETE', `/drive/folders?path=${encodeURIComponent(`${dir}/sub`)}&recursive=true`)),
      ]);
      for (const result of results) expect([200, 202, 404, 409]).toContain(result.status);
      // Whatever won, every file listed downloads whole.
      const listed = await treeOf(drive, dir);
      for (const path of (listed as string[]).filter((p) => !p.endsWith('/'))) expect(await textAt(drive, path)).toMatch(/^(bytes of .*|new a|new b)$/);
    }
    await expectFsckClean(host.dataDir);
  });
});

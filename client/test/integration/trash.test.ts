import { type RunningHost, startHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import type { TrashItem } from '../../src/types';
import { driveEnv, runCli } from '../support/cli-process';

// The trash (issue 28) through the library and `drive trash`. DRIVE_DELETE_BUDGET_MS=0 makes every recursive
// delete, and every folder restore, a job, which the client follows to its end.

const KEY = 'client-trash-key-Vd8kQm2TzL5pWx3N';

let host: RunningHost;
let env: Record<string, string>;
let drive: Drive;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `default:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_TRASH_DAYS: '7', DRIVE_DELETE_BUDGET_MS: '0', DRIVE_JOB_STEP_MS: '0' });
  env = driveEnv(host.url, KEY);
  drive = new Drive({ baseUrl: host.url, apiKey: KEY });
});

afterAll(() => stopHost(host));

/** The bytes of the file at `path`. */
async function textAt(path: string): Promise<string> {
  return new Response((await drive.download(path)).body).text();
}

/** The one trash item taken from `path` or below it. */
async function onlyItem(path: string): Promise<TrashItem> {
  const page = await drive.listTrash(path);
  expect(page.items).toHaveLength(1);
  return page.items[0];
}

describe('Methods: listTrash, restore, purge, purgePath', () => {
  it('restores a deleted file with its id, bytes and ETag', async () => {
    // Prepare
    const stored = await drive.upload({ path: '/lib/a.txt', data: 'alpha bytes' });
    const before = await drive.stat('/lib/a.txt');
    await drive.deleteFiles(['/lib/a.txt']);
    const item = await onlyItem('/lib');

    // Act
    const restored = await drive.restore(item.id);

    // Assess
    expect(item).toMatchObject({ type: 'file', path: '/lib/a.txt', size: 11, etag: before.etag, reason: 'deleted', state: 'trashed' });
    expect(restored).toMatchObject({ id: stored.id, path: '/lib/a.txt', size: 11 });
    expect(await textAt('/lib/a.txt')).toBe('alpha bytes');
    expect((await drive.stat('/lib/a.txt')).etag).toBe(before.etag);
    expect((await drive.listTrash('/lib')).items).toEqual([]);
  });

  it('pages the trash with a cursor, and purges an item and a folder’s trash for good', async () => {
    await drive.uploadMany(['/pg/1.txt', '/pg/2.txt', '/pg/3.txt'].map((path) => ({ path, data: path })));
    await drive.deleteFiles(['/pg/1.txt', '/pg/2.txt', '/pg/3.txt']);

    const pages = [];
    for await (const page of drive.trashPages('/pg', { limit: 2 })) pages.push(page);
    const purged = await drive.purge(pages[0].items[0].id);
    const emptied = await drive.purgePath('/pg');

    expect(pages.map((page) => page.items.length)).toEqual([2, 1]);
    expect(pages[0].usage).toEqual({ items: 3, files: 3, bytes: 27 });
    expect(new Set(pages.flatMap((page) => page.items.map((item) => item.path)))).toEqual(new Set(['/pg/1.txt', '/pg/2.txt', '/pg/3.txt']));
    expect(purged).toEqual({ purged: true, id: pages[0].items[0].id, files: 1, bytes: 9 });
    expect(emptied).toEqual({ purged: true, path: '/pg', items: 2, files: 2, bytes: 18 });
    expect((await drive.listTrash('/pg')).items).toEqual([]);
    await expect(drive.restore(purged.id)).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe('drive trash against the local host', () => {
  it('lists a deleted folder, and restores it whole as a job, showing its progress', async () => {
    // Prepare
    const files = Array.from({ length: 6 }, (_, i) => ({ path: `/cli/d${i % 2}/f${i}.txt`, data: `file ${i}` }));
    await drive.uploadMany(files);
    await drive.deleteFolder('/cli', { recursive: true });

    // Act
    const listed = await runCli(['trash', 'ls', '/cli', '--json'], env);
    const text = await runCli(['trash', 'ls', '/cli'], env);
    const item = listed.json<{ items: TrashItem[] }>().items[0];
    const restored = await runCli(['trash', 'restore', item.id], env);

    // Assess
    expect(listed.code).toBe(0);
    expect(listed.json()).toEqual({ items: [expect.objectContaining({ type: 'folder', path: '/cli', files: 6, size: 36, reason: 'deleted' })], usage: { items: 1, files: 6, bytes: 36 } });
    expect(text.code).toBe(0);
    expect(String(text.stdout)).toMatch(new RegExp(`^${item.id}  folder\\(6\\) +36 B  \\S+  \\S+  /cli/\\n1 item\\(s\\), 6 file\\(s\\), 36 B in the trash below /cli\\n$`));
    expect({ code: restored.code, out: String(restored.stdout) }).toEqual({ code: 0, out: `restored ${item.id} -> /cli/\n` });
    expect(restored.stderr).toMatch(/^\/cli is being restored \(job [0-9a-f-]+\): \d+ file\(s\) so far\n/);
    const listing = await drive.list('/cli', { recursive: true });
    expect(listing.files.map((file) => file.path).sort()).toEqual(files.map((file) => file.path).sort());
    expect(await textAt('/cli/d1/f5.txt')).toBe('file 5');
    expect((await drive.listTrash('/cli')).items).toEqual([]);
  });

  it('refuses a taken destination with exit 1 and the API’s 409, restores over it with -f, and to another path with --to', async () => {
    // Prepare: the old version of a file replaced is in the trash.
    await drive.upload({ path: '/cf/f.txt', data: 'old' });
    await drive.upload({ path: '/cf/f.txt', data: 'newer' });
    const old = await onlyItem('/cf');

    // Act
    const refused = await runCli(['trash', 'restore', old.id], env);
    const forced = await runCli(['trash', 'restore', '-f', old.id], env);
    const newer = await onlyItem('/cf');
    const elsewhere = await runCli(['trash', 'restore', newer.id, '--to', '/cf/newer.txt', '--json'], env);

    // Assess
    expect(old).toMatchObject({ type: 'file', path: '/cf/f.txt', size: 3, reason: 'replaced' });
    expect({ code: refused.code, out: String(refused.stdout), err: refused.stderr }).toEqual({ code: 1, out: '', err: 'drive trash: /cf/f.txt is taken; pass -f to replace the file there (conflict, 409)\n' });
    expect({ code: forced.code, out: String(forced.stdout) }).toEqual({ code: 0, out: `restored ${old.id} -> /cf/f.txt\n` });
    expect(await textAt('/cf/f.txt')).toBe('old');
    // What -f replaced went to the trash in turn, and restores elsewhere.
    expect(newer).toMatchObject({ path: '/cf/f.txt', size: 5, reason: 'replaced' });
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.json()).toMatchObject({ path: '/cf/newer.txt', size: 5 });
    expect(await textAt('/cf/newer.txt')).toBe('newer');
  });

  it('purges an item, and a folder’s trash with --path', async () => {
    await drive.uploadMany([{ path: '/pr/a.txt', data: 'aa' }, { path: '/pr/sub/b.txt', data: 'bbb' }, { path: '/pr/sub/c.txt', data: 'cccc' }]);
    await drive.deleteFiles(['/pr/a.txt']);
    await drive.deleteFolder('/pr/sub', { recursive: true });
    const a = (await drive.listTrash('/pr')).items.find((item) => item.path === '/pr/a.txt')!;

    const one = await runCli(['trash', 'purge', a.id], env);
    const rest = await runCli(['trash', 'purge', '--path', '/pr', '--json'], env);

    expect({ code: one.code, out: String(one.stdout) }).toEqual({ code: 0, out: `purged ${a.id} (1 file(s), 2 B)\n` });
    expect(rest.code).toBe(0);
    expect(rest.json()).toEqual({ purged: true, path: '/pr', items: 1, files: 2, bytes: 7 });
    expect((await drive.listTrash('/pr')).items).toEqual([]);
  });

  it('follows an emptying that goes on as a job to its end, its progress on stderr', async () => {
    // Prepare: no request budget, so the emptying of a trash that is not empty is a job.
    await drive.uploadMany([{ path: '/pj/a.txt', data: 'aa' }, { path: '/pj/b.txt', data: 'bbb' }]);
    await drive.deleteFiles(['/pj/a.txt', '/pj/b.txt']);

    // Act
    const emptied = await runCli(['trash', 'purge', '--path', '/pj'], env);

    // Assess
    expect({ code: emptied.code, out: String(emptied.stdout) }).toEqual({ code: 0, out: 'purged 2 item(s) taken from /pj (2 file(s), 5 B)\n' });
    expect(emptied.stderr).toMatch(/^the trash below \/pj is being emptied \(job [0-9a-f-]+\): \d+ file\(s\) so far\n/);
    expect((await drive.listTrash('/pj')).items).toEqual([]);
  });
});

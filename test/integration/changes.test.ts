import { Drive } from '../../client/src/drive';
import { DriveClient, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { type ChangeJson, followFeed, latestCursor } from '../support/change-feed';
import { putFiles, seedFolders, untilDone } from '../support/seeding';

// The change feed (issue 27) on the local host: the embedded DynamoDB's stream tap feeds the sequencer, and
// GET /drive/changes reads its log. Waits are for changes, bounded by a count of requests, never by the clock.

const ADMIN = 'changes-admin-x8GkP2vQ9mWz4LtR7nYb3cJd';
const TEAM = 'changes-team-Qm4Wz8Lt2RvP7nYb9cJdx3Gk';
const UPLOADER = 'changes-upload-Lt2Rv7nYbP9cJdx3GkQm4Wz8';

const env = {
  DRIVE_API_KEYS: [`feed:${ADMIN}:admin`, `feed:${TEAM}:read-only:/team`, `feed:${UPLOADER}:upload-only`].join(','),
  DRIVE_RATE_LIMITS: 'off',
  DRIVE_DELETE_BUDGET_MS: '0',
  DRIVE_MOVE_BUDGET_MS: '0',
  DRIVE_COPY_BUDGET_MS: '0',
};


let host: RunningHost;
let admin: DriveClient;

beforeAll(async () => {
  host = await startHost(env);
  admin = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

const latest = latestCursor;

/** Every file and folder below `folder` (and it), as `file <path>` and `folder <path>`, sorted. */
async function tree(folder: string): Promise<string[]> {
  const res = await json<{ data: { files: { path: string }[]; folders: { path: string }[] } }>(admin.list({ folder, recursive: 'true' }));
  expect(res.status).toBe(200);
  return [`folder ${folder}`, ...res.body.data.files.map((file) => `file ${file.path}`), ...res.body.data.folders.map((entry) => `folder ${entry.path}`)].sort();
}

/** `state` with the changes applied as a follower would: a file's folders made as it arrives (mkdir -p). */
function apply(state: string[], changes: ChangeJson[]): string[] {
  const held = new Set(state);
  const mkdirs = (path: string) => {
    for (let at = path.lastIndexOf('/'); at > 0; at = path.lastIndexOf('/', at - 1)) held.add(`folder ${path.slice(0, at)}`);
  };
  for (const change of changes) {
    const kind = change.type.startsWith('file.') ? 'file' : 'folder';
    if (change.from !== undefined) held.delete(`${kind} ${change.from}`);
    if (change.type.endsWith('.deleted')) held.delete(`${kind} ${change.path}`);
    else {
      mkdirs(change.path);
      held.add(`${kind} ${change.path}`);
    }
  }
  return [...held].sort();
}

/** Follows the feed from `cursor` until `want` changes came, then checks nothing more waits. */
function follow(client: DriveClient, cursor: string, want: number, options: { requests?: number; limit?: number } = {}): Promise<{ changes: ChangeJson[]; cursor: string }> {
  return followFeed(client, cursor, (changes) => changes.length >= want, options);
}

describe('GET /drive/changes', () => {
  it('gives 8 concurrent writers\' uploads, moves and deletes each once, in per-path order', async () => {
    const cursor = await latest(admin);
    const folders = ['/w/a', '/w/b', '/w/c'];
    for (const folder of folders) expect((await admin.createFolder({ path: folder })).status).toBe(200);
    const paths = folders.flatMap((folder) => Array.from({ length: 8 }, (_, i) => `${folder}/f${i}.txt`));
    type Done = { key: string; paths: string[]; start: number; end: number };
    const done: Done[] = [];
    let clock = 0;
    const writer = async (w: number) => {
      let seed = w * 7919 + 1;
      const pick = <T>(values: readonly T[]) => values[(seed = (seed * 48271) % 2147483647) % values.length];
      for (let i = 0; i < 30; i++) {
        const what = pick(['upload', 'upload', 'move', 'delete']);
        const path = pick(paths);
        const start = ++clock;
        if (what === 'upload') {
          const res = await json<{ data: { id: string }[] }>(admin.upload([{ data: `${w}-${i}`, filename: 'x' }], [{ path }]));
          if (res.status === 200) done.push({ key: `write ${path} ${res.body.data[0].id}`, paths: [path], start, end: ++clock });
        } else if (what === 'move') {
          const to = pick(paths);
          const res = await json<{ data: { id: string } }>(admin.request('POST', '/drive/move', { body: JSON.stringify({ from: path, to, overwrite: true }), headers: { 'Content-Type': 'application/json' } }));
          if (res.status === 200 && to !== path) done.push({ key: `file.moved ${path}>${to} ${res.body.data.id}`, paths: [path, to], start, end: ++clock });
        } else {
          const res = await json<{ data: { deleted: string[] } }>(admin.request('DELETE', `/drive/files?${new URLSearchParams({ path })}`));
          if (res.status === 200 && res.body.data.deleted.length === 1) done.push({ key: `file.deleted ${path}`, paths: [path], start, end: ++clock });
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));

    const { changes } = await follow(admin, cursor, 4 + done.length);
    const keyOf = (change: ChangeJson) =>
      change.type === 'file.created' || change.type === 'file.replaced'
        ? `write ${change.path} ${change.file!.id}`
        : change.type === 'file.moved'
          ? `file.moved ${change.from}>${change.path} ${change.file!.id}`
          : `${change.type} ${change.path}`;
    const got = changes.map(keyOf);
    expect(got.filter((key) => key.startsWith('folder.')).sort()).toEqual(['folder.created /w', ...folders.map((folder) => `folder.created ${folder}`)].sort());
    const files = got.filter((key) => !key.startsWith('folder.'));
    expect([...files].sort()).toEqual(done.map((op) => op.key).sort());
    expect(new Set(changes.map((change) => change.id)).size).toBe(changes.length);
    // Per path: an operation that answered before another began comes first in the feed.
    const used = new Set<number>();
    const placeOf = (op: Done) => {
      const index = got.findIndex((key, i) => key === op.key && !used.has(i));
      used.add(index);
      return index;
    };
    const placed = [...done].sort((a, b) => a.end - b.end).map((op) => ({ ...op, place: placeOf(op) }));
    for (const a of placed) for (const b of placed) if (a.end < b.start && a.paths.some((path) => b.paths.includes(path))) expect([a.key, a.place < b.place]).toEqual([a.key, true]);
  });

  it('gives a folder move and a folder copy, as jobs, a change a file and folder: applied, they make the tree', async () => {
    // Taken first: a cursor taken after writes may come before some of them (the sequencer runs a moment behind).
    const cursor = await latest(admin, '/m');
    await seedFolders(admin, '/m/src', 12, 2);
    const transfer = async (kind: 'move' | 'copy', from: string, to: string) => {
      const res = await json<{ data: { job: { url: string } } }>(admin.request('POST', `/drive/${kind}`, { body: JSON.stringify({ from, to }), headers: { 'Content-Type': 'application/json' } }));
      expect(res.status).toBe(202);
      await untilDone(res.body.data.job.url, admin);
    };
    await transfer('move', '/m/src', '/m/dst');
    await transfer('copy', '/m/dst', '/m/cp');
    // Seeded: 10 folders (/m, /m/src, d0 and d1, three e's in each) and 12 files; then the 12 files and 9 folders
    // below /m moved, then copied.
    const { changes } = await follow(admin, cursor, 22 + 21 + 21);
    expect(changes.filter((change) => change.type === 'file.moved')).toHaveLength(12);
    expect(changes.filter((change) => change.type === 'folder.moved')).toHaveLength(9);
    expect(changes.filter((change) => change.type === 'file.created')).toHaveLength(12 + 12);
    expect(changes.filter((change) => change.type === 'folder.created')).toHaveLength(10 + 9);
    expect(changes.filter((change) => change.type === 'folder.moved').at(-1)).toMatchObject({ from: '/m/src', path: '/m/dst' });
    expect(apply([], changes)).toEqual(await tree('/m'));
  });

  it('gives a recursive delete of 150 files as a job 151 changes, the folder last, over pages of 100', async () => {
    // 150 files take the same paths as 1,000 would: the walk reads a folder 1,000 children a page, so either is
    // one page; the feed's paging is crossed by following it 100 changes a page (302 changes, four pages).
    const files = 150;
    const cursor = await latest(admin, '/big');
    await putFiles(admin, Array.from({ length: files }, (_, i) => `/big/f${String(i).padStart(4, '0')}.txt`));
    const res = await json<{ data: { job: { url: string } } }>(admin.deleteFolder({ path: '/big', recursive: 'true' }));
    expect(res.status).toBe(202);
    await untilDone(res.body.data.job.url, admin);
    // The upload's 151 (the folder, then its files), then the delete's.
    const all = (await follow(admin, cursor, 2 * (files + 1), { limit: 100 })).changes;
    expect(all).toHaveLength(2 * (files + 1));
    expect(new Set(all.map((change) => change.id)).size).toBe(all.length);
    expect(all.slice(0, files + 1).filter((change) => change.type.endsWith('.created'))).toHaveLength(files + 1);
    const changes = all.slice(files + 1);
    expect(changes.slice(0, files).every((change) => change.type === 'file.deleted')).toBe(true);
    expect(new Set(changes.slice(0, files).map((change) => change.path)).size).toBe(files);
    expect(changes[files]).toMatchObject({ type: 'folder.deleted', path: '/big', folder: { path: '/big' } });
  });

  it('shows a /team key only /team: a move in as created, a move out as deleted; an upload-only key none', async () => {
    const team = new DriveClient(host.url, TEAM);
    const cursor = await latest(team, '/team');
    await putFiles(admin, ['/team/in.txt', '/other/x.txt', '/other/later.txt']);
    const move = (from: string, to: string) => admin.request('POST', '/drive/move', { body: JSON.stringify({ from, to }), headers: { 'Content-Type': 'application/json' } });
    expect((await move('/other/x.txt', '/team/x.txt')).status).toBe(200);
    expect((await move('/team/in.txt', '/other/in.txt')).status).toBe(200);
    const { changes } = await follow(team, cursor, 4);
    expect(changes.map((change) => [change.type, change.path, change.from])).toEqual([
      ['folder.created', '/team', undefined],
      ['file.created', '/team/in.txt', undefined],
      ['file.created', '/team/x.txt', undefined],
      ['file.deleted', '/team/in.txt', undefined],
    ]);
    expect(JSON.stringify(changes)).not.toContain('/other');
    expect((await team.request('GET', '/drive/changes/latest?path=/other')).status).toBe(403);
    const uploader = new DriveClient(host.url, UPLOADER);
    expect((await uploader.request('GET', '/drive/changes/latest')).status).toBe(403);
    expect((await uploader.request('GET', `/drive/changes?${new URLSearchParams({ cursor })}`)).status).toBe(403);
  });

  it('answers a cursor older than the retention 410 cursor_expired, and a forged one 422', async () => {
    const cursor = await latest(admin);
    const held = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t: number };
    const old = Buffer.from(JSON.stringify({ ...held, t: held.t - 7 * 86400 - 1 })).toString('base64url');
    const res = await json<{ error: { code: string; message: string } }>(admin.request('GET', `/drive/changes?${new URLSearchParams({ cursor: old })}`));
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe('cursor_expired');
    expect((await admin.request('GET', '/drive/changes?cursor=garbage')).status).toBe(422);
  });
});

interface RecentJson {
  data: { changes: ChangeJson[]; cursor: string; next_before: string | null };
}

/** GET /drive/changes/recent with `query`, expecting a 200. */
async function recent(client: DriveClient, query: Record<string, string>): Promise<RecentJson['data']> {
  const res = await json<RecentJson>(client.request('GET', `/drive/changes/recent?${new URLSearchParams(query)}`));
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Every page of `path`'s recent activity, `limit` a page, as a reader paging with `next_before` gets them. */
async function allRecent(client: DriveClient, path: string, limit: number): Promise<{ changes: ChangeJson[]; pages: number }> {
  const changes: ChangeJson[] = [];
  let page = await recent(client, { path, limit: String(limit) });
  let pages = 1;
  for (; ; pages++) {
    expect(page.changes.length).toBeLessThanOrEqual(limit);
    changes.push(...page.changes);
    if (page.next_before === null || pages > 100) break;
    page = await recent(client, { before: page.next_before, limit: String(limit) });
  }
  return { changes, pages };
}

const move = (from: string, to: string) => admin.request('POST', '/drive/move', { body: JSON.stringify({ from, to }), headers: { 'Content-Type': 'application/json' } });
const brief = (change: ChangeJson) => [change.id, change.type, change.path, change.from];

describe('GET /drive/changes/recent', () => {
  it("gives a folder's changes newest first (the feed's order reversed), limit a page, and older pages through next_before", async () => {
    const cursor = await latest(admin, '/recent');
    await putFiles(admin, ['/recent/a.txt', '/recent/b.txt', '/recent-not/x.txt']);
    await putFiles(admin, ['/recent/b.txt']);
    expect((await move('/recent/a.txt', '/recent/c.txt')).status).toBe(200);
    expect((await admin.request('DELETE', '/drive/files?path=/recent/b.txt')).status).toBe(200);
    // Made: /recent, a and b created; b replaced; a moved to c; b deleted.
    const { changes: fed } = await follow(admin, cursor, 6);
    expect(fed).toHaveLength(6);

    const { changes, pages } = await allRecent(admin, '/recent', 2);
    expect(changes.map(brief)).toEqual(fed.map(brief).reverse());
    expect(pages).toBeGreaterThanOrEqual(3);
    const first = await recent(admin, { path: '/recent', limit: '2' });
    expect(first.changes.map(brief)).toEqual(fed.slice(-2).reverse().map(brief));
    // Each path's changes newest first: b's delete before its replacement before its creation.
    expect(changes.filter((change) => change.path === '/recent/b.txt').map((change) => change.type)).toEqual(['file.deleted', 'file.replaced', 'file.created']);
    expect(JSON.stringify(changes)).not.toContain('/recent-not');
    // The default is 20 a page: all six, and no older page (the log's first change is older than them, but
    // none older is in /recent).
    expect((await recent(admin, { path: '/recent' })).changes.map(brief)).toEqual(fed.map(brief).reverse());
  });

  it('gives a cursor that GET /drive/changes follows on from: the changes after the page, none of it again', async () => {
    const cursor = await latest(admin, '/recent2');
    await putFiles(admin, ['/recent2/a.txt', '/recent2/b.txt']);
    const { changes: fed } = await follow(admin, cursor, 3);
    const page = await recent(admin, { path: '/recent2' });
    expect(page.changes.map(brief)).toEqual(fed.map(brief).reverse());
    // The client library's read gives the same, and pages on through `before`.
    const drive = new Drive({ baseUrl: host.url, apiKey: ADMIN });
    expect((await drive.recentChanges('/recent2')).changes).toEqual(page.changes);
    const newest = await drive.recentChanges('/recent2', { limit: 1 });
    expect(newest.changes.map(brief)).toEqual([brief(fed[2])]);
    expect((await drive.recentChanges('/recent2', { limit: 2, before: newest.next_before! })).changes.map(brief)).toEqual([brief(fed[1]), brief(fed[0])]);
    await putFiles(admin, ['/recent2/c.txt']);
    const { changes } = await follow(admin, page.cursor, 1);
    expect(changes.map((change) => [change.type, change.path])).toEqual([['file.created', '/recent2/c.txt']]);
  });

  it("shows a /team key only /team (a move in as created, out as deleted); refuses it another folder's, and an upload-only key", async () => {
    const team = new DriveClient(host.url, TEAM);
    const cursor = await latest(team, '/team/rt');
    await putFiles(admin, ['/team/rt/r1.txt', '/other/r2.txt']);
    expect((await move('/other/r2.txt', '/team/rt/r2.txt')).status).toBe(200);
    expect((await move('/team/rt/r1.txt', '/other/r1.txt')).status).toBe(200);
    const { changes: fed } = await follow(team, cursor, 4);
    expect(fed.map((change) => `${change.type} ${change.path}`).sort()).toEqual(['file.created /team/rt/r1.txt', 'file.created /team/rt/r2.txt', 'file.deleted /team/rt/r1.txt', 'folder.created /team/rt']);
    const page = await recent(team, { path: '/team/rt', limit: '4' });
    expect(page.changes.map(brief)).toEqual(fed.map(brief).reverse());
    const { changes: all } = await allRecent(team, '/team', 100);
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const change of all) expect(change.path === '/team' || change.path.startsWith('/team/')).toBe(true);
    expect(JSON.stringify(all)).not.toContain('/other');

    for (const path of ['/', '/other', '/teams']) {
      const res = await json<{ error: { code: string } }>(team.request('GET', `/drive/changes/recent?${new URLSearchParams({ path })}`));
      expect([path, res.status, res.body.error.code]).toEqual([path, 403, 'forbidden']);
    }
    expect((await team.request('GET', '/drive/changes/recent')).status).toBe(403);
    // A page of the admin's, outside the key's folder, is refused too.
    const outside = await recent(admin, { path: '/other', limit: '1' });
    expect(outside.next_before).not.toBeNull();
    expect((await team.request('GET', `/drive/changes/recent?${new URLSearchParams({ before: outside.next_before! })}`)).status).toBe(403);
    const uploader = new DriveClient(host.url, UPLOADER);
    expect((await uploader.request('GET', '/drive/changes/recent')).status).toBe(403);
    expect((await uploader.request('GET', '/drive/changes/recent?path=/')).status).toBe(403);
  });

  it('answers 422 to a limit out of range, a page it did not give, and a page given with another folder', async () => {
    for (const limit of ['0', '101', 'x']) expect((await admin.request('GET', `/drive/changes/recent?limit=${limit}`)).status).toBe(422);
    expect((await admin.request('GET', '/drive/changes/recent?before=garbage')).status).toBe(422);
    // A feed cursor is no page.
    expect((await admin.request('GET', `/drive/changes/recent?${new URLSearchParams({ before: await latest(admin) })}`)).status).toBe(422);
    const page = await recent(admin, { path: '/', limit: '1' });
    expect(page.next_before).not.toBeNull();
    const res = await json<{ error: { code: string; message: string } }>(admin.request('GET', `/drive/changes/recent?${new URLSearchParams({ path: '/team', before: page.next_before! })}`));
    expect(res.status).toBe(422);
    expect(res.body.error.message).toBe('before is a page of /, not of /team: give before alone');
    expect((await admin.request('GET', `/drive/changes/recent?${new URLSearchParams({ path: '/', before: page.next_before! })}`)).status).toBe(200);
  });
});

import { createHash } from 'node:crypto';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, setLinkExpiry, startHost, stopHost, untilHost } from '../support/local-host';

// Share links (an extension of the spec): made, listed and revoked with a key; opened by anyone holding the
// URL, with no key, until they expire, are revoked, or their file is gone.

const ADMIN = 'links-admin-29hVHaTbDrEgNFVFcigNCYZW';
const WRITER = 'links-writer-H2WYbhMyZ9SZaRESTDG4FsW';
const READER = 'links-reader-H2WYbhMyZ9SZaRESTDG4FsW';
const PUSHER = 'links-pusher-H2WYbhMyZ9SZaRESTDG4FsW';
const CONFINED = 'links-confined-HUjHPIBAxHnYhF53JE196';
const OTHER = 'links-other-29hVHaTbDrEgNFVFcigNCYZW';

interface LinkJson {
  id: string;
  url: string;
  path: string;
  expires_at: string;
}
interface ListedJson {
  id: string;
  path: string;
  created_at: string;
  expires_at: string;
}
type Created = { data: LinkJson } & ErrorJson;
type Listed = { data: { links: ListedJson[]; next_cursor: string | null } } & ErrorJson;

let host: RunningHost;
let admin: DriveClient;
const client = (secret: string) => new DriveClient(host.url, secret);

beforeAll(async () => {
  host = await startHost({
    DRIVE_API_KEYS: [`l:${ADMIN}:admin`, `l:${WRITER}`, `l:${READER}:read-only`, `l:${PUSHER}:upload-only`, `l:${CONFINED}:read-only:/team`, `m:${OTHER}:admin`].join(','),
    DRIVE_RATE_LIMITS: 'off',
    // Every recursive delete of a non-empty folder becomes a job: the folder is marked before the answer.
    DRIVE_DELETE_BUDGET_MS: '0',
  });
  admin = client(ADMIN);
});

afterAll(() => stopHost(host));

async function put(drive: DriveClient, path: string, data: string, type?: string): Promise<void> {
  const res = await drive.upload([{ data, filename: path.slice(path.lastIndexOf('/') + 1), type }], [{ path }]);
  expect(res.status).toBe(200);
}

function createLink(drive: DriveClient, body: unknown) {
  return json<Created>(drive.request('POST', '/drive/links', { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
}

async function link(drive: DriveClient, path: string, expiresIn?: number): Promise<LinkJson> {
  const res = await createLink(drive, expiresIn === undefined ? { path } : { path, expires_in: expiresIn });
  expect(res.status).toBe(200);
  return res.body.data;
}

function listLinks(drive: DriveClient, query: Record<string, string> = {}) {
  return json<Listed>(drive.request('GET', `/drive/links?${new URLSearchParams(query)}`));
}

function revoke(drive: DriveClient, id: string) {
  return json<{ data: { id: string; revoked: boolean } } & ErrorJson>(drive.request('DELETE', `/drive/links/${encodeURIComponent(id)}`));
}

/** Opens a link as a stranger would: no key. */
function open(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, init);
}

async function expectGone(url: string): Promise<void> {
  const res = await json<ErrorJson>(open(url));
  expect({ status: res.status, code: res.body.error.code, message: res.body.error.message }).toEqual({ status: 404, code: 'not_found', message: expect.stringContaining('link') });
}

describe('POST /drive/links', () => {
  it('makes a link whose absolute URL carries a 256-bit token; the id is its SHA-256, never the token', async () => {
    await put(admin, '/share/report.txt', 'quarterly numbers');
    const before = Date.now();
    const made = await link(admin, '/share/report.txt', 3600);

    const token = made.url.slice(`${host.url}/s/`.length);
    expect(made.url.startsWith(`${host.url}/s/`)).toBe(true);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(made.id).toBe(createHash('sha256').update(token).digest('hex'));
    expect(made.path).toBe('/share/report.txt');
    const expires = Date.parse(made.expires_at);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(Object.keys(made).sort()).toEqual(['expires_at', 'id', 'path', 'url']);
  });

  it('lasts a day unless asked otherwise', async () => {
    await put(admin, '/share/day.txt', 'x');
    const made = await link(admin, '/share/day.txt');
    expect(Date.parse(made.expires_at) - Date.now()).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(Date.parse(made.expires_at) - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
  });

  it.each([
    ['a body that is not JSON', 'not json', 400, 'body must be JSON'],
    ['an array', '[]', 400, 'JSON object'],
    ['an unknown field', { path: '/share/report.txt', expires: 60 }, 400, 'unknown field expires'],
    ['a prototype-named field', '{"path": "/share/report.txt", "__proto__": {"x": 1}}', 400, 'unknown field __proto__'],
    ['no path', { expires_in: 60 }, 400, 'path is required'],
    ['a path that is not a string', { path: 7 }, 400, 'path must be a string'],
    ['a relative path', { path: 'share/report.txt' }, 422, 'path'],
    ['a path with ..', { path: '/share/../report.txt' }, 422, 'path'],
    ['the root', { path: '/' }, 422, 'not the root'],
    ['expires_in 0', { path: '/share/report.txt', expires_in: 0 }, 422, 'expires_in must be a whole number of seconds from 1 to 2592000'],
    ['expires_in past 30 days', { path: '/share/report.txt', expires_in: 2_592_001 }, 422, 'expires_in'],
    ['a fractional expires_in', { path: '/share/report.txt', expires_in: 1.5 }, 422, 'expires_in'],
    ['expires_in as a string', { path: '/share/report.txt', expires_in: '60' }, 422, 'expires_in'],
    ['no file at the path', { path: '/share/missing.txt' }, 404, 'no file at /share/missing.txt'],
    ['a folder at the path', { path: '/share' }, 409, '/share is a folder'],
  ])('refuses %s, naming what is wrong', async (_, body, status, message) => {
    const res = await createLink(admin, body);
    expect({ status: res.status, message: res.body.error.message }).toEqual({ status, message: expect.stringContaining(message) });
  });
});

describe('GET /s/{token}, with no key', () => {
  let made: LinkJson;
  beforeAll(async () => {
    await put(admin, '/share/open.txt', 'hello, whoever holds this', 'text/plain');
    made = await link(admin, '/share/open.txt');
  });

  it('answers the file as a download does, as an attachment, never rendered or sniffed', async () => {
    const res = await open(made.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello, whoever holds this');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="open.txt"; filename*=UTF-8''open.txt`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it('serves a Range as 206, revalidates with If-None-Match as 304, and answers HEAD without a body', async () => {
    const ranged = await open(made.url, { headers: { Range: 'bytes=0-4' } });
    expect({ status: ranged.status, range: ranged.headers.get('content-range'), body: await ranged.text() }).toEqual({ status: 206, range: 'bytes 0-4/25', body: 'hello' });

    const etag = (await open(made.url, { method: 'HEAD' })).headers.get('etag')!;
    const cached = await open(made.url, { headers: { 'If-None-Match': etag } });
    expect({ status: cached.status, body: await cached.text(), etag: cached.headers.get('etag') }).toEqual({ status: 304, body: '', etag });

    const head = await open(made.url, { method: 'HEAD' });
    expect({ status: head.status, length: head.headers.get('content-length'), body: await head.text() }).toEqual({ status: 200, length: '25', body: '' });

    const past = await json<ErrorJson>(open(made.url, { headers: { Range: 'bytes=100-' } }));
    expect({ status: past.status, code: past.body.error.code }).toEqual({ status: 416, code: 'range_not_satisfiable' });
  });

  it('shows plain text, images and PDFs in the tab with ?download=0, but never HTML or SVG', async () => {
    await put(admin, '/share/page.html', '<script>alert(1)</script>', 'text/html');
    await put(admin, '/share/logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>', 'image/svg+xml');
    await put(admin, '/share/pic.png', 'not really a png', 'image/png');
    const disposition = async (path: string, query: string) => {
      const res = await open(`${(await link(admin, path)).url}${query}`);
      await res.arrayBuffer();
      return (res.headers.get('content-disposition') ?? '').split(';')[0];
    };
    expect(await disposition('/share/open.txt', '?download=0')).toBe('inline');
    expect(await disposition('/share/pic.png', '?download=0')).toBe('inline');
    expect(await disposition('/share/pic.png', '')).toBe('attachment');
    expect(await disposition('/share/pic.png', '?download=1')).toBe('attachment');
    expect(await disposition('/share/page.html', '?download=0')).toBe('attachment');
    expect(await disposition('/share/logo.svg', '?download=0')).toBe('attachment');

    const bad = await json<ErrorJson>(open(`${made.url}?download=yes`));
    expect({ status: bad.status, message: bad.body.error.message }).toEqual({ status: 422, message: expect.stringContaining('download must be "0"') });
  });

  it('answers a malformed or unknown token with a JSON 404, never a 500', async () => {
    const unknown = `${host.url}/s/${'A'.repeat(43)}`;
    for (const url of [unknown, `${host.url}/s/short`, `${host.url}/s/${'A'.repeat(44)}`, `${host.url}/s/a.b`, `${host.url}/s/${encodeURIComponent('../../drive/list')}`, `${host.url}/s/%E2%80%AE`]) {
      const res = await json<ErrorJson>(open(url));
      expect({ url, status: res.status, code: res.body.error.code }).toEqual({ url, status: 404, code: 'not_found' });
    }
    const head = await open(unknown, { method: 'HEAD' });
    expect({ status: head.status, body: await head.text() }).toEqual({ status: 404, body: '' });
  });

  it('ignores prototype-named query parameters and headers', async () => {
    for (const name of ['__proto__', 'constructor', 'hasOwnProperty']) {
      const res = await open(`${made.url}?${name}=1`, { headers: { [name]: 'x' } });
      expect({ name, status: res.status, body: await res.text() }).toEqual({ name, status: 200, body: 'hello, whoever holds this' });
      const listed = await listLinks(admin, { [name]: '1' });
      expect({ name, status: listed.status }).toEqual({ name, status: 200 });
    }
  });

  it('is 404 once the link has expired (its stored expiry is checked on each GET, not left to TTL)', async () => {
    await put(admin, '/share/soon.txt', 'brief');
    const soon = await link(admin, '/share/soon.txt', 60);
    expect((await open(soon.url)).status).toBe(200);

    await setLinkExpiry(host.dataDir, soon.id, new Date(Date.now() - 1000));

    await expectGone(soon.url);
    expect((await listLinks(admin, { path: '/share/soon.txt' })).body.data.links).toEqual([]);
  });

  it('is 404 once its file is deleted, or replaced by another upload; a new link opens the new file', async () => {
    await put(admin, '/share/doomed.txt', 'one');
    await put(admin, '/share/replaced.txt', 'first version');
    const doomed = await link(admin, '/share/doomed.txt');
    const replaced = await link(admin, '/share/replaced.txt');

    const deleted = await admin.request('DELETE', '/drive/files?path=/share/doomed.txt');
    expect(deleted.status).toBe(200);
    await put(admin, '/share/replaced.txt', 'second version');

    await expectGone(doomed.url);
    await expectGone(replaced.url);
    // Not even the file put back at the same path reopens it: the link is for the file it was made for.
    await put(admin, '/share/doomed.txt', 'one');
    await expectGone(doomed.url);
    expect((await listLinks(admin, { path: '/share/replaced.txt' })).body.data.links).toEqual([]);
    expect(await (await open((await link(admin, '/share/replaced.txt')).url)).text()).toBe('second version');
  });

  it('is 404 once a folder above its file is being deleted', async () => {
    await put(admin, '/going/deep/file.txt', 'below');
    const below = await link(admin, '/going/deep/file.txt');
    expect((await open(below.url)).status).toBe(200);

    const res = await admin.request('DELETE', '/drive/folders?path=/going&recursive=true');
    expect(res.status).toBe(202);

    await expectGone(below.url);
  });
});

describe('GET /drive/links and DELETE /drive/links/{id}', () => {
  it('lists the drive\'s live links in path order, for one file or all, never with a token; revoking is at once', async () => {
    await put(admin, '/list/a.txt', 'a');
    await put(admin, '/list/b.txt', 'b');
    const a1 = await link(admin, '/list/a.txt');
    const a2 = await link(admin, '/list/a.txt', 600);
    const b = await link(admin, '/list/b.txt');

    const forA = await listLinks(admin, { path: '/list/a.txt' });
    expect(forA.status).toBe(200);
    expect(forA.body.data.links.map((l) => l.id).sort()).toEqual([a1.id, a2.id].sort());
    expect(forA.body.data.next_cursor).toBeNull();
    expect(forA.body.data.links.find((l) => l.id === a2.id)).toEqual({ id: a2.id, path: '/list/a.txt', created_at: expect.any(String), expires_at: a2.expires_at, created_by: expect.stringMatching(/^[0-9a-f]{16}$/) });

    // The index is eventually consistent in AWS; the local host's is at once.
    const all = await listLinks(admin);
    const paths = all.body.data.links.map((l) => l.path);
    expect(paths).toEqual([...paths].sort());
    expect(all.body.data.links.map((l) => l.id)).toEqual(expect.arrayContaining([a1.id, a2.id, b.id]));
    const text = JSON.stringify(all.body);
    for (const made of [a1, a2, b]) expect(text).not.toContain(made.url.slice(made.url.lastIndexOf('/') + 1));
    expect(text).not.toMatch(/secret|key|token|url/i);

    // Revoked straight after it was made: the id names the item, no index is read.
    const fresh = await link(admin, '/list/b.txt');
    const revoked = await revoke(admin, fresh.id);
    expect(revoked).toEqual({ status: 200, body: { data: { id: fresh.id, revoked: true } } });
    await expectGone(fresh.url);
    expect((await open(b.url)).status).toBe(200);
    expect((await revoke(admin, fresh.id)).status).toBe(404);
    expect((await listLinks(admin, { path: '/list/b.txt' })).body.data.links.map((l) => l.id)).toEqual([b.id]);
  });

  it('pages the list with limit and cursor, every link once', async () => {
    await put(admin, '/paged/f.txt', 'f');
    const made = [await link(admin, '/paged/f.txt'), await link(admin, '/paged/f.txt'), await link(admin, '/paged/f.txt')];
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof listLinks>> = await listLinks(admin, { path: '/paged/f.txt', limit: '2', ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.links.map((l) => l.id));
      cursor = page.body.data.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen.sort()).toEqual(made.map((m) => m.id).sort());
    expect(pages).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ['limit 0', { limit: '0' }, 'limit must be a whole number from 1 to 100'],
    ['limit 101', { limit: '101' }, 'limit'],
    ['a cursor not from the API', { cursor: 'nonsense' }, 'cursor is not one this API gave'],
    ['a cursor of another listing', { path: '/list/a.txt', cursor: Buffer.from(JSON.stringify(['/list/b.txt', 'a'.repeat(64)])).toString('base64url') }, 'cursor'],
    ['a relative path', { path: 'list/a.txt' }, 'path'],
  ])('refuses %s with 422', async (_, query, message) => {
    const res = await listLinks(admin, query);
    expect({ status: res.status, message: res.body.error.message }).toEqual({ status: 422, message: expect.stringContaining(message) });
  });

  it('answers a malformed id on revoke with 404', async () => {
    for (const id of ['nope', 'A'.repeat(64), 'a'.repeat(63), '__proto__']) {
      const res = await revoke(admin, id);
      expect({ id, status: res.status, code: res.body.error.code }).toEqual({ id, status: 404, code: 'not_found' });
    }
  });
});

describe('share links and keys', () => {
  it('lets admin, read-write and read-only keys share; an upload-only key is 403 on every link route', async () => {
    await put(admin, '/roles/r.txt', 'r');
    for (const secret of [ADMIN, WRITER, READER]) {
      const made = await link(client(secret), '/roles/r.txt');
      expect((await listLinks(client(secret), { path: '/roles/r.txt' })).status).toBe(200);
      expect((await revoke(client(secret), made.id)).status).toBe(200);
    }
    const kept = await link(admin, '/roles/r.txt');
    const pusher = client(PUSHER);
    for (const res of [await createLink(pusher, { path: '/roles/r.txt' }), await listLinks(pusher), await revoke(pusher, kept.id)]) {
      expect({ status: res.status, code: res.body.error.code, message: res.body.error.message }).toEqual({ status: 403, code: 'forbidden', message: expect.stringContaining('upload-only') });
    }
    expect((await open(kept.url)).status).toBe(200);
  });

  it('confines a key with a prefix to links of files under it', async () => {
    await put(admin, '/team/t.txt', 'team');
    await put(admin, '/private/p.txt', 'private');
    const confined = client(CONFINED);
    const outside = await link(admin, '/private/p.txt');

    const refused = await createLink(confined, { path: '/private/p.txt' });
    expect({ status: refused.status, message: refused.body.error.message }).toEqual({ status: 403, message: expect.stringContaining('path /private/p.txt is outside /team') });
    expect((await listLinks(confined, { path: '/private/p.txt' })).status).toBe(403);

    const inside = await link(confined, '/team/t.txt');
    const listed = await listLinks(confined);
    expect(listed.body.data.links.map((l) => l.path)).toEqual(['/team/t.txt']);
    expect(listed.body.data.links.map((l) => l.id)).toEqual([inside.id]);

    // A link outside its folder does not exist for it: revoking one is 404, and the link still opens.
    expect((await revoke(confined, outside.id)).status).toBe(404);
    expect((await open(outside.url)).status).toBe(200);
    expect((await revoke(confined, inside.id)).status).toBe(200);
  });

  it("keeps drives apart: another drive's link id is 404 on revoke, and absent from its listing", async () => {
    await put(admin, '/apart/x.txt', 'x');
    const ours = await link(admin, '/apart/x.txt');
    const other = client(OTHER);

    const res = await revoke(other, ours.id);
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 404, code: 'not_found' });
    expect((await listLinks(other)).body.data.links).toEqual([]);
    expect((await listLinks(other, { path: '/apart/x.txt' })).body.data.links).toEqual([]);
    expect((await open(ours.url)).status).toBe(200);
  });

  it('never writes a token, a key id or a secret to the host log', async () => {
    await put(admin, '/logged/l.txt', 'l');
    const made = await link(admin, '/logged/l.txt');
    await (await open(`${made.url}?download=1`)).arrayBuffer();
    // The function logs the request as its answer starts (the request's one line: the host adds none of its
    // own unless DRIVE_LOCAL_ACCESS_LOG asks), so the line may come just after the answer.
    const line = '"status":200,"route":"/s/{token}","method":"GET"';
    await untilHost(host, () => host.output().includes(line), 'the request logged');
    const log = host.output();
    expect(log).toContain(line);
    expect(log).not.toContain(made.url.slice(made.url.lastIndexOf('/') + 1));
    expect(log).not.toContain(ADMIN);
  });
});

describe('rate limits of share links', () => {
  let limited: RunningHost;
  afterAll(() => stopHost(limited));

  it('takes the link routes from the links bucket and each link\'s GETs from a bucket of its own, answering 429 with Retry-After', async () => {
    // The download rate at 3 a minute, on a host whose clock stands still: no bucket refills mid-test.
    limited = await startHost({ DRIVE_API_KEYS: `r:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'download=3', DRIVE_LOCAL_CLOCK: 'frozen' });
    const drive = new DriveClient(limited.url, ADMIN);
    const up = await drive.upload([{ data: 'limited', filename: 'l.txt' }], [{ path: '/l.txt' }]);
    expect(up.status).toBe(200);
    const first = await link(drive, '/l.txt');
    const second = await link(drive, '/l.txt');

    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const res = await open(first.url);
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await open(first.url);
    const body = (await refused.json()) as ErrorJson;
    expect({ status: refused.status, code: body.error.code, retryAfter: refused.headers.get('retry-after'), limit: refused.headers.get('ratelimit-limit') }).toEqual({
      status: 429,
      code: 'rate_limited',
      retryAfter: expect.stringMatching(/^[1-9][0-9]*$/),
      limit: '3',
    });
    expect(body.error.message).toContain('this link');

    // Another link to the same file has its own bucket, and the key's own download bucket is untouched.
    expect((await open(second.url)).status).toBe(200);
    expect((await drive.download({ path: '/l.txt' })).status).toBe(200);
    const listed = await drive.request('GET', '/drive/links');
    expect({ status: listed.status, limit: listed.headers.get('ratelimit-limit') }).toEqual({ status: 200, limit: '100' });
  });
});

import { request } from 'node:http';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

// Share links through their life: the host's log, what shows inline, a move of the file, the key that made them.

const ADMIN = 'links-admin-29hVHaTbDrEgNFVFcigNCYZW';

let host: RunningHost;
let admin: DriveClient;

beforeAll(async () => {
  host = await sharedHost({ DRIVE_API_KEYS: `l:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'off' });
  admin = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

async function put(path: string, data: string, type?: string): Promise<void> {
  const res = await admin.upload([{ data, filename: path.slice(path.lastIndexOf('/') + 1), type }], [{ path }]);
  expect(res.status).toBe(200);
}

async function link(path: string): Promise<{ id: string; url: string }> {
  const res = await json<{ data: { id: string; url: string } } & ErrorJson>(
    admin.request('POST', '/drive/links', { body: JSON.stringify({ path }), headers: { 'Content-Type': 'application/json' } }),
  );
  expect(res.status).toBe(200);
  return res.body.data;
}

/** A GET with the request target exactly as given (fetch would normalise dot segments away). */
function rawGet(target: string): Promise<number> {
  const { hostname, port } = new URL(host.url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: target, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Waits until the host has logged its own line for a 404 (`GET <path> 404 3ms`: the host's line for a request
 * no route takes, written as its answer finishes): a loop on the log itself, not a time (a busy machine writes
 * it later; Jest's timeout is the backstop). The requests before it were answered, and logged, before it.
 */
async function loggedNoRoute(): Promise<void> {
  while (!/^GET \S+ 404 \d+ms/m.test(host.output())) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('the host log', () => {
  it('never writes a live token, whatever form of the path the client sends', async () => {
    await put('/logged/l.txt', 'l');
    const made = await link('/logged/l.txt');
    const token = made.url.slice(made.url.lastIndexOf('/') + 1);
    // The router reads the path as a URL (dot segments resolved): these open the file.
    expect(await rawGet(`/s/./${token}`)).toBe(200);
    expect(await rawGet(`/drive/../s/${token}`)).toBe(200);
    // A trailing slash (as some clients and chat apps add) opens nothing, but the token is live.
    await rawGet(`/s/${token}/`);
    await loggedNoRoute();
    expect(host.output()).not.toContain(token);
  });
});

describe('?download=0', () => {
  it('never shows XML inline, whatever top-level type a client declared for it (audio/*+xml, video/*+xml)', async () => {
    // A browser renders any "+xml" type as an XML document (XHTML, SVG inside): the README says "HTML, SVG,
    // XML and everything else stay attachments", but SHOWN_INLINE admits every audio/ and video/ subtype.
    const doc = '<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Sign in again</h1></body></html>';
    for (const type of ['video/xhtml+xml', 'audio/svg+xml']) {
      await put(`/inline/${type.replace('/', '-')}.xml`, doc, type);
      const made = await link(`/inline/${type.replace('/', '-')}.xml`);
      const res = await fetch(`${made.url}?download=0`);
      await res.arrayBuffer();
      expect({ type: res.headers.get('content-type'), disposition: (res.headers.get('content-disposition') ?? '').split(';')[0] }).toEqual({ type, disposition: 'attachment' });
    }
  });
});

describe('a link and POST /drive/move', () => {
  it('a link a move killed (404, and gone from the list) stays dead when the file is moved back', async () => {
    await put('/moving/shared.txt', 'shared once');
    const made = await link('/moving/shared.txt');
    expect((await fetch(made.url)).status).toBe(200);
    const move = (from: string, to: string) =>
      admin.request('POST', '/drive/move', { body: JSON.stringify({ from, to }), headers: { 'Content-Type': 'application/json' } });
    expect((await move('/moving/shared.txt', '/private/shared.txt')).status).toBe(200);
    expect((await fetch(made.url)).status).toBe(404);
    const listed = await json<{ data: { links: { id: string }[] } }>(admin.request('GET', '/drive/links'));
    expect(listed.body.data.links.map((l) => l.id)).not.toContain(made.id);
    // The owner sees no link any more; later the file goes back where it was.
    expect((await move('/private/shared.txt', '/moving/shared.txt')).status).toBe(200);
    expect((await fetch(made.url)).status).toBe(404);
  });
});

describe('a link and the key that made it', () => {
  const send = (client: DriveClient, method: string, path: string, body?: unknown) =>
    client.request(method, path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

  async function newKey(name: string, role: string, prefix?: string): Promise<{ id: string; client: DriveClient }> {
    const made = await json<{ data: { key: { id: string }; secret: string } }>(send(admin, 'POST', '/drive/keys', { name, role, ...(prefix ? { prefix } : {}) }));
    expect(made.status).toBe(200);
    return { id: made.body.data.key.id, client: new DriveClient(host.url, made.body.data.secret) };
  }

  async function linkAs(client: DriveClient, path: string): Promise<{ id: string; url: string }> {
    const res = await json<{ data: { id: string; url: string } }>(send(client, 'POST', '/drive/links', { path, expires_in: 2592000 }));
    expect(res.status).toBe(200);
    return res.body.data;
  }

  const listedBy = async (client: DriveClient, keyId: string) =>
    (await json<{ data: { links: { id: string; created_by: string }[] } }>(client.request('GET', `/drive/links?created_by=${keyId}`))).body.data.links;

  it("a revoked key's links stop opening at once; the admin's link to the same file opens on", async () => {
    // A contractor's read-only key shares a file for 30 days; the admin revokes the key (it leaked).
    const contractor = await newKey('contractor', 'read-only');
    await put('/contract/plans.pdf', 'plans');
    const theirs = await linkAs(contractor.client, '/contract/plans.pdf');
    const ours = await linkAs(admin, '/contract/plans.pdf');
    expect((await fetch(theirs.url)).status).toBe(200);

    expect((await send(admin, 'DELETE', `/drive/keys/${contractor.id}`)).status).toBe(200);
    const gone = await json<ErrorJson>(fetch(theirs.url));
    expect({ status: gone.status, code: gone.body.error.code }).toEqual({ status: 404, code: 'not_found' });
    expect(gone.body.error.message).toBe('this link does not exist, has expired or was revoked, or its file is gone');
    expect((await fetch(theirs.url, { method: 'HEAD' })).status).toBe(404);
    expect(await (await fetch(ours.url)).text()).toBe('plans');
  });

  it('lists a key\'s links with created_by, and revokes them all a page at a time; other keys\' links stay', async () => {
    const writer = await newKey('writer', 'read-write');
    const paths = ['/by-key/a.txt', '/by-key/b.txt', '/by-key/c.txt'];
    for (const path of paths) await put(path, path);
    const made = [];
    for (const path of paths) made.push(await linkAs(writer.client, path));
    const kept = await linkAs(admin, '/by-key/a.txt');

    expect((await listedBy(admin, writer.id)).map((l) => l.id).sort()).toEqual(made.map((l) => l.id).sort());
    expect((await listedBy(admin, writer.id)).every((l) => l.created_by === writer.id)).toBe(true);

    // Pages of two: the first revokes what it read of the writer's, the cursor goes on to the rest.
    let revoked = 0;
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: URLSearchParams = new URLSearchParams({ created_by: writer.id, limit: '2', ...(cursor ? { cursor } : {}) });
      const res: { status: number; body: { data: { created_by: string; revoked: number; next_cursor: string | null } } } = await json<{ data: { created_by: string; revoked: number; next_cursor: string | null } }>(send(admin, 'DELETE', `/drive/links?${query}`));
      expect(res.status).toBe(200);
      expect(res.body.data.created_by).toBe(writer.id);
      revoked += res.body.data.revoked;
      cursor = res.body.data.next_cursor;
      pages++;
    } while (cursor !== null && pages < 50);
    expect(pages).toBeGreaterThan(1);
    expect(revoked).toBe(3);
    for (const link of made) expect((await fetch(link.url)).status).toBe(404);
    expect(await listedBy(admin, writer.id)).toEqual([]);
    expect((await fetch(kept.url)).status).toBe(200);
    // The writer itself is live: its links are gone, not the key.
    expect((await writer.client.request('GET', '/drive/whoami')).status).toBe(200);
  });

  it('revokes for a confined key only the links under its folder, as its single revokes', async () => {
    const team = await newKey('team', 'read-only', '/team');
    await put('/team/t.txt', 't');
    await put('/private/p.txt', 'p');
    const inside = await linkAs(admin, '/team/t.txt');
    const outside = await linkAs(admin, '/private/p.txt');
    const adminId = (await json<{ data: { key_id: string } }>(admin.request('GET', '/drive/whoami'))).body.data.key_id;

    expect((await listedBy(team.client, adminId)).map((l) => l.id)).toEqual([inside.id]);
    const res = await json<{ data: { revoked: number } }>(send(team.client, 'DELETE', `/drive/links?created_by=${adminId}`));
    expect(res).toMatchObject({ status: 200, body: { data: { revoked: 1 } } });
    expect((await fetch(inside.url)).status).toBe(404);
    expect((await fetch(outside.url)).status).toBe(200);
  });

  it('answers a created_by that is not a key id with 422, and a DELETE /drive/links without one with 400', async () => {
    for (const [method, query] of [['GET', 'created_by=nope'], ['DELETE', 'created_by=0123'], ['DELETE', `created_by=${'A'.repeat(16)}`]]) {
      const res = await json<ErrorJson>(admin.request(method, `/drive/links?${query}`));
      expect({ method, status: res.status, code: res.body.error.code, names: res.body.error.message.includes('created_by') }).toEqual({ method, status: 422, code: 'validation_error', names: true });
    }
    const bare = await json<ErrorJson>(admin.request('DELETE', '/drive/links'));
    expect({ status: bare.status, code: bare.body.error.code }).toEqual({ status: 400, code: 'bad_request' });
    expect(bare.body.error.message).toContain('created_by');
  });
});

import { request } from 'node:http';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// Share links through their life: the host's log, what shows inline, a move of the file, the key that made them.

const ADMIN = 'links-admin-0123456789abcdefghijklmn';

let host: RunningHost;
let admin: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `l:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'off' });
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

async function logged(needle: string): Promise<void> {
  for (let waited = 0; !host.output().includes(needle) && waited < 3000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
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
    await logged(`/s/${token}/`);
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
  it('a revoked key\'s links stop opening, or at least the listing tells which key made each one', async () => {
    // A contractor's read-only key shares a file for 30 days; the admin revokes the key (it leaked). The link
    // item keeps no key id, so the link opens on, and GET /drive/links cannot tell the admin which to revoke.
    const made = await json<{ data: { key: { id: string }; secret: string } }>(
      admin.request('POST', '/drive/keys', { body: JSON.stringify({ name: 'contractor', role: 'read-only' }), headers: { 'Content-Type': 'application/json' } }),
    );
    expect(made.status).toBe(200);
    const contractor = new DriveClient(host.url, made.body.data.secret);
    await put('/contract/plans.pdf', 'plans');
    const res = await json<{ data: { id: string; url: string } }>(
      contractor.request('POST', '/drive/links', { body: JSON.stringify({ path: '/contract/plans.pdf', expires_in: 2592000 }), headers: { 'Content-Type': 'application/json' } }),
    );
    expect(res.status).toBe(200);
    expect((await admin.request('DELETE', `/drive/keys/${made.body.data.key.id}`)).status).toBe(200);
    expect((await contractor.request('GET', '/drive/whoami')).status).toBe(401);
    const opened = (await fetch(res.body.data.url)).status;
    const listed = await json<{ data: { links: Record<string, unknown>[] } }>(admin.request('GET', '/drive/links?path=/contract/plans.pdf'));
    const entry = listed.body.data.links.find((l) => l.id === res.body.data.id);
    expect(opened === 404 || Object.values(entry ?? {}).includes(made.body.data.key.id)).toBe(true);
  });
});

import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '../../client/src/webhook-verify';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, untilHost } from '../support/local-host';
import { type ChangeJson, followFeed, latestCursor } from '../support/change-feed';
import { putFiles } from '../support/seeding';

// Webhooks on the change feed (issue 27, Done when): on the local host the sequencer logs each write, the
// dispatcher (run by the host's sweep timer, as the 1-minute schedule runs it in AWS) queues the changes, and
// the worker POSTs them to a receiver on loopback. A webhook gets exactly the changes a follower of
// GET /drive/changes gets for the same subtree, in the same order, each once, each signed with its secret.
// Waits are for the changes to arrive, bounded by the host's CPU, never by the clock.

const ADMIN = 'hooksfeed-admin-Vq8Lm2Xr7Tn4Wz9Kc3Pd6Yb';

type Created = { data: { webhook: { id: string }; secret: string } } & ErrorJson;
interface Arrival {
  webhookId: string;
  signature: string;
  rawBody: string;
}

let host: RunningHost;
let admin: DriveClient;
let server: Server;
let receiverUrl: string;
const arrivals: Arrival[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      arrivals.push({ webhookId: String(req.headers['drive-webhook-id']), signature: String(req.headers['drive-signature']), rawBody: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  host = await startHost({
    DRIVE_API_KEYS: `hf:${ADMIN}:admin`,
    DRIVE_RATE_LIMITS: 'off',
    DRIVE_MOVE_BUDGET_MS: '0',
    DRIVE_DELETE_BUDGET_MS: '0',
    // The dispatcher runs on the sweep's timer: every second here (every minute by default).
    DRIVE_LOCAL_SWEEP_SECONDS: '1',
  });
  admin = new DriveClient(host.url, ADMIN);
});

afterAll(async () => {
  await stopHost(host);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const send = (method: string, path: string, body?: unknown) =>
  json<ErrorJson & { data: unknown }>(admin.request(method, path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));

const latest = (path: string) => latestCursor(admin, path);

/** Follows the feed from `cursor` until a change at `last` came (at most `requests` long polls), then checks nothing more waits. */
async function follow(cursor: string, last: string, requests = 40): Promise<ChangeJson[]> {
  return (await followFeed(admin, cursor, (changes) => changes.some((change) => change.path === last), { requests })).changes;
}

describe('Webhooks on the change feed (local host)', () => {
  it('sends each webhook exactly the changes a follower of its subtree gets, in order, once, signed', async () => {
    // Prepare: /a made and its change logged; a webhook of the whole drive and one of /a, then a feed cursor for
    // each subtree (no write between: the webhooks start where the cursors do).
    const before = await latest('/');
    await putFiles(admin, ['/a/keep.txt']);
    await follow(before, '/a/keep.txt');
    const whole = await json<Created>(admin.request('POST', '/drive/webhooks', { body: JSON.stringify({ url: receiverUrl }), headers: { 'Content-Type': 'application/json' } }));
    const scoped = await json<Created>(admin.request('POST', '/drive/webhooks', { body: JSON.stringify({ url: receiverUrl, path: '/a' }), headers: { 'Content-Type': 'application/json' } }));
    expect([whole.status, scoped.status]).toEqual([200, 200]);
    const cursors = { whole: await latest('/'), scoped: await latest('/a') };

    // Act: uploads, a replacement, a move out of /a and one into it, a file and a folder deleted, and a last
    // upload that both subtrees see.
    await putFiles(admin, ['/a/one.txt', '/a/two.txt', '/b/three.txt']);
    await putFiles(admin, ['/a/one.txt']);
    expect((await send('POST', '/drive/move', { from: '/a/two.txt', to: '/b/two.txt' })).status).toBe(200);
    expect((await send('POST', '/drive/move', { from: '/b/three.txt', to: '/a/three.txt' })).status).toBe(200);
    expect((await send('DELETE', `/drive/files?${new URLSearchParams({ path: '/a/one.txt' })}`)).status).toBe(200);
    expect((await admin.createFolder({ path: '/a/sub' })).status).toBe(200);
    expect((await admin.deleteFolder({ path: '/a/sub' })).status).toBe(200);
    await putFiles(admin, ['/a/last.txt']);
    const followed = { whole: await follow(cursors.whole, '/a/last.txt'), scoped: await follow(cursors.scoped, '/a/last.txt') };

    // Assess: each webhook's deliveries, in arrival order, are its follower's changes.
    const received = (webhookId: string) => arrivals.filter((arrival) => arrival.webhookId === webhookId);
    const ids = { whole: whole.body.data.webhook.id, scoped: scoped.body.data.webhook.id };
    await untilHost(host, () => (['whole', 'scoped'] as const).every((which) => received(ids[which]).length >= followed[which].length), 'the webhooks got their changes');
    for (const which of ['whole', 'scoped'] as const) {
      const secret = (which === 'whole' ? whole : scoped).body.data.secret;
      const bodies = received(ids[which]).map((arrival) => {
        expect(verify(arrival.rawBody, arrival.signature, secret)).toBe(true);
        return JSON.parse(arrival.rawBody) as { id: string; webhook_id: string; change: ChangeJson };
      });
      expect(bodies.map((body) => body.change)).toEqual(followed[which]);
      expect(bodies.map((body) => body.id)).toEqual(followed[which].map((change) => `${ids[which]}.${change.id}`));
    }
    // The whole drive's follower saw the moves as moves; /a's saw the move out as a delete at its source and
    // the move in as a creation (and nothing of /b).
    expect(followed.whole.map((change) => `${change.type} ${change.path}`)).toEqual(expect.arrayContaining(['file.moved /b/two.txt', 'file.moved /a/three.txt', 'file.replaced /a/one.txt']));
    expect(followed.scoped.map((change) => `${change.type} ${change.path}`)).toEqual(expect.arrayContaining(['file.deleted /a/two.txt', 'file.created /a/three.txt']));
    expect(followed.scoped.every((change) => change.path.startsWith('/a/'))).toBe(true);
  });
});

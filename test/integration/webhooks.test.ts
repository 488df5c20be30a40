import { randomUUID } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { verify } from '../../client/src/webhook-verify';
import type { DeliveryMessage } from '../../functions/core/webhooks';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, untilHost } from '../support/local-host';

// Webhooks on the local host (issue 27): the routes (admin only; https or loopback URLs; an address that is
// not public refused), and a delivery handed to the embedded FIFO queue as the dispatcher queues it, POSTed
// signed by the worker to a receiver on loopback, retried, and written off after the retry period (1 s here,
// 24 hours by default) into GET /drive/webhooks/{id}/deliveries?status=failed. The dispatcher following the
// change feed's log end to end: test/integration/webhooks-feed.test.ts; its rules on memory ports:
// test/unit/core/webhook-delivery.test.ts.

const ADMIN = 'hooks-admin-29hVHaTbDrEgNFVFcigNCYZW';
const WRITER = 'hooks-writer-H2WYbhMyZ9SZaRESTDG4FsW';

interface WebhookJson {
  id: string;
  url: string;
  path: string;
  types: string[];
  created_at: string;
}
type Created = { data: { webhook: WebhookJson; secret: string } } & ErrorJson;

interface Arrival {
  headers: IncomingMessage['headers'];
  rawBody: string;
}

let host: RunningHost;
let admin: DriveClient;
let server: Server;
let receiverUrl: string;
const arrivals: Arrival[] = [];
/** What the receiver answers a delivery id's n-th attempt (1-based). */
let answer: (deliveryId: string, attempt: number) => number = () => 204;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = String(req.headers['drive-delivery-id']);
      const status = answer(id, arrivals.filter((a) => a.headers['drive-delivery-id'] === id).length + 1);
      arrivals.push({ headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  host = await startHost({
    DRIVE_API_KEYS: [`w:${ADMIN}:admin`, `w:${WRITER}`].join(','),
    DRIVE_RATE_LIMITS: 'off',
    // A failed delivery comes back after 1 s (SQS's visibility is whole seconds), and is written off 1 s after its first attempt.
    DRIVE_WEBHOOK_RETRY_BASE_MS: '1000',
    DRIVE_WEBHOOK_RETRY_FOR_SECONDS: '1',
  });
  admin = new DriveClient(host.url, ADMIN);
});

afterAll(async () => {
  await stopHost(host);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function create(client: DriveClient, body: unknown) {
  return json<Created>(client.request('POST', '/drive/webhooks', { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
}

/** The last sequence given to a message this file queued: it only grows, as the queue's own (two sends in one millisecond keep their order). */
let lastSequence = 0;

/** Queues a delivery as the dispatcher would: a message file in the embedded FIFO queue, in its webhook's group. */
async function queueDelivery(message: DeliveryMessage): Promise<void> {
  const dir = join(host.dataDir, 'queues', 'deliveries');
  const id = randomUUID();
  lastSequence = Math.max(lastSequence + 1, Date.now() * 1000);
  const stored = { id, body: JSON.stringify(message), sentAt: Date.now(), receiveCount: 0, visibleAt: 0, groupId: message.webhookId, sequence: lastSequence };
  await writeFile(join(dir, `.${id}.tmp`), JSON.stringify(stored));
  await rename(join(dir, `.${id}.tmp`), join(dir, `${id}.json`));
}

const change = (id: string, path: string) => ({ id, type: 'file.created' as const, path, at: new Date().toISOString() });

describe('POST /drive/webhooks', () => {
  it('registers a loopback receiver and answers the secret once; lists and deletes it', async () => {
    // Act
    const made = await create(admin, { url: receiverUrl, path: '/reports', types: ['file.created', 'file.deleted'] });

    // Assess
    expect(made.status).toBe(200);
    expect(made.body.data).toEqual({
      webhook: { id: expect.stringMatching(/^[0-9a-f]{16}$/), url: receiverUrl, path: '/reports', types: ['file.created', 'file.deleted'], created_at: expect.any(String) },
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await json<{ data: { webhooks: WebhookJson[] } }>(admin.request('GET', '/drive/webhooks'));
    expect(listed.body.data.webhooks).toContainEqual(made.body.data.webhook);
    expect(JSON.stringify(listed.body)).not.toContain(made.body.data.secret);
    const id = made.body.data.webhook.id;
    expect((await json(admin.request('DELETE', `/drive/webhooks/${id}`))).body).toEqual({ data: { id, deleted: true } });
    expect((await json<ErrorJson>(admin.request('DELETE', `/drive/webhooks/${id}`))).status).toBe(404);
  });

  it('refuses a URL that is not https and not loopback, and a host that resolves to a private address', async () => {
    const plain = await create(admin, { url: 'http://example.com/hooks' });
    expect(plain.status).toBe(422);
    expect(plain.body.error.message).toBe('url must be https, or http to 127.0.0.1 or localhost');
    const metadata = await create(admin, { url: 'https://169.254.169.254/latest/meta-data/' });
    expect(metadata.status).toBe(422);
    expect(metadata.body.error.message).toContain('refused address');
  });

  it('is admin only: a read-write key gets 403 on every webhook route', async () => {
    const writer = new DriveClient(host.url, WRITER);
    expect((await create(writer, { url: receiverUrl })).status).toBe(403);
    expect((await writer.request('GET', '/drive/webhooks')).status).toBe(403);
    expect((await writer.request('DELETE', '/drive/webhooks/0123456789abcdef')).status).toBe(403);
    expect((await writer.request('GET', '/drive/webhooks/0123456789abcdef/deliveries')).status).toBe(403);
  });
});

describe('Delivery through the embedded FIFO queue', () => {
  it('POSTs a queued delivery signed, retries a 500 under the same delivery id, and delivers the next only after it', async () => {
    // Prepare: a webhook; its first delivery fails once.
    const made = await create(admin, { url: receiverUrl });
    const { webhook, secret } = made.body.data;
    answer = (id, attempt) => (id === `${webhook.id}.1` && attempt === 1 ? 500 : 204);
    arrivals.length = 0;
    const cursor = 'eyJ2IjoxfQ';

    // Act: two deliveries of the webhook's group, in order.
    await queueDelivery({ drive: 'w', webhookId: webhook.id, position: 1, change: change('1', '/a.txt'), cursor });
    await queueDelivery({ drive: 'w', webhookId: webhook.id, position: 2, change: change('2', '/b.txt'), cursor });
    await untilHost(host, () => arrivals.filter((a) => a.headers['drive-delivery-id'] === `${webhook.id}.2`).length > 0, 'the second delivery');

    // Assess: 1 (500), 1 again (204), then 2; each signed with the webhook's secret.
    expect(arrivals.map((a) => a.headers['drive-delivery-id'])).toEqual([`${webhook.id}.1`, `${webhook.id}.1`, `${webhook.id}.2`]);
    for (const arrival of arrivals) {
      expect(verify(arrival.rawBody, String(arrival.headers['drive-signature']), secret)).toBe(true);
      expect(arrival.headers['drive-webhook-id']).toBe(webhook.id);
      expect(JSON.parse(arrival.rawBody)).toEqual({ id: arrival.headers['drive-delivery-id'], webhook_id: webhook.id, change: expect.any(Object), cursor });
    }
  });

  it('lists a delivery that failed past the retry period under ?status=failed', async () => {
    // Prepare: every attempt fails.
    const made = await create(admin, { url: receiverUrl });
    const { webhook } = made.body.data;
    answer = () => 503;
    const failed = async () => (await json<{ data: { deliveries: { id: string }[] } }>(admin.request('GET', `/drive/webhooks/${webhook.id}/deliveries?status=failed`))).body.data.deliveries;

    const seventh = change('7', '/c.txt');

    // Act
    await queueDelivery({ drive: 'w', webhookId: webhook.id, position: 7, change: seventh, cursor: 'x' });
    let listed: { id: string }[] = [];
    await untilHost(host, async () => (listed = await failed()).length > 0, 'the failed delivery');

    // Assess
    expect(listed).toEqual([
      {
        id: `${webhook.id}.7`,
        webhook_id: webhook.id,
        status: 'failed',
        change: seventh,
        attempts: expect.any(Number),
        last_status: 503,
        last_error: 'answered 503',
        first_attempt_at: expect.any(String),
        failed_at: expect.any(String),
      },
    ]);
    expect((await json<ErrorJson>(admin.request('GET', '/drive/webhooks/0123456789abcdef/deliveries'))).status).toBe(404);
  });
});

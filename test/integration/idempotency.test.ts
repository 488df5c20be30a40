import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { INLINE_ANSWER_BYTES } from '../../functions/aws/dynamo-idempotency';
import { IDEMPOTENCY_TTL_MS } from '../../functions/core/idempotency';
import { faultControls } from '../support/fault-host';
import { type Sent, idempotentRequests, uploadBody } from '../support/idempotent-requests';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// Idempotency-Key on the real host (issue 26): the handlers' own adapters on the embedded DynamoDB, a first
// request held mid-way by the fault host's `hold` rule (never by timing), and the records' clock moved by
// the host's clock file to lapse a lease or a record's 24 hours.

const KEY = 'idem-key-one-7Hq2Lm9Vx4Rt8Kp3Wz6Nc';
const OTHER_KEY = 'idem-key-two-5Jf8Dg2Qs7Bv4Xm9Lr3Ty';

let host: RunningHost;
let faults: ReturnType<typeof faultControls>;

beforeAll(async () => {
  host = await startHost(
    {
      DRIVE_API_KEYS: `idem:${KEY}:admin,idem:${OTHER_KEY}:admin`,
      DRIVE_RATE_LIMITS: 'off',
      DRIVE_KEY_CACHE_SECONDS: '600',
      // Answers over 16 KB gzipped go in chunk items: a 1,000-file upload's answer takes that path.
      DRIVE_IDEMPOTENCY_INLINE_BYTES: '16000',
    },
    undefined,
    'test/support/fault-host.ts',
  );
  faults = faultControls(host.dataDir);
});

afterEach(() => faults.reset());

afterAll(() => stopHost(host));

const { send, upload } = idempotentRequests(() => host.url, KEY);

/** Sends again while the answer is `409 idempotency_in_progress`, after its Retry-After, as the client does. */
async function untilSettled(attempt: () => Promise<Sent>): Promise<Sent> {
  for (;;) {
    const res = await attempt();
    if (res.status !== 409 || JSON.parse(res.text).error?.reason !== 'idempotency_in_progress') return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000));
  }
}

async function filesIn(folder: string): Promise<{ name: string; id: string }[]> {
  const res = await send('GET', `/drive/list?folder=${encodeURIComponent(folder)}`);
  return (JSON.parse(res.text) as { data: { files: { name: string; id: string }[] } }).data.files;
}

describe('Idempotency-Key on the local host', () => {
  it('answers a retry after a lost reply with the first answer, replayed, and stores one file', async () => {
    // Prepare: the first attempt held inside the handler, its client gone before the answer
    const idempotencyKey = randomUUID();
    const { body, contentType } = uploadBody([{ name: 'lost.txt', data: 'once' }], '/lost');
    await faults.inject([{ command: 'PutObject', times: 1, mode: 'hold' }]);
    const first = httpRequest(`${host.url}/drive/upload`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': contentType, 'Content-Length': body.length, 'Idempotency-Key': idempotencyKey },
    });
    first.on('error', () => undefined);
    first.end(body);
    await faults.held();
    first.destroy();

    // Act: the first goes on; the retry waits for it while it runs, then gets its answer
    const during = await upload([{ name: 'lost.txt', data: 'once' }], '/lost', idempotencyKey);
    await faults.release();
    const retry = await untilSettled(() => upload([{ name: 'lost.txt', data: 'once' }], '/lost', idempotencyKey));
    const again = await upload([{ name: 'lost.txt', data: 'once' }], '/lost', idempotencyKey);

    // Assess
    expect({ status: during.status, retryAfter: during.headers.get('retry-after'), error: JSON.parse(during.text).error }).toEqual({
      status: 409,
      retryAfter: expect.stringMatching(/^[12]$/),
      error: expect.objectContaining({ code: 'conflict', reason: 'idempotency_in_progress' }),
    });
    expect({ status: retry.status, replayed: retry.headers.get('idempotent-replayed') }).toEqual({ status: 200, replayed: 'true' });
    expect(again.text).toBe(retry.text);
    const stored = (JSON.parse(retry.text) as { data: { id: string }[] }).data;
    expect(await filesIn('/lost')).toEqual([expect.objectContaining({ name: 'lost.txt', id: stored[0].id })]);
    // The replay is the retry's answer: its own request id, the first's body.
    expect(retry.headers.get('x-request-id')).not.toBe(again.headers.get('x-request-id'));
  });

  it('answers a different request under the same key 422 (idempotency_key_reused), and does nothing', async () => {
    const idempotencyKey = randomUUID();
    const first = await send('POST', '/drive/folders', { body: JSON.stringify({ path: '/reused-a' }), contentType: 'application/json', idempotencyKey });
    const other = await send('POST', '/drive/folders', { body: JSON.stringify({ path: '/reused-b' }), contentType: 'application/json', idempotencyKey });

    expect(first.status).toBe(200);
    expect({ status: other.status, error: JSON.parse(other.text).error }).toEqual({
      status: 422,
      error: expect.objectContaining({ code: 'validation_error', reason: 'idempotency_key_reused', message: expect.stringContaining('Idempotency-Key') }),
    });
    expect((await send('GET', '/drive/list?folder=/reused-b')).status).toBe(404);
  });

  it('does not remember a 5xx: a retry with the same key runs anew', async () => {
    const idempotencyKey = randomUUID();
    await faults.inject([{ command: 'PutObject', times: 1, mode: 'error' }]);
    const failed = await upload([{ name: 'five.txt', data: '5xx' }], '/five', idempotencyKey);
    await faults.inject([]);
    const retry = await upload([{ name: 'five.txt', data: '5xx' }], '/five', idempotencyKey);

    expect(failed.status).toBe(500);
    expect({ status: retry.status, replayed: retry.headers.get('idempotent-replayed') }).toEqual({ status: 200, replayed: null });
    expect(await filesIn('/five')).toEqual([expect.objectContaining({ name: 'five.txt' })]);
  });

  it('scopes keys to the API key: another key with the same Idempotency-Key runs anew', async () => {
    const idempotencyKey = randomUUID();
    const mine = await upload([{ name: 'a.txt', data: 'mine' }], '/scoped', idempotencyKey);
    const theirs = await upload([{ name: 'b.txt', data: 'theirs' }], '/scoped', idempotencyKey, OTHER_KEY);

    expect([mine.status, theirs.status, theirs.headers.get('idempotent-replayed')]).toEqual([200, 200, null]);
    expect((await filesIn('/scoped')).map((file) => file.name).sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('frees the key of a request that died once its lease lapses on the host clock, and forgets an answer after 24 hours', async () => {
    // Prepare: a first attempt held (as a killed function would hold its key)
    const idempotencyKey = randomUUID();
    await faults.inject([{ command: 'PutObject', times: 1, mode: 'hold' }]);
    const first = upload([{ name: 'lease.txt', data: 'lease' }], '/lease', idempotencyKey);
    await faults.held();
    const blocked = await upload([{ name: 'lease.txt', data: 'lease' }], '/lease', idempotencyKey);

    // Act: past any function's timeout and the margin, the key is free; the retry runs anew
    await faults.moveClock(15 * 60_000);
    const takeover = await upload([{ name: 'lease.txt', data: 'lease' }], '/lease', idempotencyKey);
    await faults.release();
    const late = await first;
    const replay = await upload([{ name: 'lease.txt', data: 'lease' }], '/lease', idempotencyKey);
    // Past 24 hours by 2 s: the record's TTL is in whole seconds, rounded up, and compared with the time rounded down
    // (1 s of margin failed when the keep fell late in a second).
    await faults.moveClock(15 * 60_000 + IDEMPOTENCY_TTL_MS + 2000);
    const dayLater = await upload([{ name: 'lease.txt', data: 'lease' }], '/lease', idempotencyKey);

    // Assess: the late first was stopped at its function's timeout, as Lambda stops it (the gateway's 504);
    // the key keeps the takeover's answer
    expect(blocked.status).toBe(409);
    expect({ status: takeover.status, replayed: takeover.headers.get('idempotent-replayed') }).toEqual({ status: 200, replayed: null });
    expect(late.status).toBe(504);
    expect({ text: replay.text, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ text: takeover.text, replayed: 'true' });
    expect({ status: dayLater.status, replayed: dayLater.headers.get('idempotent-replayed') }).toEqual({ status: 200, replayed: null });
  });

  it('stops a first request at its function\'s timeout on the host clock, as Lambda does: the work is done once, by the retry', async () => {
    // Prepare: a first attempt held inside the handler, before it stores anything but its bytes
    const idempotencyKey = randomUUID();
    await faults.inject([{ command: 'PutObject', times: 1, mode: 'hold' }]);
    const first = upload([{ name: 'once.txt', data: 'once' }], '/stopped', idempotencyKey);
    await faults.held();

    // Act: the host's clock passes the upload function's timeout (29 s) and the key's lease (39 s); the
    // client's retry takes the key and runs; then the first's held call comes back
    await faults.moveClock(40_000);
    const retry = await upload([{ name: 'once.txt', data: 'once' }], '/stopped', idempotencyKey);
    await faults.release();
    const late = await first;

    // Assess: the first was stopped (Lambda would have killed it at 29 s): it stored nothing after the retry,
    // and its client got the gateway's 504, not an answer about work done twice
    const stored = (JSON.parse(retry.text) as { data: { id: string }[] }).data;
    expect({ status: retry.status, replayed: retry.headers.get('idempotent-replayed') }).toEqual({ status: 200, replayed: null });
    expect({ status: late.status, error: JSON.parse(late.text).error?.code }).toEqual({ status: 504, error: 'internal_error' });
    expect(await filesIn('/stopped')).toEqual([expect.objectContaining({ name: 'once.txt', id: stored[0].id })]);
  });

  it('keeps a 1,000-file upload\'s answer in chunk items and replays it byte for byte', async () => {
    const idempotencyKey = randomUUID();
    const files = Array.from({ length: 1000 }, (_, i) => ({ name: `file-${String(i).padStart(4, '0')}-${randomUUID()}.txt`, data: String(i) }));
    const first = await upload(files, '/thousand', idempotencyKey);
    const replay = await upload(files, '/thousand', idempotencyKey);

    expect(first.status).toBe(200);
    expect((JSON.parse(first.text) as { data: unknown[] }).data).toHaveLength(1000);
    // Over this host's 16,000 bytes (so in chunks here), and inside the default bound (so one item in AWS).
    expect(gzipSync(first.text).length).toBeGreaterThan(16_000);
    expect(gzipSync(first.text).length).toBeLessThan(INLINE_ANSWER_BYTES);
    expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed'), same: replay.text === first.text }).toEqual({ status: 200, replayed: 'true', same: true });
  });

  it('replays a retry whose FormData was built again (another random boundary, the same parts), and stores one file', async () => {
    const idempotencyKey = randomUUID();
    const send = async () => {
      // As a client that builds its request anew on each try: fetch gives each FormData a boundary of its own.
      const form = new FormData();
      form.append('files', new Blob(['formdata']), 'form.txt');
      form.append('metadata', JSON.stringify([{ folder: '/formdata' }]));
      const res = await fetch(`${host.url}/drive/upload`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${KEY}`, 'Idempotency-Key': idempotencyKey } });
      return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
    };
    const first = await send();
    const retry = await send();

    expect(first.status).toBe(200);
    expect(retry).toEqual({ status: 200, replayed: 'true', text: first.text });
    expect(await filesIn('/formdata')).toEqual([expect.objectContaining({ name: 'form.txt', id: (JSON.parse(first.text) as { data: { id: string }[] }).data[0].id })]);
  });

  it('refuses a malformed key with a 400 that names the header, and makes no record of it', async () => {
    const res = await send('POST', '/drive/folders', { body: JSON.stringify({ path: '/bad-key' }), contentType: 'application/json', idempotencyKey: 'x'.repeat(256) });
    expect({ status: res.status, error: JSON.parse(res.text).error }).toEqual({ status: 400, error: expect.objectContaining({ code: 'bad_request', message: expect.stringContaining('Idempotency-Key') }) });
    expect((await send('GET', '/drive/list?folder=/bad-key')).status).toBe(404);
  });
});

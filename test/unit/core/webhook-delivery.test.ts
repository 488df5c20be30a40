import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '../../../client/src/webhook-verify';
import type { Change } from '../../../functions/core/change-source';
import { workDeliveries } from '../../../functions/core/delivery-worker';
import { DEFAULT_RETRY, type RetryPolicy, type WebhookRecord, deliveryView, dispatch, registerWebhook } from '../../../functions/core/webhooks';
import { webhookPoster } from '../../../functions/http/webhook-post';
import { MemoryChangeSource, MemoryFifoQueue, MemoryWebhookStore } from '../../support/webhook-ports';

// The webhooks end to end in one process (docs/change-feed-design.md, "Webhooks"): a memory log, the
// dispatcher, a FIFO queue on a clock the test drives, the worker, and a receiver on loopback reached over
// real HTTP. No test waits on the wall clock: the queue's clock jumps to the next visible message.

const DRIVE = 'd';
const START = Date.UTC(2026, 10, 27, 9, 0, 0);

interface Arrival {
  at: number;
  deliveryId: string;
  webhookId: string;
  rawBody: string;
  signature: string;
  status: number;
}

/** A receiver on 127.0.0.1: records each request and answers what `answer` decides. */
async function receiver(clock: { now: () => number }, answer: (deliveryId: string, attempt: number) => number): Promise<{ url: string; arrivals: Arrival[]; close: () => Promise<void> }> {
  const arrivals: Arrival[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const deliveryId = String(req.headers['drive-delivery-id']);
      const status = answer(deliveryId, arrivals.filter((a) => a.deliveryId === deliveryId).length + 1);
      arrivals.push({ at: clock.now(), deliveryId, webhookId: String(req.headers['drive-webhook-id']), rawBody: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['drive-signature']), status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, arrivals, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Everything a test wires: the ports, a clock it moves, and a pump that plays Lambda's FIFO event source. */
function world(policy: RetryPolicy = DEFAULT_RETRY) {
  let now = START;
  const clock = { now: () => now };
  const source = new MemoryChangeSource();
  const store = new MemoryWebhookStore();
  const queue = new MemoryFifoQueue(clock);
  const post = webhookPoster({ allowLoopback: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  /** Hands out messages until the queue is empty, moving the clock to the next visible message when none is; at most `maxRounds`. */
  const pump = async (maxRounds = 1000) => {
    for (let round = 0; round < maxRounds; round++) {
      const records = queue.receive();
      if (records.length === 0) {
        const next = queue.nextVisibleAt();
        if (next === undefined) return;
        now = Math.max(now, next);
        continue;
      }
      for (const record of records) {
        const failed = await workDeliveries({ store, post, hide: (handle, seconds) => queue.hide(handle, seconds) }, [record], { now: () => new Date(now), policy });
        if (!failed.includes(record.messageId)) queue.delete(record.messageId);
      }
    }
    throw new Error(`the queue did not drain in ${maxRounds} rounds`);
  };
  const register = (url: string, extra: { path?: string; types?: Change['type'][] } = {}) =>
    registerWebhook({ store, source, resolve: async () => [{ address: '127.0.0.1', family: 4 }] }, { drive: DRIVE, prefix: '/' }, { url, path: extra.path ?? '/', ...(extra.types ? { types: extra.types } : {}) }, { now: new Date(now), allowLoopback: true });
  return { clock, source, store, queue, pump, register, advance: (ms: number) => (now += ms) };
}

const file = (path: string) => ({ id: `id-${path}`, name: path.split('/').pop(), path, size: 1, created_at: new Date(START).toISOString() });

/** Eight changes over four paths, a move among them. */
function writeChanges(source: MemoryChangeSource): Change[] {
  const at = new Date(START).toISOString();
  return [
    source.append(DRIVE, { type: 'folder.created', path: '/a', at, folder: { id: 'fa', path: '/a' } }),
    source.append(DRIVE, { type: 'file.created', path: '/a/1.txt', at, file: file('/a/1.txt') }),
    source.append(DRIVE, { type: 'file.created', path: '/a/2.txt', at, file: file('/a/2.txt') }),
    source.append(DRIVE, { type: 'file.replaced', path: '/a/1.txt', at, file: file('/a/1.txt') }),
    source.append(DRIVE, { type: 'file.moved', path: '/a/3.txt', from: '/a/2.txt', at, file: file('/a/3.txt') }),
    source.append(DRIVE, { type: 'file.deleted', path: '/a/1.txt', at }),
    source.append(DRIVE, { type: 'folder.created', path: '/b', at, folder: { id: 'fb', path: '/b' } }),
    source.append(DRIVE, { type: 'file.created', path: '/b/4.txt', at, file: file('/b/4.txt') }),
  ];
}

describe('Webhooks: delivery to a receiver on loopback', () => {
  it('delivers every change once, signed, in feed order; a delivery answered 500 three times is retried with backoff before anything behind it', async () => {
    // Prepare: a webhook, then eight changes; the receiver fails the third change's first three attempts.
    const w = world();
    const r = await receiver(w.clock, (id, attempt) => (id.endsWith('.3') && attempt <= 3 ? 500 : 204));
    try {
      const hook: WebhookRecord = await w.register(r.url);
      const changes = writeChanges(w.source);

      // Act
      const queued = await dispatch(w, DRIVE, { now: new Date(w.clock.now()) });
      await w.pump();

      // Assess: every signature verifies at the time it was sent, with the webhook's secret.
      expect(queued).toBe(changes.length);
      for (const arrival of r.arrivals) expect(verify(arrival.rawBody, arrival.signature, hook.secret, arrival.at / 1000)).toBe(true);
      // Each change acknowledged exactly once, in the feed's order, with the contract's body.
      const acknowledged = r.arrivals.filter((a) => a.status < 300);
      expect(acknowledged.map((a) => a.deliveryId)).toEqual(changes.map((c) => `${hook.id}.${c.id}`));
      for (const [i, arrival] of acknowledged.entries()) {
        const body = JSON.parse(arrival.rawBody) as { id: string; webhook_id: string; change: Change; cursor: string };
        expect(body).toEqual({ id: arrival.deliveryId, webhook_id: hook.id, change: changes[i], cursor: expect.any(String) });
        expect(arrival.webhookId).toBe(hook.id);
        expect(JSON.parse(Buffer.from(body.cursor, 'base64url').toString('utf8'))).toMatchObject({ d: DRIVE, p: '/', s: Number(changes[i].id) });
      }
      // The third change: four attempts under one delivery id, 10 s, 30 s and 90 s apart, and nothing after it
      // arrived before its success.
      const third = r.arrivals.filter((a) => a.deliveryId === `${hook.id}.3`);
      expect(third.map((a) => a.status)).toEqual([500, 500, 500, 204]);
      expect(third.slice(1).map((a, i) => a.at - third[i].at)).toEqual([10_000, 30_000, 90_000]);
      const success = r.arrivals.indexOf(third[3]);
      expect(r.arrivals.slice(0, success).every((a) => Number(a.deliveryId.split('.')[1]) <= 3)).toBe(true);
      expect(r.arrivals).toHaveLength(changes.length + 3);
    } finally {
      await r.close();
    }
  });

  it('writes a delivery off as failed once an attempt 24 hours after the first fails, and goes on with the next', async () => {
    // Prepare: the receiver fails every attempt of change 2.
    const w = world();
    const r = await receiver(w.clock, (id) => (id.endsWith('.2') ? 503 : 200));
    try {
      const hook = await w.register(r.url);
      const changes = writeChanges(w.source);

      // Act
      await dispatch(w, DRIVE, { now: new Date(w.clock.now()) });
      await w.pump();

      // Assess: the failed delivery is listed with its attempts; its last attempt came 24 h or more after its
      // first, the one before it less; every other change was delivered after it.
      const failures = await w.store.failures(DRIVE, hook.id, 100);
      expect(failures.map(deliveryView)).toEqual([
        {
          id: `${hook.id}.2`,
          webhook_id: hook.id,
          status: 'failed',
          change: changes[1],
          attempts: expect.any(Number),
          last_status: 503,
          last_error: 'answered 503',
          first_attempt_at: expect.any(String),
          failed_at: expect.any(String),
        },
      ]);
      const attempts = r.arrivals.filter((a) => a.deliveryId === `${hook.id}.2`);
      expect(failures[0].attempts).toBe(attempts.length);
      const span = (i: number) => attempts[i].at - attempts[0].at;
      expect(span(attempts.length - 1)).toBeGreaterThanOrEqual(DEFAULT_RETRY.forMs);
      expect(span(attempts.length - 2)).toBeLessThan(DEFAULT_RETRY.forMs);
      // 10 s × 3ⁿ capped at 2 h: the gaps are the policy's, never more than the cap.
      const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i].at);
      expect(gaps.slice(0, 7)).toEqual([10_000, 30_000, 90_000, 270_000, 810_000, 2_430_000, 7_200_000]);
      expect(gaps.every((gap) => gap <= DEFAULT_RETRY.capMs)).toBe(true);
      expect(r.arrivals.filter((a) => a.status === 200).map((a) => a.deliveryId)).toEqual(changes.filter((c) => c.id !== '2').map((c) => `${hook.id}.${c.id}`));
      expect(r.arrivals.findIndex((a) => a.deliveryId === `${hook.id}.3`)).toBeGreaterThan(r.arrivals.indexOf(attempts[attempts.length - 1]));
    } finally {
      await r.close();
    }
  });

  it('sends a webhook scoped to /a with types only its changes, a move out of it as a delete at its source', async () => {
    // Prepare
    const w = world();
    const r = await receiver(w.clock, () => 200);
    try {
      await w.register(r.url, { path: '/a', types: ['file.created', 'file.deleted'] });
      const at = new Date(START).toISOString();
      w.source.append(DRIVE, { type: 'file.created', path: '/b/x', at, file: file('/b/x') });
      w.source.append(DRIVE, { type: 'file.moved', path: '/a/x', from: '/b/x', at, file: file('/a/x') });
      w.source.append(DRIVE, { type: 'file.replaced', path: '/a/x', at, file: file('/a/x') });
      w.source.append(DRIVE, { type: 'file.moved', path: '/c/x', from: '/a/x', at, file: file('/c/x') });

      // Act
      await dispatch(w, DRIVE, { now: new Date(w.clock.now()) });
      await w.pump();

      // Assess: the move in is a creation at /a/x, the move out a deletion at /a/x whose file stands at /a/x, as
      // the feed renders it for a follower of /a (functions/core/changes/feed.ts, inSubtree); nothing else.
      const got = r.arrivals.map((a) => (JSON.parse(a.rawBody) as { change: Change }).change);
      expect(got).toEqual([
        { id: '2', type: 'file.created', path: '/a/x', at, file: file('/a/x') },
        { id: '4', type: 'file.deleted', path: '/a/x', at, file: { ...file('/c/x'), name: 'x', path: '/a/x' } },
      ]);
    } finally {
      await r.close();
    }
  });
});

describe('Webhooks: the dispatcher', () => {
  it('sends a webhook only the changes after it was made', async () => {
    // Prepare: two changes before the webhook, one after.
    const w = world();
    const at = new Date(START).toISOString();
    w.source.append(DRIVE, { type: 'folder.created', path: '/old', at });
    w.source.append(DRIVE, { type: 'folder.created', path: '/old2', at });
    await w.register('http://127.0.0.1:9/never');
    w.source.append(DRIVE, { type: 'folder.created', path: '/new', at });

    // Act
    const queued = await dispatch(w, DRIVE, { now: new Date(START) });

    // Assess
    expect(queued).toBe(1);
    expect(w.queue.messages.map((m) => (JSON.parse(m.body) as { change: Change }).change.path)).toEqual(['/new']);
    expect(await w.store.position(DRIVE)).toBe(3);
  });

  it('queues each delivery once when a dispatcher died after sending and before advancing (the queue drops the repeat)', async () => {
    // Prepare: the first advance is lost, as if the dispatcher died there.
    const w = world();
    await w.register('http://127.0.0.1:9/never');
    writeChanges(w.source);
    const advance = w.store.advance.bind(w.store);
    let lose = true;
    w.store.advance = async (drive, from, to) => {
      if (lose) {
        lose = false;
        throw new Error('the dispatcher died');
      }
      return advance(drive, from, to);
    };

    // Act
    await expect(dispatch(w, DRIVE, { now: new Date(START) })).rejects.toThrow('died');
    await dispatch(w, DRIVE, { now: new Date(START) });

    // Assess: sent twice, queued once each.
    expect(w.queue.sends).toBe(16);
    expect(w.queue.messages.map((m) => m.id.split('.')[1])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
  });

  it('stops at a change not yet visible and takes it up on the next run, in order', async () => {
    // Prepare: position 3 caught mid-commit.
    const w = world();
    await w.register('http://127.0.0.1:9/never');
    writeChanges(w.source);
    w.source.hidden.add(3);

    // Act
    await dispatch(w, DRIVE, { now: new Date(START) });
    const first = w.queue.messages.map((m) => m.id.split('.')[1]);
    w.source.hidden.clear();
    await dispatch(w, DRIVE, { now: new Date(START) });

    // Assess
    expect(first).toEqual(['1', '2']);
    expect(w.queue.messages.map((m) => m.id.split('.')[1])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
  });

  it('drops the deliveries of a webhook deleted meanwhile', async () => {
    // Prepare
    const w = world();
    const r = await receiver(w.clock, () => 200);
    try {
      const hook = await w.register(r.url);
      writeChanges(w.source);
      await dispatch(w, DRIVE, { now: new Date(START) });

      // Act
      await w.store.remove(DRIVE, hook.id);
      await w.pump();

      // Assess
      expect(r.arrivals).toEqual([]);
      expect(w.queue.messages).toEqual([]);
    } finally {
      await r.close();
    }
  });
});

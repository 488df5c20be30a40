import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { jsonHandler } from '../../../functions/http/api-handler';
import { createGuard } from '../../../functions/http/guard';
import { ANSWER_WRITE_ATTEMPTS, backoffMs, fingerprintOf, scopeOf } from '../../../functions/http/idempotency';
import { DriveError } from '../../../functions/core/errors';
import {
  type IdempotencyStore,
  type IdempotentRequest,
  LEASE_MARGIN_MS,
  type StoredAnswer,
  type TakeOutcome,
  IDEMPOTENCY_TTL_MS,
  inProgressRetrySeconds,
  remembers,
} from '../../../functions/core/idempotency';
import type { Caller, RateLimiter } from '../../../functions/core/access';

/** The port in memory, honouring the DynamoDB adapter's conditions: a live record holds the key; a lapsed lease or an expired record does not. */
class MemoryIdempotencyStore implements IdempotencyStore {
  readonly records = new Map<string, { fingerprint: string; owner: string; leaseUntil: number; expiresAt: number; answer?: StoredAnswer }>();
  now = 1_800_000_000_000;

  async take(request: IdempotentRequest, leaseMs: number): Promise<TakeOutcome> {
    const id = `${request.scope}#${request.key}`;
    const held = this.records.get(id);
    if (held && held.expiresAt >= this.now && (held.answer || held.leaseUntil >= this.now)) {
      if (held.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
      return held.answer ? { kind: 'done', answer: held.answer } : { kind: 'running', leaseUntil: held.leaseUntil, now: this.now };
    }
    const owner = randomUUID();
    this.records.set(id, { fingerprint: request.fingerprint, owner, leaseUntil: this.now + leaseMs, expiresAt: this.now + IDEMPOTENCY_TTL_MS });
    return { kind: 'taken', owner, leaseUntil: this.now + leaseMs };
  }

  async complete(request: IdempotentRequest, owner: string, answer: StoredAnswer): Promise<boolean> {
    const held = this.records.get(`${request.scope}#${request.key}`);
    if (held?.owner !== owner) return false;
    held.answer = answer;
    return true;
  }

  async release(request: IdempotentRequest, owner: string): Promise<void> {
    const held = this.records.get(`${request.scope}#${request.key}`);
    if (held?.owner === owner && !held.answer) held.leaseUntil = 0;
  }
}

const caller: Caller = { drive: 'd1', keyId: 'k1', role: 'admin', prefix: '/' };
const admitted = async (_permission: unknown, _event: unknown, beside?: (who: Caller) => Promise<void>) => {
  await beside?.(caller);
  return { caller, headers: { 'RateLimit-Remaining': '9' } };
};

function eventOf(init: { body?: string; key?: string; query?: Record<string, string[]>; path?: string; requestId?: string } = {}): APIGatewayProxyEvent {
  return {
    resource: '/drive/folders',
    path: init.path ?? '/drive/folders',
    httpMethod: 'POST',
    headers: init.key === undefined ? {} : { 'Idempotency-Key': init.key },
    multiValueHeaders: {},
    body: init.body ?? '{"path":"/a"}',
    isBase64Encoded: false,
    queryStringParameters: null,
    multiValueQueryStringParameters: init.query ?? null,
    pathParameters: null,
    stageVariables: null,
    requestContext: { requestId: init.requestId ?? randomUUID() } as APIGatewayProxyEvent['requestContext'],
  };
}

beforeEach(() => jest.spyOn(process.stdout, 'write').mockImplementation(() => true));
afterEach(() => jest.restoreAllMocks());

describe('Function: jsonHandler with an idempotency store', () => {
  it('runs the handler once for the same request, and replays its answer with Idempotent-Replayed and the retry\'s own headers', async () => {
    // Prepare
    const store = new MemoryIdempotencyStore();
    const operation = jest.fn(async () => ({ made: true }));
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    // Act
    const first = await handler(eventOf({ key: 'k-1', requestId: 'r-1' }));
    const again = await handler(eventOf({ key: 'k-1', requestId: 'r-2' }));

    // Assess
    expect(operation).toHaveBeenCalledTimes(1);
    expect(handler.idempotent).toBe(true);
    expect(again).toEqual({ statusCode: 200, body: first.body, headers: expect.objectContaining({ 'Idempotent-Replayed': 'true', 'X-Request-Id': 'r-2', 'RateLimit-Remaining': '9', 'Content-Type': 'application/json; charset=utf-8' }) });
    expect(first.headers).not.toHaveProperty('Idempotent-Replayed');
  });

  it('makes no record and runs every time without the header', async () => {
    const store = new MemoryIdempotencyStore();
    const operation = jest.fn(async () => ({}));
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    await handler(eventOf());
    await handler(eventOf());

    expect(operation).toHaveBeenCalledTimes(2);
    expect(store.records.size).toBe(0);
  });

  it('answers 422 (reason idempotency_key_reused) for another body under the same key, without running the handler', async () => {
    const store = new MemoryIdempotencyStore();
    const operation = jest.fn(async () => ({}));
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    await handler(eventOf({ key: 'k-2', body: '{"path":"/a"}' }));
    const other = await handler(eventOf({ key: 'k-2', body: '{"path":"/b"}' }));

    expect(operation).toHaveBeenCalledTimes(1);
    expect(other.statusCode).toBe(422);
    expect(JSON.parse(other.body).error).toMatchObject({ code: 'validation_error', reason: 'idempotency_key_reused' });
  });

  it('answers 409 (reason idempotency_in_progress) with Retry-After while the first runs, and its answer once it ends', async () => {
    // Prepare: the first request waits inside its handler until released
    const store = new MemoryIdempotencyStore();
    let finish!: () => void;
    const running = new Promise<void>((resolve) => (finish = resolve));
    const operation = jest.fn(async () => {
      await running;
      return { done: 1 };
    });
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    // Act
    const first = handler(eventOf({ key: 'k-3' }));
    await new Promise((resolve) => setImmediate(resolve));
    const during = await handler(eventOf({ key: 'k-3' }));
    finish();
    await first;
    const after = await handler(eventOf({ key: 'k-3' }));

    // Assess
    expect({ status: during.statusCode, retryAfter: during.headers?.['Retry-After'], reason: JSON.parse(during.body).error.reason }).toEqual({ status: 409, retryAfter: '2', reason: 'idempotency_in_progress' });
    expect({ status: after.statusCode, replayed: after.headers?.['Idempotent-Replayed'] }).toEqual({ status: 200, replayed: 'true' });
    expect(operation).toHaveBeenCalledTimes(1);
  });

  it('does not keep a 5xx or a 429: the key is free again and a retry runs anew', async () => {
    const store = new MemoryIdempotencyStore();
    const outcomes = [new Error('outage'), new DriveError('rate_limited', 'slow down', { 'Retry-After': '3' }), { ok: true }];
    const operation = jest.fn(async () => {
      const next = outcomes.shift();
      if (next instanceof Error) throw next;
      return next;
    });
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await handler(eventOf({ key: 'k-4' }))).statusCode);

    expect(statuses).toEqual([500, 429, 200]);
    expect(operation).toHaveBeenCalledTimes(3);
  });

  it('keeps a 4xx of the handler and replays it', async () => {
    const store = new MemoryIdempotencyStore();
    const operation = jest.fn(async () => {
      throw new DriveError('not_found', 'no folder /x');
    });
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    const first = await handler(eventOf({ key: 'k-5' }));
    const again = await handler(eventOf({ key: 'k-5' }));

    expect([first.statusCode, again.statusCode, again.headers?.['Idempotent-Replayed']]).toEqual([404, 404, 'true']);
    expect(operation).toHaveBeenCalledTimes(1);
  });

  it('holds the key for the function\'s remaining time and the margin; after the lease a retry runs anew', async () => {
    const store = new MemoryIdempotencyStore();
    const operation = jest.fn(async () => new Promise<never>(() => undefined));
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    void handler(eventOf({ key: 'k-6' }), { getRemainingTimeInMillis: () => 29_000 } as never);
    await new Promise((resolve) => setImmediate(resolve));
    const record = [...store.records.values()][0];

    expect(record.leaseUntil).toBe(store.now + 29_000 + LEASE_MARGIN_MS);
    store.now = record.leaseUntil + 1;
    const ran = jest.fn(async () => ({ again: true }));
    const retry = await jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, ran)(eventOf({ key: 'k-6' }));
    expect([retry.statusCode, ran.mock.calls.length]).toEqual([200, 1]);
  });

  it('tries again to keep the answer of work done when the write fails, and replays it once kept', async () => {
    // Prepare: the table refuses the first two writes of the answer (after the SDK's own retries)
    const store = new MemoryIdempotencyStore();
    const complete = jest.spyOn(store, 'complete');
    complete.mockRejectedValueOnce(new Error('ProvisionedThroughputExceededException')).mockRejectedValueOnce(new Error('ProvisionedThroughputExceededException'));
    const operation = jest.fn(async () => ({ made: true }));
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    // Act
    const first = await handler(eventOf({ key: 'k-w1' }));
    const retry = await handler(eventOf({ key: 'k-w1' }));

    // Assess: three writes, the third kept; the retry is the first answer and the work ran once
    expect(complete).toHaveBeenCalledTimes(3);
    expect({ status: retry.statusCode, body: retry.body, replayed: retry.headers?.['Idempotent-Replayed'] }).toEqual({ status: first.statusCode, body: first.body, replayed: 'true' });
    expect(operation).toHaveBeenCalledTimes(1);
  });

  it('gives up after its attempts, answers the work\'s answer anyway, and a retry after the lease runs anew', async () => {
    const store = new MemoryIdempotencyStore();
    const complete = jest.spyOn(store, 'complete').mockRejectedValue(new Error('InternalServerError'));
    const operation = jest.fn(async () => ({ made: true }));
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: store }, operation);

    const first = await handler(eventOf({ key: 'k-w2' }), { getRemainingTimeInMillis: () => 29_000 } as never);
    const writes = complete.mock.calls.length;
    const during = await handler(eventOf({ key: 'k-w2' }));
    store.now += 29_000 + LEASE_MARGIN_MS + 1;
    const after = await handler(eventOf({ key: 'k-w2' }));

    // The client of the first is told what was done; a retry within the lease waits; one after it runs again
    expect(first.statusCode).toBe(200);
    expect(writes).toBe(ANSWER_WRITE_ATTEMPTS);
    expect([during.statusCode, JSON.parse(during.body).error.reason]).toEqual([409, 'idempotency_in_progress']);
    expect([after.statusCode, operation.mock.calls.length]).toEqual([200, 2]);
  });

  it('answers 400 naming the header for a key that is empty, too long or not printable ASCII', async () => {
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {}, idempotency: new MemoryIdempotencyStore() }, async () => ({}));
    for (const key of ['', 'x'.repeat(256), 'tab\tkey', 'clé']) {
      const res = await handler(eventOf({ key }));
      expect({ key, status: res.statusCode, message: JSON.parse(res.body).error.message }).toEqual({ key, status: 400, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' });
    }
    expect((await handler(eventOf({ key: 'x'.repeat(255) }))).statusCode).toBe(200);
  });

  it('frees the key when the rate-limit bucket taken beside it refuses the request', async () => {
    // Prepare: a real guard whose bucket is empty
    const store = new MemoryIdempotencyStore();
    const limiter: RateLimiter = { take: async () => ({ allowed: false, limit: 1, remaining: 0, resetSeconds: 5, retryAfterSeconds: 5 }) };
    const keys = { find: async () => caller, touch: async () => undefined };
    const guard = createGuard({ keys, limiter, limits: { 'create-folder': 1 } as never, keyCacheMs: 0 });
    const event = { ...eventOf({ key: 'k-7' }), headers: { 'Idempotency-Key': 'k-7', Authorization: 'Bearer some-secret-key-value' } };

    // Act
    const refused = await jsonHandler({ permission: 'create-folder', guard, stores: {}, idempotency: store }, async () => ({}))(event);

    // Assess
    expect(refused.statusCode).toBe(429);
    expect([...store.records.values()][0].leaseUntil).toBe(0);
  });
});

describe('Function: fingerprintOf', () => {
  it('is the same for the same method, path, query (in any order) and body, and differs when any of them does', () => {
    const base = fingerprintOf(eventOf({ query: { a: ['1'], b: ['2'] } }));
    expect(fingerprintOf(eventOf({ query: { b: ['2'], a: ['1'] } }))).toBe(base);
    expect(fingerprintOf(eventOf({ query: { a: ['1'], b: ['3'] } }))).not.toBe(base);
    expect(fingerprintOf(eventOf({ query: { a: ['1'], b: ['2'] }, body: '{"path":"/b"}' }))).not.toBe(base);
    expect(fingerprintOf(eventOf({ query: { a: ['1'], b: ['2'] }, path: '/drive/files' }))).not.toBe(base);
  });

  /** An upload's event: `parts` (name, filename, content) as multipart/form-data with `boundary`. */
  function formEvent(boundary: string, parts: [string, string, string][], quoted = false): APIGatewayProxyEvent {
    const body = parts.map(([name, filename, content]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n\r\n${content}\r\n`).join('') + `--${boundary}--\r\n`;
    const contentType = `multipart/form-data; boundary=${quoted ? `"${boundary}"` : boundary}`;
    return { ...eventOf({ body }), path: '/drive/upload', headers: { 'Content-Type': contentType }, isBase64Encoded: false };
  }

  it('is the same for a multipart body whose parts are the same under another boundary (a FormData built again)', () => {
    const parts: [string, string, string][] = [
      ['files', 'a.txt', 'alpha'],
      ['files', 'b.txt', 'beta\r\n--not-a-delimiter'],
    ];
    const base = fingerprintOf(formEvent('----formdata-undici-0123456789', parts));

    expect(fingerprintOf(formEvent('----formdata-undici-9876543210', parts))).toBe(base);
    expect(fingerprintOf(formEvent('x', parts, true))).toBe(base);
  });

  it('differs for a multipart body whose parts differ in any byte, their order or their number', () => {
    const parts: [string, string, string][] = [
      ['files', 'a.txt', 'alpha'],
      ['files', 'b.txt', 'beta'],
    ];
    const base = fingerprintOf(formEvent('one', parts));
    const others = [
      [['files', 'a.txt', 'alphA'], parts[1]],
      [parts[0], ['files', 'c.txt', 'beta']],
      [parts[1], parts[0]],
      [parts[0]],
      [['files', 'a.txt', 'alphabeta']],
    ] as [string, string, string][][];

    expect(others.map((other) => fingerprintOf(formEvent('two', other)))).not.toContain(base);
    // The same bytes sent as another type are another body: the raw bytes are hashed, not the parts.
    expect(fingerprintOf({ ...formEvent('one', parts), headers: { 'Content-Type': 'application/octet-stream' } })).not.toBe(base);
  });
});

describe('Function: scopeOf', () => {
  const minted: Caller = { keyId: 'a1', drive: 'default', role: 'upload-only', prefix: '/ingest', trustId: 'f00d', subject: 'repo:acme/etl:ref:refs/heads/main' };

  it('names a minted key\'s records by its rule and subject, so a key minted anew for the same job shares them', () => {
    expect(scopeOf({ ...minted, keyId: 'b2' })).toBe(scopeOf(minted));
    expect(scopeOf(minted)).toMatch(/^job#f00d#[0-9a-f]{32}#[0-9a-f]{16}$/);
  });

  it('never shares them with another subject, another rule, another reach, or an ordinary key of the same id', () => {
    const others = [
      { ...minted, subject: 'repo:acme/etl:ref:refs/heads/dev' },
      { ...minted, trustId: 'beef' },
      { ...minted, prefix: '/other' },
      { keyId: 'a1', drive: 'default', role: 'upload-only' as const, prefix: '/ingest' },
    ];
    expect(new Set([minted, ...others].map(scopeOf)).size).toBe(5);
  });
});

describe('Function: backoffMs', () => {
  it('waits as the SDK\'s standard strategy does: full jitter below 100 ms doubling per attempt, at most 20 s', () => {
    expect([1, 2, 3, 20].map((attempt) => backoffMs(attempt, () => 0.999_999))).toEqual([99, 199, 399, 19_999]);
    expect(backoffMs(3, () => 0)).toBe(0);
  });
});

describe('Function: remembers', () => {
  it('keeps what the handler answered, but a 5xx, a 429, an answer with Retry-After and a 409 upload_busy', () => {
    expect(remembers({ statusCode: 200, headers: {} })).toBe(true);
    expect(remembers({ statusCode: 202, headers: { Location: '/drive/jobs/1' } })).toBe(true);
    expect(remembers({ statusCode: 404, headers: {} })).toBe(true);
    expect(remembers({ statusCode: 500, headers: {} })).toBe(false);
    expect(remembers({ statusCode: 503, headers: {} })).toBe(false);
    expect(remembers({ statusCode: 429, headers: {} })).toBe(false);
    expect(remembers({ statusCode: 409, headers: { 'retry-after': '1' } })).toBe(false);
    expect(remembers({ statusCode: 409, headers: {} }, 'upload_busy')).toBe(false);
  });
});

describe('Function: inProgressRetrySeconds', () => {
  it('is 1 or 2 seconds, never past the lease', () => {
    expect(inProgressRetrySeconds(100_000, 0)).toBe(2);
    expect(inProgressRetrySeconds(1_500, 0)).toBe(2);
    expect(inProgressRetrySeconds(500, 0)).toBe(1);
    expect(inProgressRetrySeconds(0, 10)).toBe(1);
  });
});

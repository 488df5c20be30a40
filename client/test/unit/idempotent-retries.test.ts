import { BatchSizer } from '../../src/batch-packing';
import { retryLine } from '../../src/cli/main';
import { DEFAULT_RETRY, type RetryNotice, Transport } from '../../src/transport';
import { FakeClock, fakeFetch, jsonResponse, networkFailure } from '../support/fakes';

const BASE = 'http://drive.test/v1';
const inProgress = () => jsonResponse(409, { error: { code: 'conflict', message: 'still running', reason: 'idempotency_in_progress' } }, { 'Retry-After': '2' });

function transportWith(fetcher: typeof fetch, notices: RetryNotice[] = [], clock = new FakeClock()) {
  return new Transport({ baseUrl: BASE, apiKey: 'k3y', fetch: fetcher, retry: DEFAULT_RETRY, clock, random: () => 0.5, onRetry: (notice) => notices.push(notice) });
}

const createFolder = (transport: Transport) =>
  transport.send({ method: 'POST', url: transport.url('/drive/folders'), bucket: 'create-folder', headers: { 'Content-Type': 'application/json' }, body: '{"path":"/a"}' });

describe('Class: Transport (Idempotency-Key)', () => {
  it('sends one Idempotency-Key with every attempt of a mutating call, after a lost answer and a 504 alike', async () => {
    // Prepare
    const fetcher = fakeFetch((_, i) => {
      if (i === 0) throw networkFailure('ECONNRESET');
      return i === 1 ? jsonResponse(504, { message: 'Endpoint request timed out' }) : jsonResponse(200, { data: {} }, { 'Idempotent-Replayed': 'true' });
    });
    const transport = transportWith(fetcher);

    // Act
    await createFolder(transport);
    await createFolder(transport);

    // Assess
    const keys = fetcher.requests.map((request) => request.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[0], keys[0]]);
    expect(keys[3]).not.toBe(keys[0]);
  });

  it('sends none with a read, nor with the keyless token exchange; keeps one the caller gives', async () => {
    const fetcher = fakeFetch(() => jsonResponse(200, { data: {} }));
    const transport = transportWith(fetcher);

    await transport.send({ method: 'GET', url: transport.url('/drive/list'), bucket: 'list' });
    await transport.send({ method: 'POST', url: transport.url('/drive/token'), bucket: 'token', body: '{}' });
    await transport.send({ method: 'POST', url: transport.url('/drive/move'), bucket: 'files', body: '{}', idempotencyKey: 'job-42-move' });

    expect(fetcher.requests.map((request) => request.headers.get('idempotency-key'))).toEqual([null, null, 'job-42-move']);
  });

  it('waits out 409 idempotency_in_progress with Retry-After and sends the same key again, telling each retry', async () => {
    // Prepare
    const clock = new FakeClock();
    const notices: RetryNotice[] = [];
    const fetcher = fakeFetch((_, i) => (i < 2 ? inProgress() : jsonResponse(200, { data: { id: 'f' } }, { 'Idempotent-Replayed': 'true' })));
    const transport = transportWith(fetcher, notices, clock);

    // Act
    const { response } = await createFolder(transport);

    // Assess: 2 s plus a twentieth at random 0.5
    expect(response.status).toBe(200);
    expect(clock.sleeps).toEqual([2100, 2100]);
    expect(new Set(fetcher.requests.map((request) => request.headers.get('idempotency-key'))).size).toBe(1);
    expect(notices).toEqual([
      { method: 'POST', path: '/v1/drive/folders', url: 'http://drive.test/v1/drive/folders', attempt: 2, reason: 'an earlier attempt is still running on the server (409)', waitMs: 2100 },
      { method: 'POST', path: '/v1/drive/folders', url: 'http://drive.test/v1/drive/folders', attempt: 3, reason: 'an earlier attempt is still running on the server (409)', waitMs: 2100 },
    ]);
  });

  it('passes on any other 409 whole, unretried', async () => {
    const fetcher = fakeFetch(() => jsonResponse(409, { error: { code: 'conflict', message: 'a file is at /a' } }));
    const { response } = await createFolder(transportWith(fetcher));
    expect(fetcher.requests).toHaveLength(1);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('a file is at /a');
  });

  it('tells a retry after a 504 and after no answer, with the attempt and the reason', async () => {
    const notices: RetryNotice[] = [];
    const fetcher = fakeFetch((_, i) => {
      if (i === 0) return jsonResponse(504, {});
      if (i === 1) throw networkFailure('ECONNRESET');
      return jsonResponse(200, { data: {} });
    });
    await createFolder(transportWith(fetcher, notices));
    expect(notices.map(({ attempt, reason }) => ({ attempt, reason }))).toEqual([
      { attempt: 2, reason: 'the gateway timed out (504)' },
      { attempt: 3, reason: 'no answer (ECONNRESET)' },
    ]);
    expect(notices[0].path).toBe('/v1/drive/folders');
    expect(retryLine('upload', notices[0])).toBe(`drive upload: POST ${notices[0].url}: attempt 2 of ${DEFAULT_RETRY.maxRetries + 1} in ${(notices[0].waitMs / 1000).toFixed(1)} s (the gateway timed out (504))`);
  });
});

describe('Class: BatchSizer', () => {
  const hard = { maxFiles: 1000, maxBytes: 4_500_000 };

  it('starts at 100 files and the byte limit', () => {
    expect(new BatchSizer(hard).limits()).toEqual({ maxFiles: 100, maxBytes: 4_500_000 });
  });

  it('grows a limit a fast request filled, at most doubling, up to the hard limit', () => {
    const sizer = new BatchSizer(hard, 10_000);
    sizer.observe(100, 100 * 16, 1_000);
    expect(sizer.limits().maxFiles).toBe(200);
    sizer.observe(200, 200 * 16, 8_000);
    expect(sizer.limits().maxFiles).toBe(250);
    for (let i = 0; i < 10; i++) sizer.observe(sizer.limits().maxFiles, 16, 100);
    expect(sizer.limits().maxFiles).toBe(1000);
  });

  it('shrinks both limits after a slow request, to what would have taken the target, at most to a quarter', () => {
    const sizer = new BatchSizer(hard, 10_000, 1000);
    // Issue 26's host: 1,000 files in 55 s
    sizer.observe(1000, 4_000_000, 55_000);
    expect(sizer.limits()).toEqual({ maxFiles: 250, maxBytes: 1_000_000 });
    sizer.observe(250, 1_000_000, 20_000);
    expect(sizer.limits()).toEqual({ maxFiles: 125, maxBytes: 500_000 });
  });

  it('does not grow a limit the request did not come near', () => {
    const sizer = new BatchSizer(hard, 10_000);
    sizer.observe(3, 4_400_000, 1_000);
    expect(sizer.limits()).toEqual({ maxFiles: 100, maxBytes: 4_500_000 });
  });

  it('fits the files that keep within the limits, one at least', () => {
    const sizer = new BatchSizer({ maxFiles: 3, maxBytes: 100 }, 10_000);
    expect(sizer.fit([40, 40, 40, 40])).toBe(2);
    expect(sizer.fit([10, 10, 10, 10])).toBe(3);
    expect(sizer.fit([500, 1])).toBe(1);
  });
});

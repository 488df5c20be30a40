import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const KEY = 'limits-key-29hVHaTbDrEgNFVFcigNCYZW';
const OTHER = 'limits-other-key-ace963cW1zaYDEO7Y6';
const SIGNER = 'limits-signer-key-IYuE7c5LMhXfeSTVF';

let host: RunningHost;

beforeAll(async () => {
  // No DRIVE_RATE_LIMITS: the spec's limits. The host's clock stands still (DRIVE_LOCAL_CLOCK=frozen): no
  // bucket refills during the test, so every count below is exact however slow the machine is. Refilling
  // over time is the limiter's unit test (test/unit/aws/dynamo-rate-limiter.test.ts).
  host = await startHost({ DRIVE_API_KEYS: `limits:${KEY},limits:${OTHER},limits:${SIGNER}`, DRIVE_LOCAL_CLOCK: 'frozen' });
});

afterAll(() => stopHost(host));

/** Sends `count` requests, `parallel` at a time, and returns the responses. */
async function burst(count: number, parallel: number, send: () => Promise<Response>): Promise<Response[]> {
  const responses: Response[] = [];
  for (let i = 0; i < count; i += parallel) {
    responses.push(...(await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, send))));
  }
  return responses;
}

describe('per-key, per-endpoint token buckets (spec section 8)', () => {
  it('turns the excess of a burst over DELETE /drive/folders (50 per minute) into 429s', async () => {
    const drive = new DriveClient(host.url, KEY);
    const responses = await burst(80, 8, () => drive.deleteFolder({ path: '/nothing-here' }));

    const limited = responses.filter((r) => r.status === 429);
    expect(responses.filter((r) => r.status === 404)).toHaveLength(50);
    expect(limited).toHaveLength(30);

    const first = limited[0];
    const retryAfter = first.headers.get('retry-after')!;
    expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
    const body = (await first.json()) as ErrorJson;
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.message).toContain(`${retryAfter} second`);
    expect(first.headers.get('ratelimit-limit')).toBe('50');
    expect(first.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('keeps separate buckets for other endpoints and other keys', async () => {
    const drive = new DriveClient(host.url, KEY);
    const other = new DriveClient(host.url, OTHER);

    // The bucket the first test emptied stays empty.
    expect((await drive.deleteFolder({ path: '/nothing-here' })).status).toBe(429);
    expect((await other.deleteFolder({ path: '/nothing-here' })).status).toBe(404);
    const list = await drive.list();
    expect(list.status).toBe(200);
    expect(list.headers.get('ratelimit-limit')).toBe('300');
  });

  it('sends RateLimit headers on every response and counts down', async () => {
    const drive = new DriveClient(host.url, OTHER);
    const first = await drive.createFolder({ path: '/paced' });
    const second = await drive.createFolder({ path: '/paced' });

    expect(first.headers.get('ratelimit-limit')).toBe('100');
    const remaining = [first, second].map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining).toEqual([99, 98]);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);

    const download = await drive.download({ path: '/missing' });
    expect(download.status).toBe(404);
    expect(download.headers.get('ratelimit-limit')).toBe('500');
  });

  it('counts every request to an endpoint, uploads included, at the spec limit of 100', async () => {
    const drive = new DriveClient(host.url, OTHER);
    const responses = await burst(110, 10, () => drive.upload([{ data: 'x', filename: 'limited.txt' }]));
    const limited = responses.filter((r) => r.status === 429);
    expect(limited).toHaveLength(10);
    const rejected = await json<ErrorJson>(limited[0]);
    expect(rejected.body.error.code).toBe('rate_limited');
  });

  it('charges a page of part URLs by the URLs it signs: one upload token per 50 asked for', async () => {
    const drive = new DriveClient(host.url, SIGNER);
    const MiB = 1024 * 1024;
    const started = await json<{ data: { upload_id: string } }>(
      drive.request('POST', '/drive/uploads', { body: JSON.stringify({ path: '/signed/huge.bin', size: 10_000 * 8 * MiB }), headers: { 'Content-Type': 'application/json' } }),
    );
    expect(started.status).toBe(200); // 1 token of the upload bucket's 100
    const route = `/drive/uploads/${started.body.data.upload_id}/parts`;

    const small = await drive.request('GET', `${route}?from=101`);
    const page = (await small.json()) as { data: { parts: unknown[] } };
    expect({ status: small.status, urls: page.data.parts.length, remaining: small.headers.get('ratelimit-remaining') }).toEqual({ status: 200, urls: 50, remaining: '98' });

    // 20 tokens a page of 1,000: the 98 left pay for four; then the bucket refuses, as ten pages once took 10.
    const pages: { status: number; retryAfter: string | null; code?: string }[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await drive.request('GET', `${route}?from=${1001 + i * 1000}&limit=1000`);
      const body = (await res.json()) as Partial<ErrorJson>;
      pages.push({ status: res.status, retryAfter: res.headers.get('retry-after'), code: body.error?.code });
    }
    expect(pages.map((page) => page.status)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(pages[4]).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[1-9][0-9]*$/), code: 'rate_limited' });
  });
});

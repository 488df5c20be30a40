import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const KEY = 'limits-key-0123456789abcdefghijklmn';
const OTHER = 'limits-other-key-0123456789abcdefgh';

let host: RunningHost;

beforeAll(async () => {
  // No DRIVE_RATE_LIMITS: the spec's limits.
  host = await startHost({ DRIVE_API_KEYS: `limits:${KEY},limits:${OTHER}` });
});

afterAll(() => stopHost(host));

/** Sends `count` requests, `parallel` at a time, and returns the responses and how long it took. */
async function burst(count: number, parallel: number, send: () => Promise<Response>): Promise<{ responses: Response[]; seconds: number }> {
  const started = Date.now();
  const responses: Response[] = [];
  for (let i = 0; i < count; i += parallel) {
    responses.push(...(await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, send))));
  }
  return { responses, seconds: (Date.now() - started) / 1000 };
}

describe('per-key, per-endpoint token buckets (spec section 8)', () => {
  it('turns the excess of a burst over DELETE /drive/folders (50 per minute) into 429s', async () => {
    const drive = new DriveClient(host.url, KEY);
    const { responses, seconds } = await burst(80, 8, () => drive.deleteFolder({ path: '/nothing-here' }));

    const limited = responses.filter((r) => r.status === 429);
    const refilled = Math.ceil((seconds * 50) / 60);
    expect(responses.filter((r) => r.status === 404).length + limited.length).toBe(80);
    expect(limited.length).toBeLessThanOrEqual(30);
    expect(limited.length).toBeGreaterThanOrEqual(30 - refilled - 1);

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

    // Empty the bucket again (tokens refill at 50 a minute while other tests run), then compare at once.
    let status = 0;
    for (let i = 0; i < 60 && status !== 429; i++) status = (await drive.deleteFolder({ path: '/nothing-here' })).status;
    expect(status).toBe(429);
    expect((await other.deleteFolder({ path: '/nothing-here' })).status).toBe(404);
    const list = await drive.list();
    expect(list.status).toBe(200);
    expect(list.headers.get('ratelimit-limit')).toBe('300');
  });

  it('sends RateLimit headers on every response and counts down', async () => {
    const drive = new DriveClient(host.url, OTHER);
    const started = Date.now();
    const first = await drive.createFolder({ path: '/paced' });
    const second = await drive.createFolder({ path: '/paced' });
    // 100 a minute refill one token every 0.6 s: a slow machine may hand one back between the two.
    const refilled = Math.floor((Date.now() - started) / 600);

    expect(first.headers.get('ratelimit-limit')).toBe('100');
    const remaining = [first, second].map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining[0]).toBeGreaterThanOrEqual(98);
    expect(remaining[1]).toBeLessThanOrEqual(remaining[0] - 1 + refilled);
    expect(remaining[1]).toBeGreaterThanOrEqual(remaining[0] - 1);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);

    const download = await drive.download({ path: '/missing' });
    expect(download.status).toBe(404);
    expect(download.headers.get('ratelimit-limit')).toBe('500');
  });

  it('counts every request to an endpoint, uploads included, at the spec limit of 100', async () => {
    const drive = new DriveClient(host.url, OTHER);
    const { responses, seconds } = await burst(110, 10, () => drive.upload([{ data: 'x', filename: 'limited.txt' }]));
    const limited = responses.filter((r) => r.status === 429).length;
    expect(limited).toBeLessThanOrEqual(10);
    expect(limited).toBeGreaterThanOrEqual(10 - Math.ceil((seconds * 100) / 60) - 1);
    const rejected = await json<ErrorJson>(responses.find((r) => r.status === 429) ?? drive.upload([{ data: 'x', filename: 'x' }]));
    expect(rejected.body.error.code).toBe('rate_limited');
  });
});

import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const KEY = 'limits-key-0123456789abcdefghijklmn';
const OTHER = 'limits-other-key-0123456789abcdefgh';

let host: RunningHost;

beforeAll(async () => {
  // No DRIVE_RATE_LIMITS: the spec's limits. The host's clock stands still (DRIVE_LOCAL_CLOCK=frozen): no
  // bucket refills during the test, so every count below is exact however slow the machine is. Refilling
  // over time is the limiter's unit test (test/unit/aws/dynamo-rate-limiter.test.ts).
  host = await startHost({ DRIVE_API_KEYS: `limits:${KEY},limits:${OTHER}`, DRIVE_LOCAL_CLOCK: 'frozen' });
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
});

import { faultControls } from '../../../test/support/fault-host';
import { type RunningHost, startHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import type { RetryNotice } from '../../src/transport';
import { networkFailure } from '../support/fakes';

// Issue 26's failure, end to end: a batch whose answer never reaches the client. The client retries with the
// same Idempotency-Key, waits while the first attempt still runs (409), and gets its answer: one file stored,
// reported uploaded, and every retry told. The first attempt is held by the fault host, never by timing.

const KEY = 'client-idem-key-4Gt8Wq2Zn6Rb9Mx3Lp7V';

let host: RunningHost;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `idem:${KEY}`, DRIVE_RATE_LIMITS: 'off' }, undefined, 'test/support/fault-host.ts');
});

afterAll(() => stopHost(host));

describe('Drive client: a retry after a lost answer', () => {
  it('stores the batch once and reports it uploaded, saying each retry', async () => {
    // Prepare: the first upload attempt reaches the host and is held there; its answer is "lost" (the
    // client's fetch fails as a reset socket would). The first retry's 409 lets the held attempt go on.
    const faults = faultControls(host.dataDir);
    await faults.inject([{ command: 'PutObject', times: 1, mode: 'hold' }]);
    let uploads = 0;
    const answers: { status: number; replayed: string | null }[] = [];
    const lost = new AbortController();
    const fetcher: typeof fetch = async (input, init) => {
      if (!String(input).endsWith('/drive/upload')) return fetch(input, init);
      const attempt = uploads++;
      if (attempt === 0) {
        void fetch(input, { ...init, signal: lost.signal }).catch(() => undefined);
        await faults.held();
        lost.abort();
        throw networkFailure('ECONNRESET');
      }
      const response = await fetch(input, init);
      answers.push({ status: response.status, replayed: response.headers.get('idempotent-replayed') });
      if (attempt === 1) await faults.release();
      return response;
    };
    const notices: RetryNotice[] = [];
    const drive = new Drive({ baseUrl: host.url, apiKey: KEY, fetch: fetcher, onRetry: (notice) => notices.push(notice), retry: { baseDelayMs: 1 } });

    // Act
    const report = await drive.uploadMany([
      { data: 'first', path: '/retried/a.txt' },
      { data: 'second', path: '/retried/b.txt' },
    ]);

    // Assess
    expect(report.failed).toEqual([]);
    expect(report.uploaded.map((u) => u.file.path).sort()).toEqual(['/retried/a.txt', '/retried/b.txt']);
    const listing = await drive.list('/retried');
    expect(listing.files.map((file) => [file.name, file.id]).sort()).toEqual(report.uploaded.map((u) => [u.file.name, u.file.id]).sort());
    // The last answer is the first attempt's, replayed: the work was done once.
    expect(answers.at(-1)).toEqual({ status: 200, replayed: 'true' });
    expect(answers.slice(0, -1).every((answer) => answer.status === 409)).toBe(true);
    expect(notices[0]).toMatchObject({ method: 'POST', path: '/drive/upload', attempt: 2, reason: 'no answer (ECONNRESET)' });
    expect(notices[1]).toMatchObject({ attempt: 3, reason: 'an earlier attempt is still running on the server (409)' });
    await faults.reset();
  });
});

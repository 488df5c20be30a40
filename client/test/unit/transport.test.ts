import { DriveError } from '../../src/errors';
import { DEFAULT_RETRY, Transport } from '../../src/transport';
import { FakeClock, fakeFetch, jsonResponse, networkFailure } from '../support/fakes';

const BASE = 'http://drive.test/v1';

function transportWith(fetcher: typeof fetch, clock = new FakeClock()) {
  return new Transport({ baseUrl: BASE, apiKey: 'k3y', fetch: fetcher, retry: DEFAULT_RETRY, clock, random: () => 0.5 });
}

const list = (transport: Transport, signal?: AbortSignal) => transport.send({ method: 'GET', url: transport.url('/drive/list', { folder: '/a b' }), bucket: 'list', signal });

describe('Class: Transport', () => {
  describe('Method: url', () => {
    it('joins the base URL (stage path included) and the route, and drops undefined query values', () => {
      const transport = transportWith(fakeFetch(() => jsonResponse(200, {})));
      expect(transport.url('/drive/list', { folder: '/a b&c', recursive: undefined })).toBe(`${BASE}/drive/list?folder=%2Fa+b%26c`);
      expect(new Transport({ baseUrl: `${BASE}/`, apiKey: 'k', fetch, retry: DEFAULT_RETRY }).url('/drive/upload')).toBe(`${BASE}/drive/upload`);
    });
  });

  describe('Method: send', () => {
    it('sends the API key to the API, and none to a presigned storage URL', async () => {
      // Prepare
      const fetcher = fakeFetch(() => jsonResponse(200, {}));
      const transport = transportWith(fetcher);

      // Act
      await list(transport);
      await transport.send({ method: 'PUT', url: 'http://s3.test/bucket/key?X-Amz-Signature=abc', body: 'bytes' });

      // Assess
      expect(fetcher.requests.map((r) => r.headers.get('authorization'))).toEqual(['Bearer k3y', null]);
      expect(transport.stats.requestsBy).toEqual({ list: 1, storage: 1 });
    });

    it('retries a 5xx with growing jittered backoff, and says the outcome was uncertain', async () => {
      // Prepare
      const clock = new FakeClock();
      const fetcher = fakeFetch((_, i) => (i < 2 ? jsonResponse(503, { error: { code: 'internal_error', message: 'busy' } }) : jsonResponse(200, { data: 1 })));
      const transport = transportWith(fetcher, clock);

      // Act
      const { response, uncertain } = await list(transport);

      // Assess: random() = 0.5 of ceilings 250 and 500 ms.
      expect(response.status).toBe(200);
      expect(uncertain).toBe(true);
      expect(fetcher.requests).toHaveLength(3);
      expect(clock.sleeps).toEqual([125, 250]);
      expect(transport.stats.retries).toBe(2);
    });

    it('gives up after maxRetries and returns the last 5xx answer', async () => {
      const fetcher = fakeFetch(() => jsonResponse(500, { error: { code: 'internal_error', message: 'down' } }));
      const { response } = await list(transportWith(fetcher));
      expect(response.status).toBe(500);
      expect(fetcher.requests).toHaveLength(DEFAULT_RETRY.maxRetries + 1);
    });

    it('retries when no answer comes, and fails with network_error (status 0) when none ever does', async () => {
      const fetcher = fakeFetch(() => {
        throw networkFailure('ECONNRESET');
      });
      const failure = list(transportWith(fetcher));
      await expect(failure).rejects.toBeInstanceOf(DriveError);
      await expect(failure).rejects.toMatchObject({ code: 'network_error', status: 0, message: expect.stringContaining('ECONNRESET') });
      expect(fetcher.requests).toHaveLength(DEFAULT_RETRY.maxRetries + 1);
    });

    it('does not call a refused connection uncertain: the request never left', async () => {
      const fetcher = fakeFetch((_, i) => {
        if (i === 0) throw networkFailure('ECONNREFUSED');
        return jsonResponse(404, { error: { code: 'not_found', message: 'no folder' } });
      });
      const { response, uncertain } = await list(transportWith(fetcher));
      expect(response.status).toBe(404);
      expect(uncertain).toBe(false);
    });

    it.each([400, 401, 404, 409, 413, 422])('never retries a %i', async (status) => {
      const fetcher = fakeFetch(() => jsonResponse(status, { error: { code: 'x', message: 'no' } }));
      const { response } = await list(transportWith(fetcher));
      expect(response.status).toBe(status);
      expect(fetcher.requests).toHaveLength(1);
    });

    it('waits out a 429 for Retry-After (plus jitter) and sends again, without counting it as a retry', async () => {
      // Prepare
      const clock = new FakeClock();
      const refused = { 'Retry-After': '4', 'RateLimit-Limit': '100', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '36' };
      const fetcher = fakeFetch((_, i) =>
        i === 0 ? jsonResponse(429, { error: { code: 'rate_limited', message: 'retry in 4 seconds' } }, refused) : jsonResponse(200, { data: [] }),
      );
      const transport = transportWith(fetcher, clock);

      // Act
      const { response, uncertain } = await list(transport);

      // Assess: 4 s + 5% of it, and the pacer's wait is counted as paced time.
      expect(response.status).toBe(200);
      expect(uncertain).toBe(false);
      expect(clock.sleeps).toEqual([4200]);
      expect(transport.stats).toMatchObject({ requests: 2, rateLimited: 1, retries: 0, pacedMs: 4200 });
    });

    it('paces by RateLimit-Remaining: with none left, the next call waits for a token to refill', async () => {
      // Prepare: 120 a minute is a token every 500 ms.
      const clock = new FakeClock();
      const fetcher = fakeFetch(() => jsonResponse(200, { data: [] }, { 'RateLimit-Limit': '120', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '30' }));
      const transport = transportWith(fetcher, clock);

      // Act
      await list(transport);
      await list(transport);

      // Assess
      expect(clock.sleeps).toEqual([500]);
      expect(fetcher.requests).toHaveLength(2);
      expect(transport.stats.rateLimited).toBe(0);
    });

    it('stops at once when the signal aborts during a backoff, with the abort reason', async () => {
      const controller = new AbortController();
      const fetcher = fakeFetch(() => {
        controller.abort();
        return jsonResponse(503, {});
      });
      await expect(list(transportWith(fetcher), controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
      expect(fetcher.requests).toHaveLength(1);
    });

    it('fails a body that cannot be read (a local file changed or gone) as local_file_error, without retrying', async () => {
      const fetcher = fakeFetch(() => {
        throw new TypeError('fetch failed', { cause: new DOMException('The blob could not be read', 'NotReadableError') });
      });
      const transport = transportWith(fetcher);
      await expect(transport.send({ method: 'POST', url: transport.url('/drive/upload'), bucket: 'upload', body: 'x' })).rejects.toMatchObject({ code: 'local_file_error' });
      expect(fetcher.requests).toHaveLength(1);
    });
  });
});

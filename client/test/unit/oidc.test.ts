import { Drive } from '../../src/drive';
import { DriveError } from '../../src/errors';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { githubActionsToken, renewMarginMs, tokenFile } from '../../src/oidc';
import { FakeClock, type SeenRequest, fakeFetch, jsonResponse } from '../support/fakes';

// Issue 25, the client's side: a job's OIDC token exchanged at POST /drive/token for short-lived keys.

const BASE = 'http://drive.test/v1';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2ln';
const LIFE_MS = 600_000;

/** A fake API: each exchange mints `minted-<n>`, living LIFE_MS; `live` holds the keys it still takes. */
function fakeApi(options: { refuse?: (key: string) => boolean } = {}) {
  let minted = 0;
  const fetcher = fakeFetch(async (request: SeenRequest) => {
    if (request.url.pathname === '/v1/drive/token') {
      minted++;
      return jsonResponse(200, { data: { key: `minted-${minted}`, expires_at: new Date(Date.now() + LIFE_MS).toISOString(), drive: 'default', role: 'read-write', prefix: '/', trust_id: 't1' } });
    }
    const key = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
    if (options.refuse?.(key)) return jsonResponse(401, { error: { code: 'unauthorized', message: 'the API key is not valid' } });
    return jsonResponse(200, { data: { folder: '/', entries: [], next_cursor: null } });
  });
  const exchanges = () => fetcher.requests.filter((request) => request.url.pathname === '/v1/drive/token');
  const keysSent = () => fetcher.requests.filter((request) => request.url.pathname !== '/v1/drive/token').map((request) => request.headers.get('authorization'));
  return { fetcher, exchanges, keysSent };
}

describe('OIDC credentials', () => {
  it('exchanges the token once, sends it with no key, and uses the minted key on API calls', async () => {
    // Prepare
    const api = fakeApi();
    const drive = new Drive({ baseUrl: BASE, oidc: { token: JWT, drive: 'etl', ttlSeconds: 900 }, fetch: api.fetcher, clock: new FakeClock() });

    // Act
    await drive.list('/');
    await drive.list('/');

    // Assess
    expect(api.exchanges()).toHaveLength(1);
    const [exchange] = api.exchanges();
    expect(exchange.method).toBe('POST');
    expect(exchange.headers.get('authorization')).toBeNull();
    expect(JSON.parse(await exchange.body!.text())).toEqual({ drive: 'etl', token: JWT, ttl_seconds: 900 });
    expect(api.keysSent()).toEqual(['Bearer minted-1', 'Bearer minted-1']);
  });

  it('exchanges again once less than 20 % of the key’s life is left, not before', async () => {
    // Prepare
    const clock = new FakeClock();
    const api = fakeApi();
    const drive = new Drive({ baseUrl: BASE, oidc: { token: JWT }, fetch: api.fetcher, clock });
    await drive.list('/');

    // Act: just before the margin, then past it.
    clock.time += LIFE_MS * 0.8 - 5_000;
    await drive.list('/');
    clock.time += 10_000;
    await drive.list('/');

    // Assess
    expect(api.keysSent()).toEqual(['Bearer minted-1', 'Bearer minted-1', 'Bearer minted-2']);
  });

  it('reads a token file again at each renewal, so a job may rewrite it with a fresh token during a long batch', async () => {
    // Prepare: the file holds the first token; the job rewrites it before the key's renewal.
    const dir = await mkdtemp(join(tmpdir(), 'drive-oidc-file-'));
    const file = join(dir, 'token');
    try {
      await writeFile(file, 'first.jwt.token\n');
      const clock = new FakeClock();
      const api = fakeApi();
      const drive = new Drive({ baseUrl: BASE, oidc: { token: tokenFile(file) }, fetch: api.fetcher, clock });
      await drive.list('/');
      await writeFile(file, 'second.jwt.token\n');

      // Act: within the key's life the file is not read; past the renewal margin it is.
      await drive.list('/');
      clock.time += LIFE_MS;
      await drive.list('/');

      // Assess
      const sent = await Promise.all(api.exchanges().map(async (exchange) => (JSON.parse(await exchange.body!.text()) as { token: string }).token));
      expect(sent).toEqual(['first.jwt.token', 'second.jwt.token']);
      expect(api.keysSent()).toEqual(['Bearer minted-1', 'Bearer minted-1', 'Bearer minted-2']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a 401 on a key cut short makes one exchange and one retry; a second 401 is the answer', async () => {
    // Prepare: the server stops taking minted-1 early (its stored expiry moved), and every key after call 3.
    let refuseAll = false;
    const api = fakeApi({ refuse: (key) => key === 'minted-1' || refuseAll });
    const drive = new Drive({ baseUrl: BASE, oidc: { token: JWT }, fetch: api.fetcher, clock: new FakeClock() });

    // Act
    await drive.list('/');
    refuseAll = true;
    const refused = await drive.list('/').catch((error: unknown) => error);

    // Assess
    expect(api.keysSent()).toEqual(['Bearer minted-1', 'Bearer minted-2', 'Bearer minted-2', 'Bearer minted-3']);
    expect(refused).toBeInstanceOf(DriveError);
    expect((refused as DriveError).status).toBe(401);
    expect(String((refused as DriveError).message)).not.toContain('minted-');
  });

  it('a fixed key’s 401 is not retried', async () => {
    const fetcher = fakeFetch(() => jsonResponse(401, { error: { code: 'unauthorized', message: 'the API key is not valid' } }));
    const drive = new Drive({ baseUrl: BASE, apiKey: 'k3y', fetch: fetcher, clock: new FakeClock() });
    await expect(drive.list('/')).rejects.toMatchObject({ status: 401 });
    expect(fetcher.requests).toHaveLength(1);
  });

  it('calls in flight together share one exchange', async () => {
    const api = fakeApi();
    const drive = new Drive({ baseUrl: BASE, oidc: { token: JWT }, fetch: api.fetcher, clock: new FakeClock() });
    await Promise.all([drive.list('/'), drive.list('/'), drive.list('/')]);
    expect(api.exchanges()).toHaveLength(1);
  });

  it('a refused exchange is the API’s error, and never echoes the token', async () => {
    const fetcher = fakeFetch(() => jsonResponse(401, { error: { code: 'unauthorized', message: 'the token has expired (exp)' } }));
    const drive = new Drive({ baseUrl: BASE, oidc: { token: JWT }, fetch: fetcher, clock: new FakeClock() });
    const error = (await drive.list('/').catch((caught: unknown) => caught)) as DriveError;
    expect(error).toMatchObject({ code: 'unauthorized', status: 401, message: 'the token has expired (exp)' });
  });

  it('an exchange answered 503 (its issuer down) is retried as any call is, and counted as a token request', async () => {
    // Prepare
    const api = fakeApi();
    let first = true;
    const fetcher = fakeFetch((request) => {
      if (request.url.pathname === '/v1/drive/token' && first) {
        first = false;
        return jsonResponse(503, { error: { code: 'internal_error', message: "the token's issuer could not be reached; retry later" } });
      }
      return api.fetcher(request.url.toString(), { method: request.method, headers: request.headers, body: request.body });
    });
    const drive = new Drive({ baseUrl: BASE, oidc: { token: JWT }, fetch: fetcher, clock: new FakeClock() });

    // Act
    await drive.list('/');

    // Assess
    expect(fetcher.requests.map((request) => request.url.pathname)).toEqual(['/v1/drive/token', '/v1/drive/token', '/v1/drive/list']);
    expect(drive.stats.requestsBy).toEqual({ token: 2, list: 1 });
    expect(drive.stats.retries).toBe(1);
  });

  it('the renewal margin is 20 % of the life, at least 60 s, at most half the life', () => {
    expect(renewMarginMs(3_600_000)).toBe(720_000);
    expect(renewMarginMs(200_000)).toBe(60_000);
    expect(renewMarginMs(60_000)).toBe(30_000);
  });
});

describe('githubActionsToken', () => {
  it('asks the runner as @actions/core does: the URL plus &audience=, a bearer token, {"value"}', async () => {
    const fetcher = fakeFetch(() => jsonResponse(200, { count: 1, value: JWT }));
    const token = await githubActionsToken('http://runner.test/idtoken?api-version=2.0', 'req-tok', 'https://drive.example.com', fetcher)();
    expect(token).toBe(JWT);
    expect(fetcher.requests[0].url.toString()).toBe('http://runner.test/idtoken?api-version=2.0&audience=https%3A%2F%2Fdrive.example.com');
    expect(fetcher.requests[0].headers.get('authorization')).toBe('bearer req-tok');
  });

  it('a refusal says what the workflow lacks', async () => {
    const fetcher = fakeFetch(() => jsonResponse(403, { message: 'no' }));
    await expect(githubActionsToken('http://runner.test/idtoken?x=1', 'req-tok', 'drive', fetcher)()).rejects.toThrow('permissions: id-token: write');
  });
});

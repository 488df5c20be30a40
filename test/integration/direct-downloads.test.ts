import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Drive } from '../../client/src/drive';
import { ENDPOINTS_FILE, LOCAL_RESOURCES } from '../../lib/local/emulators';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// GET /drive/download?redirect=true: a 307 to a presigned URL of the signed S3 gateway, given only to a key
// that may read the file, within its rate limit; with redirect_above=N, that 307 for a file of more than N
// bytes and the plain download for any other, in one request. The client and `drive get` use it above 10 MB.

const DRIVE = 'direct';
const SECRETS = {
  readWrite: 'd756fcd6cdf99b957a21dffd0aa118b4',
  scoped: '4bb89c0fdae7afe3d98877fbf2d7f6ad',
  uploadOnly: '86274d7fbb9b0015fd215d0a0d9efe18',
  limited: 'c247fd6d97affc1268e87f13ab0a5673',
  counted: '5b0e3d1c9a7f4e2b8d6c0a1f3e5b7d9c',
};
const MiB = 1024 * 1024;
const SMALL = '/reports/q3 é.pdf';
const small = Buffer.from('%PDF-1.7 the third quarter, in a few bytes');
const BIG = '/reports/big.bin';
// Three parts of 8 MiB and a fourth of 7 bytes: a large upload, whose ETag is S3's multipart form, over the client's 10 MB.
const big = randomBytes(24 * MiB + 7);

let host: RunningHost;
let s3Endpoint: string;
const api = (secret: string) => new DriveClient(host.url, secret);
const drive = (secret = SECRETS.readWrite) => new Drive({ baseUrl: host.url, apiKey: secret });

beforeAll(async () => {
  // 100 downloads a minute per key (the spec's 500 would take 500 requests to empty), the limiter's clock
  // frozen: the bucket below empties exactly, on any machine.
  host = await startHost({
    DRIVE_LOCAL_CLOCK: 'frozen',
    DRIVE_RATE_LIMITS: 'download=100',
    DRIVE_API_KEYS: [`${DRIVE}:${SECRETS.readWrite}`, `${DRIVE}:${SECRETS.scoped}:read-write:/reports/2026`, `${DRIVE}:${SECRETS.uploadOnly}:upload-only`, `${DRIVE}:${SECRETS.limited}`, `${DRIVE}:${SECRETS.counted}`].join(','),
  });
  s3Endpoint = (JSON.parse(await readFile(join(host.dataDir, ENDPOINTS_FILE), 'utf8')) as { s3: string }).s3;
  await drive().upload({ path: SMALL, data: small, contentType: 'application/pdf' });
  await drive().upload({ path: BIG, data: big });
});

afterAll(() => stopHost(host));

/** `GET` (or `HEAD`) `/drive/download?…&redirect=true` with `secret`, the redirect not followed. */
function redirect(secret: string, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${host.url}/drive/download?${new URLSearchParams({ path, redirect: 'true' })}`, { method, redirect: 'manual', headers: { Authorization: `Bearer ${secret}`, ...headers } });
}

interface DirectJson {
  url: string;
  expires_at: string;
  path: string;
  size: number;
  etag: string;
  content_type: string;
}

async function linkOf(path: string): Promise<DirectJson> {
  const res = await redirect(SECRETS.readWrite, path);
  expect(res.status).toBe(307);
  return ((await res.json()) as { data: DirectJson }).data;
}

describe('GET /drive/download?redirect=true', () => {
  it('answers 307 to a presigned URL of the signed S3 gateway, saying what it reads and until when', async () => {
    // Act
    const before = Date.now();
    const res = await redirect(SECRETS.readWrite, SMALL);
    const { data } = (await res.json()) as { data: DirectJson };

    // Assess: the URL is the gateway's, for this drive's object, valid 300 s; the download bucket was charged.
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe(data.url);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('ratelimit-limit')).toBe('100');
    const url = new URL(data.url);
    expect(url.origin).toBe(s3Endpoint);
    expect(url.pathname).toMatch(new RegExp(`^/${LOCAL_RESOURCES.bucket}/${DRIVE}/[0-9a-f-]{36}$`));
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(data).toMatchObject({ path: SMALL, size: small.length, etag: createHash('md5').update(small).digest('hex'), content_type: 'application/pdf' });
    const expires = Date.parse(data.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 299_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 300_000);
  });

  it('reads through the URL, with no key, the bytes and the headers the plain download sends', async () => {
    // Prepare
    const { url, etag } = await linkOf(SMALL);
    const plain = await api(SECRETS.readWrite).download({ path: SMALL });

    // Act
    const direct = await fetch(url);

    // Assess
    expect(direct.status).toBe(200);
    expect(Buffer.from(await direct.arrayBuffer()).equals(small)).toBe(true);
    await plain.arrayBuffer();
    for (const header of ['content-type', 'content-disposition', 'content-length', 'etag', 'cache-control']) {
      expect([header, direct.headers.get(header)]).toEqual([header, plain.headers.get(header)]);
    }
    expect(direct.headers.get('etag')).toBe(`"${etag}"`);
  });

  it('serves ranges at the URL, honours If-Match on the authorised ETag and refuses any other (412)', async () => {
    const { url, etag } = await linkOf(SMALL);

    const range = await fetch(url, { headers: { Range: 'bytes=4-9', 'If-Match': `"${etag}"` } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 4-9/${small.length}`);
    expect(Buffer.from(await range.arrayBuffer()).equals(small.subarray(4, 10))).toBe(true);

    const other = await fetch(url, { headers: { 'If-Match': '"0123456789abcdef0123456789abcdef"' } });
    expect(other.status).toBe(412);
    expect(await other.text()).toContain('<Code>PreconditionFailed</Code>');
  });

  it('signs exactly one object and its headers: another key, another Content-Type, or an API key sent along is refused', async () => {
    const { url } = await linkOf(SMALL);
    const { url: bigUrl } = await linkOf(BIG);

    const swapped = new URL(url);
    swapped.pathname = new URL(bigUrl).pathname;
    expect((await fetch(swapped)).status).toBe(403);

    const retyped = new URL(url);
    retyped.searchParams.set('response-content-type', 'text/html');
    expect((await fetch(retyped)).status).toBe(403);

    // S3 takes one way of authenticating: a client that forwards its API key to the URL learns so at once.
    const both = await fetch(url, { headers: { Authorization: `Bearer ${SECRETS.readWrite}` } });
    expect(both.status).toBe(400);
    expect(await both.text()).toContain('<Code>InvalidArgument</Code>');
  });

  it('names the version it authorised: once the file is replaced, the URL reads that version, never the new bytes, and nothing (404) once it is purged', async () => {
    // Prepare
    const path = '/reports/replaced.txt';
    await drive().upload({ path, data: 'first version' });
    const first = await linkOf(path);

    // Act
    await drive().upload({ path, data: 'second version, longer' });
    const stale = await fetch(first.url);
    const fresh = await linkOf(path);

    // Assess: the replaced version is in the trash (issue 28, on by default), its object kept: the URL still
    // names it, and only it.
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe('first version');
    expect(await (await fetch(fresh.url)).text()).toBe('second version, longer');
    expect(fresh.etag).not.toBe(first.etag);
    const listed = await json<{ data: { items: { id: string; reason: string }[] } }>(api(SECRETS.readWrite).request('GET', `/drive/trash?path=${path}`));
    expect(listed.body.data.items).toMatchObject([{ reason: 'replaced' }]);
    expect((await api(SECRETS.readWrite).request('DELETE', `/drive/trash/${listed.body.data.items[0].id}`)).status).toBe(200);
    const purged = await fetch(first.url);
    expect(purged.status).toBe(404);
    expect(await purged.text()).toContain('<Code>NoSuchKey</Code>');
  });

  it('is followed by a fetch that follows redirects, which drops the API key at the other origin (as curl -L does)', async () => {
    const res = await api(SECRETS.readWrite).download({ path: SMALL, redirect: 'true' });
    expect(res.status).toBe(200);
    expect(res.url.startsWith(s3Endpoint)).toBe(true);
    expect(Buffer.from(await res.arrayBuffer()).equals(small)).toBe(true);
  });

  it('answers HEAD with the same 307 and no body, and If-None-Match on the current ETag with 304 and no URL', async () => {
    const head = await redirect(SECRETS.readWrite, SMALL, 'HEAD');
    expect(head.status).toBe(307);
    expect(new URL(head.headers.get('location')!).origin).toBe(s3Endpoint);
    expect(await head.text()).toBe('');

    const { etag } = await linkOf(SMALL);
    const current = await redirect(SECRETS.readWrite, SMALL, 'GET', { 'If-None-Match': `"${etag}"` });
    expect(current.status).toBe(304);
    expect(current.headers.get('location')).toBeNull();
  });

  it('leaves the plain download as it was: without redirect (or with redirect=false) the bytes come from the API', async () => {
    const queries: Record<string, string>[] = [{ path: SMALL }, { path: SMALL, redirect: 'false' }];
    for (const query of queries) {
      const res = await api(SECRETS.readWrite).download(query);
      expect(res.status).toBe(200);
      expect(res.redirected).toBe(false);
      expect(Buffer.from(await res.arrayBuffer()).equals(small)).toBe(true);
    }
  });

  it('refuses a redirect value that is not true or false (422), and a file that is not there (404), with no URL', async () => {
    const bad = await json<ErrorJson>(api(SECRETS.readWrite).download({ path: SMALL, redirect: 'yes' }));
    expect(bad).toMatchObject({ status: 422, body: { error: { code: 'validation_error', message: 'redirect must be "true" or "false" (got "yes")' } } });
    const missing = await redirect(SECRETS.readWrite, '/reports/nothing.pdf');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('location')).toBeNull();
    expect(((await missing.json()) as ErrorJson).error).toMatchObject({ code: 'not_found', message: 'no file at /reports/nothing.pdf' });
  });
});

/** `GET` (or `HEAD`) `/drive/download?path=…&redirect_above=…` (and any other `query`), the redirect not followed. */
function above(threshold: number | string, path = SMALL, method = 'GET', headers: Record<string, string> = {}, query: Record<string, string> = {}): Promise<Response> {
  const params = new URLSearchParams({ path, redirect_above: String(threshold), ...query });
  return fetch(`${host.url}/drive/download?${params}`, { method, redirect: 'manual', headers: { Authorization: `Bearer ${SECRETS.readWrite}`, ...headers } });
}

// Headers that differ from one answer to the next whatever was asked.
const PER_RESPONSE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id', 'x-amzn-requestid']);
const lasting = (res: Response) => [...res.headers].filter(([name]) => !PER_RESPONSE.has(name)).sort();

describe('GET /drive/download?redirect_above=N: the redirect for a file of more than N bytes, the bytes for any other', () => {
  it('answers a file larger than N as redirect=true does: the 307, its URL reading the file', async () => {
    // Act
    const res = await above(small.length - 1);
    const { data } = (await res.json()) as { data: DirectJson };

    // Assess
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe(data.url);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(data).toMatchObject({ path: SMALL, size: small.length, etag: createHash('md5').update(small).digest('hex'), content_type: 'application/pdf' });
    expect(Buffer.from(await (await fetch(data.url)).arrayBuffer()).equals(small)).toBe(true);
  });

  it('answers a file of N bytes or fewer as the plain download does: status, headers and bytes', async () => {
    for (const threshold of [small.length, small.length + 1, Number.MAX_SAFE_INTEGER]) {
      const plain = await api(SECRETS.readWrite).download({ path: SMALL });
      const res = await above(threshold);
      expect([threshold, res.status]).toEqual([threshold, 200]);
      expect(lasting(res)).toEqual(lasting(plain));
      expect(Buffer.from(await res.arrayBuffer()).equals(small)).toBe(true);
      await plain.arrayBuffer();
    }
  });

  it('serves ranges and conditionals at or below N, as the plain download does', async () => {
    const { etag } = await linkOf(SMALL);

    const range = await above(small.length, SMALL, 'GET', { Range: 'bytes=4-9' });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 4-9/${small.length}`);
    expect(Buffer.from(await range.arrayBuffer()).equals(small.subarray(4, 10))).toBe(true);

    const current = await above(small.length, SMALL, 'GET', { 'If-None-Match': `"${etag}"` });
    expect([current.status, current.headers.get('etag'), await current.text()]).toEqual([304, `"${etag}"`, '']);

    const past = await above(small.length, SMALL, 'GET', { Range: `bytes=${small.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${small.length}`);
    await past.arrayBuffer();
  });

  it('above N leaves Range to the URL, still answers If-None-Match on the current ETag with 304 and no URL, and HEAD with the 307 and no body', async () => {
    const { etag } = await linkOf(SMALL);

    const ranged = await above(0, SMALL, 'GET', { Range: 'bytes=4-9' });
    expect(ranged.status).toBe(307);
    expect(((await ranged.json()) as { data: DirectJson }).data.size).toBe(small.length);

    const current = await above(0, SMALL, 'GET', { 'If-None-Match': `"${etag}"` });
    expect([current.status, current.headers.get('location'), await current.text()]).toEqual([304, null, '']);

    const head = await above(0, SMALL, 'HEAD');
    expect(head.status).toBe(307);
    expect(new URL(head.headers.get('location')!).origin).toBe(s3Endpoint);
    expect(await head.text()).toBe('');
    const plainHead = await above(small.length, SMALL, 'HEAD');
    expect([plainHead.status, plainHead.headers.get('content-length'), plainHead.headers.get('location')]).toEqual([200, String(small.length), null]);
  });

  it('streams an empty file even at redirect_above=0: only a file larger than N is redirected', async () => {
    const path = '/reports/empty.txt';
    await drive().upload({ path, data: '' });
    const res = await above(0, path);
    expect([res.status, res.headers.get('content-length'), await res.text()]).toEqual([200, '0', '']);
  });

  it('refuses a threshold that is not a whole number of bytes (422), and redirect_above with redirect of either value (400)', async () => {
    for (const threshold of ['ten', '-1', '1.5', '99999999999999999']) {
      const res = await json<ErrorJson>(above(threshold));
      expect(res).toMatchObject({ status: 422, body: { error: { code: 'validation_error', message: `redirect_above must be a whole number from 0 to 9,007,199,254,740,991 (got ${JSON.stringify(threshold)})` } } });
    }
    for (const redirect of ['true', 'false']) {
      const res = await above(0, SMALL, 'GET', {}, { redirect });
      expect(res.headers.get('location')).toBeNull();
      expect(await json<ErrorJson>(res)).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: 'give redirect or redirect_above, not both' } } });
    }
  });

  it('runs the key\'s checks before any URL: a key confined elsewhere gets the plain download\'s 403', async () => {
    const res = await fetch(`${host.url}/drive/download?${new URLSearchParams({ path: SMALL, redirect_above: '0' })}`, { redirect: 'manual', headers: { Authorization: `Bearer ${SECRETS.scoped}` } });
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
    expect(((await res.json()) as ErrorJson).error).toMatchObject({ code: 'forbidden', message: `path ${SMALL} is outside /reports/2026, the only folder this key may reach` });
  });
});

describe('scope and rate limit, enforced before any URL is given', () => {
  it('refuses a key confined to another folder (403) and a role that may not download (403), with the errors of the plain download', async () => {
    for (const [secret, message] of [
      [SECRETS.scoped, `path ${SMALL} is outside /reports/2026, the only folder this key may reach`],
      [SECRETS.uploadOnly, 'this key is upload-only, which may not download files'],
    ]) {
      const res = await redirect(secret, SMALL);
      expect(res.status).toBe(403);
      expect(res.headers.get('location')).toBeNull();
      const body = (await res.json()) as ErrorJson;
      expect(body.error).toMatchObject({ code: 'forbidden', message });
      const plain = await json<ErrorJson>(api(secret).download({ path: SMALL }));
      expect(plain.body.error.message).toBe(message);
    }
  });

  it('answers 429 with Retry-After and no URL once the key\'s download bucket (100 a minute here) is empty', async () => {
    // Prepare: 100 HEADs of the plain download take the bucket's 100 tokens (the limiter's clock stands still).
    const limited = api(SECRETS.limited);
    for (let i = 0; i < 100; i += 25) {
      const heads = await Promise.all(Array.from({ length: 25 }, () => limited.request('HEAD', `/drive/download?${new URLSearchParams({ path: SMALL })}`)));
      expect(heads.map((res) => res.status)).toEqual(Array(25).fill(200));
    }

    // Act
    const res = await redirect(SECRETS.limited, SMALL);

    // Assess
    expect(res.status).toBe(429);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    const body = (await res.json()) as ErrorJson;
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.message).toMatch(/^rate limit of 100 requests per minute for this endpoint exceeded; retry in [1-9][0-9]* seconds?$/);
  });
});

describe('the client and drive get above 10 MB', () => {
  it('downloads a 24 MiB file of four parts straight from storage, its multipart ETag verified, through the API for the rest', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'direct-'));
    const client = drive();
    try {
      // Act
      const got = await client.downloadToFile(BIG, join(dir, 'big.bin'));
      const smallOne = await client.downloadToFile(SMALL, join(dir, 'small.pdf'));

      // Assess: the big file came from storage in one GET, after one request to the API, as did the small one.
      expect(got).toMatchObject({ size: big.length, direct: true, etag: expect.stringMatching(/^"[0-9a-f]{32}-4"$/) });
      expect((await readFile(join(dir, 'big.bin'))).equals(big)).toBe(true);
      expect(smallOne).toMatchObject({ size: small.length, direct: false });
      expect(client.stats.requestsBy).toMatchObject({ download: 2, storage: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('takes one download token a file, whichever way it comes', async () => {
    // Prepare: a key of its own, whose bucket (100 a minute) nothing else draws on; the limiter's clock stands
    // still, so no token comes back during the test and the count is exact on any machine.
    const dir = await mkdtemp(join(tmpdir(), 'direct-'));
    const client = drive(SECRETS.counted);
    try {
      // Act: one file by a presigned URL, one through the API.
      await client.downloadToFile(BIG, join(dir, 'big.bin'));
      await client.downloadToFile(SMALL, join(dir, 'small.pdf'));
      const after = await api(SECRETS.counted).request('HEAD', `/drive/download?${new URLSearchParams({ path: SMALL })}`);

      // Assess: the HEAD took the third token of the 100.
      expect(after.status).toBe(200);
      expect([after.headers.get('ratelimit-limit'), after.headers.get('ratelimit-remaining')]).toEqual(['100', '97']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

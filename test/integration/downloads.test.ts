import { createHash, randomBytes, randomInt } from 'node:crypto';
import { connect } from 'node:net';
import { DriveClient, type ErrorJson, type FileJson, json } from '../support/api-client';
import { type RunningHost, deleteStoredObject, startHost, stopHost } from '../support/local-host';

const KEY = 'downloads-key-HUjHPIBAxHnYhF53JE196';
const DRIVE = 'downloads';
const ORIGIN = 'https://app.example.com';
const BIG = '/big/random.bin';
// Three MiB and a few bytes: many S3 and socket chunks, and a size that is no power of two.
const bytes = randomBytes(3 * 1024 * 1024 + 5);
const SIZE = bytes.length;
/** The ETag of a file holding `data`: the MD5 of its bytes, quoted. */
const tagOf = (data: Uint8Array | string) => `"${createHash('md5').update(data).digest('hex')}"`;
const BIG_TAG = tagOf(bytes);

let host: RunningHost;
let drive: DriveClient;
let big: FileJson;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `${DRIVE}:${KEY}`, DRIVE_RATE_LIMITS: 'off', DRIVE_CORS_ORIGINS: ORIGIN });
  drive = new DriveClient(host.url, KEY);
  big = await uploadOne(bytes, BIG);
});

afterAll(() => stopHost(host));

async function uploadOne(data: Uint8Array | string, path: string): Promise<FileJson> {
  const { status, body } = await json<{ data: FileJson[] }>(drive.upload([{ data, filename: 'x' }], [{ path }]));
  expect(status).toBe(200);
  return body.data[0];
}

/** A download of `path` with `headers`, by `method`. */
function download(headers: Record<string, string> = {}, path = BIG, method = 'GET'): Promise<Response> {
  return drive.request(method, `/drive/download?${new URLSearchParams({ path })}`, { headers });
}

async function bodyOf(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

/** One request over a bare socket, and every byte the server sent back: to see that no body is on the wire. */
function rawExchange(method: string, target: string, headers: Record<string, string> = {}): Promise<{ head: string; body: Buffer }> {
  const url = new URL(host.url);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${url.host}`, `Authorization: Bearer ${KEY}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      resolve({ head: all.subarray(0, split).toString('latin1'), body: all.subarray(split + 4) });
    });
  });
}

// Headers that differ from one response to the next whatever the request.
const PER_RESPONSE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id', 'x-amzn-requestid']);
const stableHeaders = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !PER_RESPONSE.has(name)));

describe('GET /drive/download with Range', () => {
  it.each([
    ['the first byte', 'bytes=0-0', 0, 0],
    ['the last byte', `bytes=${SIZE - 1}-${SIZE - 1}`, SIZE - 1, SIZE - 1],
    ['the second MiB', 'bytes=1048576-2097151', 1048576, 2097151],
    ['bytes across 64 KiB chunk boundaries', 'bytes=65535-131073', 65535, 131073],
    ['an open range', 'bytes=3000000-', 3000000, SIZE - 1],
    ['a suffix', 'bytes=-1000', SIZE - 1000, SIZE - 1],
    ['a last position past the end, clamped', `bytes=${SIZE - 10}-${SIZE * 2}`, SIZE - 10, SIZE - 1],
    ['a suffix longer than the file', `bytes=-${SIZE * 2}`, 0, SIZE - 1],
    ['a unit in capitals with whitespace', 'BYTES= 10-20 ', 10, 20],
  ])('sends %s (%s) as 206 with its Content-Range, and exactly those bytes', async (_, range, start, end) => {
    const res = await download({ Range: range });

    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${SIZE}`);
    expect(res.headers.get('content-length')).toBe(String(end - start + 1));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('etag')).toBe(`${BIG_TAG}`);
    expect(res.headers.get('content-disposition')).toContain('attachment');
    expect((await bodyOf(res)).equals(bytes.subarray(start, end + 1))).toBe(true);
  });

  it('sends every byte right for 25 random ranges', async () => {
    for (let i = 0; i < 25; i++) {
      const start = randomInt(0, SIZE);
      const end = randomInt(start, SIZE);
      const res = await download({ Range: `bytes=${start}-${end}` });
      expect({ i, status: res.status, range: res.headers.get('content-range') }).toEqual({ i, status: 206, range: `bytes ${start}-${end}/${SIZE}` });
      expect((await bodyOf(res)).equals(bytes.subarray(start, end + 1))).toBe(true);
    }
  });

  it.each([
    ['an invalid range (first > last)', 'bytes=10-5'],
    ['letters', 'bytes=a-b'],
    ['another unit', 'items=0-9'],
    ['several ranges (decided: the whole file)', 'bytes=0-1,5-6'],
  ])('sends the whole file with 200 for %s', async (_, range) => {
    const res = await download({ Range: range });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBeNull();
    expect(res.headers.get('content-length')).toBe(String(SIZE));
    expect((await bodyOf(res)).equals(bytes)).toBe(true);
  });

  it.each([
    ['a first position at the size', `bytes=${SIZE}-`],
    ['a first position past the size', `bytes=${SIZE + 100}-${SIZE + 200}`],
    ['a suffix of zero bytes', 'bytes=-0'],
  ])('answers 416 range_not_satisfiable for %s, naming the size in Content-Range', async (_, range) => {
    const res = await download({ Range: range });

    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${SIZE}`);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as ErrorJson;
    expect(body.error).toEqual({ code: 'range_not_satisfiable', message: expect.stringContaining('Range'), request_id: res.headers.get('x-request-id') });
  });

  it('answers 416 for any range of an empty file, and 200 without one', async () => {
    await uploadOne('', '/big/empty.bin');

    for (const range of ['bytes=0-0', 'bytes=0-', 'bytes=-1']) {
      const res = await download({ Range: range }, '/big/empty.bin');
      expect({ range, status: res.status, contentRange: res.headers.get('content-range') }).toEqual({ range, status: 416, contentRange: 'bytes */0' });
      await res.arrayBuffer();
    }
    const whole = await download({}, '/big/empty.bin');
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe('0');
  });

  it('serves the range when If-Range holds (its ETag or Last-Modified) and the whole file when not', async () => {
    const etag = `${BIG_TAG}`;
    const lastModified = (await download({}, BIG, 'HEAD')).headers.get('last-modified')!;

    for (const ifRange of [etag, lastModified]) {
      const res = await download({ Range: 'bytes=5-9', 'If-Range': ifRange });
      expect({ ifRange, status: res.status }).toEqual({ ifRange, status: 206 });
      expect((await bodyOf(res)).equals(bytes.subarray(5, 10))).toBe(true);
    }
    for (const ifRange of ['"another-version"', `W/${etag}`, 'Thu, 01 Jan 1970 00:00:00 GMT']) {
      const res = await download({ Range: 'bytes=5-9', 'If-Range': ifRange });
      expect({ ifRange, status: res.status }).toEqual({ ifRange, status: 200 });
      expect((await bodyOf(res)).length).toBe(SIZE);
    }
  });
});

describe('GET /drive/download: validators and conditional requests', () => {
  it('carries a strong ETag from the MD5 of the content and its created_at as Last-Modified, the same on every download', async () => {
    const first = await download();
    const second = await download();

    expect(first.headers.get('etag')).toBe(`${BIG_TAG}`);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(first.headers.get('last-modified')).toBe(new Date(Math.floor(Date.parse(big.created_at) / 1000) * 1000).toUTCString());
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    expect(first.headers.get('accept-ranges')).toBe('bytes');
    await Promise.all([first.arrayBuffer(), second.arrayBuffer()]);
  });

  it.each([
    ['its ETag', () => `${BIG_TAG}`],
    ['its ETag marked weak', () => `W/${BIG_TAG}`],
    ['a list holding its ETag', () => `"old", ${BIG_TAG}`],
    ['*', () => '*'],
  ])('answers 304 with the validators and no body when If-None-Match holds %s', async (_, value) => {
    const { head, body } = await rawExchange('GET', `/drive/download?path=${BIG}`, { 'If-None-Match': value() });

    expect(head).toMatch(/^HTTP\/1\.1 304 /);
    expect(head).toContain(`ETag: ${BIG_TAG}`);
    expect(head).toMatch(/\r\nLast-Modified: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT/);
    expect(head).toContain('Cache-Control: private, no-cache');
    expect(head).not.toMatch(/Content-Range|Transfer-Encoding/i);
    expect(body.length).toBe(0);
  });

  it('answers 200 when If-None-Match holds another tag', async () => {
    const res = await download({ 'If-None-Match': '"old", W/"older"' });
    expect(res.status).toBe(200);
    expect((await bodyOf(res)).equals(bytes)).toBe(true);
  });

  it('answers 304 for If-Modified-Since at or after Last-Modified, and 200 before it', async () => {
    const lastModified = Date.parse((await download({}, BIG, 'HEAD')).headers.get('last-modified')!);

    const same = await download({ 'If-Modified-Since': new Date(lastModified).toUTCString() });
    const later = await download({ 'If-Modified-Since': new Date(lastModified + 60_000).toUTCString() });
    const earlier = await download({ 'If-Modified-Since': new Date(lastModified - 1000).toUTCString() });
    const invalid = await download({ 'If-Modified-Since': 'yesterday' });

    expect([same.status, later.status, earlier.status, invalid.status]).toEqual([304, 304, 200, 200]);
    expect(same.headers.get('etag')).toBe(`${BIG_TAG}`);
    await Promise.all([earlier.arrayBuffer(), invalid.arrayBuffer()]);
  });

  it('lets If-None-Match decide when If-Modified-Since is also given (RFC 9110 §13.2.2)', async () => {
    const future = new Date(Date.now() + 3_600_000).toUTCString();

    const res = await download({ 'If-None-Match': '"old"', 'If-Modified-Since': future });

    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('answers 200 with the new bytes and a new ETag once the file is replaced', async () => {
    await uploadOne('version one', '/big/replaced.txt');
    expect((await download({ 'If-None-Match': `${tagOf('version one')}` }, '/big/replaced.txt')).status).toBe(304);

    await uploadOne('version two', '/big/replaced.txt');
    const res = await download({ 'If-None-Match': `${tagOf('version one')}` }, '/big/replaced.txt');

    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`${tagOf('version two')}`);
    expect(res.headers.get('etag')).not.toBe(`${tagOf('version one')}`);
    expect(await res.text()).toBe('version two');
    const ranged = await download({ Range: 'bytes=8-', 'If-Range': `${tagOf('version one')}` }, '/big/replaced.txt');
    expect(ranged.status).toBe(200);
    expect(await ranged.text()).toBe('version two');
  });

  it('answers HEAD and 304 from the record alone, without opening the bytes', async () => {
    const file = await uploadOne('bytes that will vanish', '/big/vanished.txt');
    await deleteStoredObject(host.dataDir, `${DRIVE}/${file.id}`);

    const head = await download({}, '/big/vanished.txt', 'HEAD');
    const notModified = await download({ 'If-None-Match': `${tagOf('bytes that will vanish')}` }, '/big/vanished.txt');
    const get = await download({}, '/big/vanished.txt');

    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('22');
    expect(notModified.status).toBe(304);
    // Only a read of the bytes finds them gone.
    expect(get.status).toBe(404);
    await get.arrayBuffer();
  });
});

describe('HEAD /drive/download', () => {
  it('answers the headers of the GET, with no body on the wire', async () => {
    const get = await download({ Origin: ORIGIN });
    await get.arrayBuffer();
    const head = await download({ Origin: ORIGIN }, BIG, 'HEAD');
    const raw = await rawExchange('HEAD', `/drive/download?path=${BIG}`);

    expect(head.status).toBe(200);
    expect(stableHeaders(head)).toEqual(stableHeaders(get));
    expect(stableHeaders(head)).toMatchObject({
      'content-length': String(SIZE),
      'content-type': 'application/octet-stream',
      etag: `${BIG_TAG}`,
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
    });
    expect(raw.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw.head).toContain(`Content-Length: ${SIZE}`);
    expect(raw.body.length).toBe(0);
  });

  it('describes the whole file whatever the Range, and answers 304 to If-None-Match', async () => {
    const ranged = await download({ Range: 'bytes=0-9' }, BIG, 'HEAD');
    const beyond = await download({ Range: `bytes=${SIZE}-` }, BIG, 'HEAD');
    const current = await download({ 'If-None-Match': `${BIG_TAG}` }, BIG, 'HEAD');

    expect([ranged.status, beyond.status, current.status]).toEqual([200, 200, 304]);
    expect(ranged.headers.get('content-length')).toBe(String(SIZE));
    expect(ranged.headers.get('content-range')).toBeNull();
  });

  it('answers a missing file with 404 and bad parameters with 400 and 422, never with a body', async () => {
    const missing = await rawExchange('HEAD', '/drive/download?path=/big/missing.bin');
    const neither = await rawExchange('HEAD', '/drive/download');
    const relative = await rawExchange('HEAD', '/drive/download?path=relative');

    expect(missing.head).toMatch(/^HTTP\/1\.1 404 /);
    expect(neither.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(relative.head).toMatch(/^HTTP\/1\.1 422 /);
    expect([missing.body.length, neither.body.length, relative.body.length]).toEqual([0, 0, 0]);
  });

  it('answers 401 without a key', async () => {
    const res = await fetch(`${host.url}/drive/download?path=${BIG}`, { method: 'HEAD' });
    expect(res.status).toBe(401);
  });
});

describe('CORS for downloads', () => {
  it('lets a browser send Range and the conditional headers, and read the validators and Content-Range', async () => {
    const preflight = await fetch(`${host.url}/drive/download`, {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization,range,if-none-match' },
    });
    const ranged = await download({ Origin: ORIGIN, Range: 'bytes=0-0' });
    await ranged.arrayBuffer();

    expect(preflight.status).toBe(204);
    const allowed = preflight.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'range', 'if-range', 'if-none-match', 'if-modified-since', 'if-match']));
    expect(preflight.headers.get('access-control-allow-methods')).toContain('HEAD');
    const exposed = ranged.headers.get('access-control-expose-headers')!.toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['etag', 'content-range', 'accept-ranges', 'content-disposition']));
  });
});

describe('rate limits of downloads', () => {
  let limited: RunningHost;

  beforeAll(async () => {
    // Three downloads a minute: one token comes back every 20 s, so none refills during the test.
    limited = await startHost({ DRIVE_API_KEYS: `${DRIVE}:${KEY}`, DRIVE_RATE_LIMITS: 'download=3' });
  });

  afterAll(() => stopHost(limited));

  it('takes a token from the download bucket for GET, HEAD and 304 alike', async () => {
    const client = new DriveClient(limited.url, KEY);
    const file = (await json<{ data: FileJson[] }>(client.upload([{ data: 'counted', filename: 'counted.txt' }]))).body.data[0];
    const query = `/drive/download?path=${file.path}`;

    const get = await client.request('GET', query);
    await get.arrayBuffer();
    const head = await client.request('HEAD', query);
    const notModified = await client.request('GET', query, { headers: { 'If-None-Match': `${tagOf('counted')}` } });
    const refused = await client.request('HEAD', query);
    const list = await client.list();

    expect([get.status, head.status, notModified.status, refused.status]).toEqual([200, 200, 304, 429]);
    expect([get, head, notModified, refused].map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    expect(head.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    // Another endpoint's bucket is untouched.
    expect(list.headers.get('ratelimit-remaining')).toBe('299');
  });
});

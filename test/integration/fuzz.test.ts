import fc from 'fast-check';
import { request } from 'node:http';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

const KEY = 'fuzz-key-R0usiepXdS8DWuMQlx8K9I5TJ8X';
const RUNS = 150;

let host: RunningHost;

beforeAll(async () => {
  // An admin key, so that the key routes are fuzzed past the role check too.
  host = await sharedHost({ DRIVE_API_KEYS: `fuzz:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off' });
});

afterAll(() => stopHost(host));

interface Reply {
  status: number;
  contentType: string;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A raw request, so the fuzzer controls the target, the headers and the body bytes exactly. */
function send(method: string, target: string, headers: Record<string, string>, body?: Buffer): Promise<Reply> {
  const url = new URL(host.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path: target, headers: { Authorization: `Bearer ${KEY}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString(), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Every answer is a success or a JSON error of the spec's shape, never a 5xx. A success may be a 202: a recursive
 * delete that outlasts its budget is handed to a job, which a busy machine's fuzzed delete does (it failed here,
 * beside a second suite, as a 202 read for an error).
 */
function expectWellFormed(reply: Reply, what: string): void {
  if (reply.status === 200) return;
  if (reply.status === 202) {
    expect(reply.contentType).toContain('application/json');
    expect((JSON.parse(reply.body) as { data?: { job?: unknown } }).data?.job).toBeDefined();
    return;
  }
  expect({ what, status: reply.status }).toEqual({ what, status: expect.any(Number) });
  expect(reply.status).toBeLessThan(500);
  expect(reply.contentType).toContain('application/json');
  const parsed = JSON.parse(reply.body) as { error: { code: string; message: string } };
  expect(parsed.error.code).toMatch(/^[a-z_]+$/);
  expect(parsed.error.message.length).toBeGreaterThan(0);
}

// Paths built from the characters that break path handling: separators, dots, controls, unicode, escapes.
const pathChar = fc.constantFrom('/', '.', '..', 'a', 'é', '日', '\u0000', '\u001f', '\u007f', ' ', '%', '#', '?', '&', '=', '+', '\\', '"', '\ud800', 'e\u0301');
const fuzzPath = fc.array(pathChar, { maxLength: 40 }).map((parts) => parts.join(''));
const longPath = fc.integer({ min: 1, max: 3000 }).map((n) => `/${'x/'.repeat(n)}`);
const anyPath = fc.oneof(fuzzPath, longPath, fc.string(), fc.string({ unit: 'binary' }));

describe('fuzzing every endpoint (fast-check)', () => {
  it('GET /drive/download and /drive/list take any query and answer well', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/drive/download', '/drive/list'), fc.dictionary(fc.constantFrom('path', 'folder', 'name', 'recursive', 'x'), anyPath, { maxKeys: 4 }), async (route, query) => {
        const target = `${route}?${new URLSearchParams(query)}`;
        expectWellFormed(await send('GET', target, {}), target);
      }),
      { numRuns: RUNS },
    );
  });

  it('GET and HEAD /drive/download take any Range and conditional headers and answer 200, 206, 304 or 416', async () => {
    const content = Array.from({ length: 300 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const boundary = 'fuzzRANGES';
    const upload = `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="ranged.txt"\r\n\r\n${content}\r\n--${boundary}--\r\n`;
    expect((await send('POST', '/drive/upload', { 'Content-Type': `multipart/form-data; boundary=${boundary}` }, Buffer.from(upload))).status).toBe(200);
    const position = fc.oneof(fc.constant(''), fc.nat({ max: 400 }).map(String), fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String), fc.constantFrom('-1', 'a', ' 1', '1.5'));
    const spec = fc.tuple(position, position).map(([a, b]) => `${a}-${b}`);
    const range = fc.oneof(
      fc.tuple(fc.constantFrom('bytes', 'BYTES', 'items', ''), fc.array(spec, { minLength: 0, maxLength: 3 })).map(([unit, specs]) => `${unit}=${specs.join(',')}`),
      fc.string({ maxLength: 30 }),
    );
    const validator = fc.oneof(fc.constantFrom('*', '"x"', 'W/"x"', 'Sun, 06 Nov 1994 08:49:37 GMT', 'Sun, 06 Nov 2994 08:49:37 GMT', ''), fc.string({ maxLength: 40 }));
    const headers = fc.record({ Range: range, 'If-Range': validator, 'If-None-Match': validator, 'If-Modified-Since': validator }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'HEAD'), headers, async (method, sent) => {
        const printable = Object.fromEntries(Object.entries(sent).map(([name, value]) => [name, value.replace(/[^\t\x20-\x7e]/g, '')]));
        const reply = await send(method, '/drive/download?path=/ranged.txt', printable);
        const what = `${method} ${JSON.stringify(printable)}`;
        expect({ what, known: [200, 206, 304, 416].includes(reply.status) }).toEqual({ what, known: true });
        if (method === 'HEAD' || reply.status === 304) return expect(reply.body).toBe('');
        if (reply.status === 200) return expect(reply.body).toBe(content);
        if (reply.status === 416) return expect(reply.headers['content-range']).toBe('bytes */300');
        const [, start, end] = /^bytes (\d+)-(\d+)\/300$/.exec(String(reply.headers['content-range']))!.map(Number);
        expect(reply.body).toBe(content.slice(start, end + 1));
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /drive/folders takes any body and answers well', async () => {
    const body = fc.oneof(
      anyPath.map((path) => JSON.stringify({ path })),
      fc.json(),
      fc.string(),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom('application/json', 'text/plain', 'multipart/form-data', ''), async (text, type) => {
        expectWellFormed(await send('POST', '/drive/folders', type ? { 'Content-Type': type } : {}, Buffer.from(text)), text);
      }),
      { numRuns: RUNS },
    );
  });

  it('DELETE /drive/folders takes any query and answers well', async () => {
    await fc.assert(
      fc.asyncProperty(anyPath, fc.constantFrom('true', 'false', 'yes', ''), async (path, recursive) => {
        const target = `/drive/folders?${new URLSearchParams({ path, recursive })}`;
        expectWellFormed(await send('DELETE', target, {}), target);
      }),
      { numRuns: RUNS },
    );
  });

  it('the large-upload routes take any body and upload_id and answer well', async () => {
    const number = fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 5 }), fc.constant(null));
    const startBody = fc.record(
      { path: anyPath, folder: anyPath, name: fc.string(), size: number, content_type: fc.string({ maxLength: 80 }), extra: fc.json() },
      { requiredKeys: [] },
    );
    const completeBody = fc.oneof(
      fc.record({ parts: fc.array(fc.record({ number, etag: fc.oneof(fc.string(), number) }, { requiredKeys: [] }), { maxLength: 20 }) }),
      fc.record({ parts: fc.json() }),
    );
    const uploadId = fc.oneof(fc.uuid(), fc.string({ maxLength: 60 }).map(encodeURIComponent), fc.constant('%'), fc.constant(''));
    const request = fc.oneof(
      fc.tuple(fc.constant('POST'), fc.constant('/drive/uploads'), fc.oneof(startBody.map((b) => JSON.stringify(b)), fc.string())),
      fc.tuple(fc.constant('POST'), uploadId.map((id) => `/drive/uploads/${id}/complete`), fc.oneof(completeBody.map((b) => JSON.stringify(b)), fc.string())),
      fc.tuple(fc.constant('DELETE'), uploadId.map((id) => `/drive/uploads/${id}`), fc.constant('')),
    );
    await fc.assert(
      fc.asyncProperty(request, async ([method, target, body]) => {
        expectWellFormed(await send(method, target, { 'Content-Type': 'application/json' }, Buffer.from(body)), `${method} ${target} ${body}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('the key routes take any body and key id and answer well', async () => {
    const body = fc.oneof(
      fc.record({ name: fc.oneof(fc.string(), fc.json()), role: fc.oneof(fc.constantFrom('admin', 'read-write', 'read-only', 'upload-only'), fc.string()), prefix: anyPath }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
      fc.json(),
      fc.string(),
    );
    const keyId = fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 16, maxLength: 16 }), fc.string({ maxLength: 40 }).map(encodeURIComponent), fc.constant('%'));
    const request = fc.oneof(
      fc.tuple(fc.constant('POST'), fc.constant('/drive/keys'), body),
      fc.tuple(fc.constant('DELETE'), keyId.map((id) => `/drive/keys/${id}`), fc.constant('')),
      fc.tuple(fc.constant('GET'), fc.constant('/drive/keys'), fc.constant('')),
    );
    await fc.assert(
      fc.asyncProperty(request, async ([method, target, text]) => {
        expectWellFormed(await send(method, target, { 'Content-Type': 'application/json' }, Buffer.from(text)), `${method} ${target} ${text}`);
      }),
      { numRuns: RUNS },
    );
    // The fuzzer's own key survived: the last admin key is never revoked.
    expect((await send('GET', '/drive/keys', {})).status).toBe(200);
  });

  it('POST /drive/upload takes any multipart body, metadata and filename and answers well', async () => {
    const metadata = fc.oneof(
      fc.array(fc.record({ path: anyPath, folder: anyPath, name: anyPath }, { requiredKeys: [] }), { maxLength: 3 }).map((m) => JSON.stringify(m)),
      fc.json(),
      fc.string(),
    );
    const part = fc.record({ filename: fc.oneof(anyPath, fc.constant('')), data: fc.uint8Array({ maxLength: 200 }), type: fc.constantFrom('', 'text/plain', 'application/octet-stream', 'x/y; a=b') });
    const mangle = fc.constantFrom('none', 'truncate', 'wrong-boundary', 'no-final', 'huge-header', 'many-parts');
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 3 }), fc.option(metadata), mangle, async (parts, meta, how) => {
        const boundary = 'fuzzBOUNDARY';
        const pieces: Buffer[] = [];
        for (const p of parts) {
          pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${p.filename}"\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`), Buffer.from(p.data), Buffer.from('\r\n'));
        }
        if (meta !== null) pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${meta}\r\n`));
        if (how === 'huge-header') pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${'h'.repeat(20_000)}"\r\n\r\nx\r\n`));
        if (how === 'many-parts') for (let i = 0; i < 1200; i++) pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="m${i}"\r\n\r\nx\r\n`));
        if (how !== 'no-final') pieces.push(Buffer.from(`--${boundary}--\r\n`));
        let body = Buffer.concat(pieces);
        if (how === 'truncate') body = body.subarray(0, Math.floor(body.length / 2));
        const declared = how === 'wrong-boundary' ? 'other' : boundary;
        expectWellFormed(await send('POST', '/drive/upload', { 'Content-Type': `multipart/form-data; boundary=${declared}` }, body), `${how} ${parts.length} parts`);
      }),
      { numRuns: RUNS },
    );
  });

  it('answers odd methods, targets and headers with JSON, and the server stays up', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), fc.constantFrom('/', '/drive', '/drive/upload', '/drive/folders', '/drive/list/', '//drive/list', '/DRIVE/LIST'), fc.string({ maxLength: 50 }), async (method, path, auth) => {
        const reply = await send(method, path, { Authorization: `Bearer ${auth}`.replace(/[^\t\x20-\x7e]/g, '') });
        expectWellFormed(reply, `${method} ${path}`);
      }),
      { numRuns: RUNS },
    );
    expect((await send('GET', '/drive/list', {})).status).toBe(200);
  });
});

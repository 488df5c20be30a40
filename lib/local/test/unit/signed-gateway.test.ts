import { SignatureV4 } from '@smithy/signature-v4';
import { mkdtemp, rm } from 'node:fs/promises';
import { type Server, createServer, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GatewayLimits, type GatewayTarget, Sha256, startGateway } from '../../signed-gateway';

// The signed gateway alone, in front of a stand-in emulator that records what reaches it (issue 22, findings 1
// and 3): what the signature does not cover cannot change a request, an unsigned body is refused before it is
// read, the bodies held are capped across connections, and headers and requests are timed.

const credentials = { accessKeyId: 'AKIDGATEWAYTEST', secretAccessKey: 'gateway-test-secret-0123456789' };
const region = 'us-east-1';

let folder: string;
let emulator: Server;
let reached: { method?: string; url?: string; headers: Record<string, unknown>; bytes: number }[];
let gateways: { bodyBytesHeld(): number; close(): Promise<void> }[];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'drive-gw-'));
  reached = [];
  gateways = [];
  emulator = createServer((req, res) => {
    const seen = { method: req.method, url: req.url, headers: req.headers, bytes: 0 };
    reached.push(seen);
    req.on('data', (chunk: Buffer) => (seen.bytes += chunk.length));
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((resolve) => emulator.listen(join(folder, 'emulator.sock'), resolve));
});

afterEach(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  await new Promise<void>((resolve) => {
    emulator.close(() => resolve());
    emulator.closeAllConnections();
  });
  await rm(folder, { recursive: true, force: true });
});

async function gateway(service: GatewayTarget['service'], limits?: Partial<GatewayLimits>): Promise<string> {
  const started = await startGateway({ service, socketPath: join(folder, 'emulator.sock'), region, credentials, limits });
  gateways.push(started);
  return started.endpoint;
}

const signerFor = (service: string) => new SignatureV4({ service, region, credentials, sha256: Sha256, uriEscapePath: service !== 's3', applyChecksum: false });

/** A request signed with the gateway's credentials in its Authorization header, as the SDK signs one. */
async function headerSigned(endpoint: string, service: string, request: { method: string; path: string; query?: Record<string, string>; headers?: Record<string, string>; body?: string }) {
  const { host, port } = new URL(endpoint);
  const headers = { host, ...request.headers, ...(service === 's3' ? { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } : {}) };
  const signed = await signerFor(service).sign({ method: request.method, protocol: 'http:', hostname: '127.0.0.1', port: Number(port), path: request.path, query: request.query ?? {}, headers, body: request.body });
  const search = new URLSearchParams(request.query ?? {}).toString();
  return { url: `${endpoint}${request.path}${search ? `?${search}` : ''}`, headers: signed.headers };
}

/** A presigned URL for a part upload, as the large-upload handler makes them. */
async function presignedPart(endpoint: string): Promise<string> {
  const { host, port } = new URL(endpoint);
  const query = { partNumber: '3', uploadId: '0123456789abcdef0123456789abcdef' };
  const signed = await signerFor('s3').presign(
    { method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: Number(port), path: '/drive-files/drive/file-id', query, headers: { host, 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' } },
    { expiresIn: 900 },
  );
  const search = new URLSearchParams(signed.query as Record<string, string>).toString();
  return `${endpoint}/drive-files/drive/file-id?${search}`;
}

async function s3Refusal(response: Promise<Response>, status: number, code: string): Promise<string> {
  const res = await response;
  const text = await res.text();
  expect({ status: res.status, text }).toEqual({ status, text: expect.stringContaining(`<Code>${code}</Code>`) });
  return text;
}

describe('what the signature does not cover', () => {
  it('refuses a presigned part URL sent with x-amz-* headers it does not sign (a copy source, a metadata directive), in any case', async () => {
    const endpoint = await gateway('s3');
    const url = await presignedPart(endpoint);
    for (const headers of <Record<string, string>[]>[
      { 'x-amz-copy-source': '/drive-files/other-drive/secret-id' },
      { 'X-Amz-Copy-Source': '/drive-files/other-drive/secret-id', 'x-amz-copy-source-range': 'bytes=0-9999999' },
      { 'X-AMZ-METADATA-DIRECTIVE': 'REPLACE' },
      { 'x-amz-website-redirect-location': '/elsewhere' },
    ]) {
      const text = await s3Refusal(fetch(url, { method: 'PUT', headers, body: '' }), 403, 'AccessDenied');
      expect(text).toContain('There were headers present in the request which were not signed');
      expect(text).toContain(`<HeadersNotSigned>${Object.keys(headers)[0].toLowerCase()}`);
    }
    expect(reached).toEqual([]);

    // The part URL itself still writes its part.
    const res = await fetch(url, { method: 'PUT', body: 'part bytes' });
    expect(res.status).toBe(200);
    expect(reached).toEqual([expect.objectContaining({ method: 'PUT', bytes: 10 })]);
  });

  it('lets a part URL write only the part it was made for: no other part, upload, method or operation', async () => {
    const endpoint = await gateway('s3');
    const url = await presignedPart(endpoint);
    for (const changed of [
      url.replace('partNumber=3', 'partNumber=4'),
      url.replace('uploadId=0123', 'uploadId=fedc'),
      `${url}&x-id=UploadPartCopy`,
      `${url}&tagging`,
      url.replace('?', '?uploads&'),
    ]) {
      await s3Refusal(fetch(changed, { method: 'PUT', body: 'x' }), 403, 'SignatureDoesNotMatch');
    }
    await s3Refusal(fetch(url, { method: 'POST', body: 'x' }), 403, 'SignatureDoesNotMatch');
    expect(reached).toEqual([]);
  });

  it('refuses a header-signed request with an x-amz-* header its SignedHeaders leave out, and passes one that signs it', async () => {
    const endpoint = await gateway('s3');
    const query = { partNumber: '1', uploadId: '0123456789abcdef0123456789abcdef' };
    const plain = await headerSigned(endpoint, 's3', { method: 'PUT', path: '/drive-files/drive/file-id', query });
    const text = await s3Refusal(fetch(plain.url, { method: 'PUT', headers: { ...plain.headers, 'x-amz-copy-source': '/drive-files/drive/secret' }, body: '' }), 403, 'AccessDenied');
    expect(text).toContain('<HeadersNotSigned>x-amz-copy-source</HeadersNotSigned>');
    expect(reached).toEqual([]);

    const copy = await headerSigned(endpoint, 's3', { method: 'PUT', path: '/drive-files/drive/file-id', query, headers: { 'x-amz-copy-source': '/drive-files/drive/secret' } });
    expect((await fetch(copy.url, { method: 'PUT', headers: copy.headers, body: '' })).status).toBe(200);
    expect(reached).toEqual([expect.objectContaining({ headers: expect.objectContaining({ 'x-amz-copy-source': '/drive-files/drive/secret' }) })]);
  });

  it("refuses a DynamoDB request whose operation (X-Amz-Target) the signature leaves out, in DynamoDB's JSON", async () => {
    const endpoint = await gateway('dynamodb');
    const body = '{"TableName":"drive-nodes"}';
    const signed = await headerSigned(endpoint, 'dynamodb', { method: 'POST', path: '/', headers: { 'content-type': 'application/x-amz-json-1.0' }, body });
    const res = await fetch(signed.url, { method: 'POST', headers: { ...signed.headers, 'X-Amz-Target': 'DynamoDB_20120810.DeleteTable' }, body });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ __type: expect.stringMatching(/#InvalidSignatureException$/), message: expect.stringContaining('not signed: x-amz-target') });
    expect(reached).toEqual([]);
  });
});

/**
 * Sends the headers of a POST declaring `length` body bytes (or chunked, if undefined) and `sent` bytes of
 * its body, and the answer the gateway gives while the rest is unsent; `close` ends the connection.
 */
function partialRequest(endpoint: string, length: number | undefined, headers: Record<string, string>, sent: number): Promise<{ status: number; text: string; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(endpoint, {
      method: 'POST',
      agent: false,
      headers: { ...(length === undefined ? {} : { 'Content-Length': length }), ...headers },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, close: () => req.destroy() }));
    });
    req.flushHeaders();
    if (sent > 0) req.write(Buffer.alloc(sent, 0x61));
  });
}

const amzDate = () => new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
const authorization = (keyId: string) =>
  `AWS4-HMAC-SHA256 Credential=${keyId}/${amzDate().slice(0, 8)}/${region}/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=${'0'.repeat(64)}`;
const ours = () => ({ Authorization: authorization(credentials.accessKeyId), 'X-Amz-Date': amzDate(), 'X-Amz-Target': 'DynamoDB_20120810.ListTables' });

describe('bodies: refused before they are read, and capped across connections', () => {
  it.each([
    ['no Authorization header', {}],
    ['a malformed one', { Authorization: 'AWS4-HMAC-SHA256 garbage', 'X-Amz-Date': amzDate() }],
    ['another access key', { Authorization: authorization('AKIDSOMEONEELSE'), 'X-Amz-Date': amzDate() }],
  ])('answers a 16 MiB request with %s while its client has sent 1 KiB of it', async (_name, headers) => {
    for (const service of ['dynamodb', 'sqs'] as const) {
      const endpoint = await gateway(service);
      const answer = await partialRequest(endpoint, 16 * 1024 * 1024, headers, 1024);
      answer.close();
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.text)).toMatchObject({ __type: expect.stringMatching(/#UnrecognizedClientException$/) });
    }
    expect(reached).toEqual([]);
  });

  it("refuses a declared body past the service's largest (413) before reading it", async () => {
    const endpoint = await gateway('dynamodb', { maxBodyBytes: 1000 });
    const answer = await partialRequest(endpoint, 1001, ours(), 10);
    answer.close();
    expect(answer.status).toBe(413);
  });

  it('holds at most the budget of bodies at once: past it the throttling error, at once; a body refused gives its share back', async () => {
    const endpoint = await gateway('dynamodb', { maxBodyBytes: 60_000, bodyBudgetBytes: 100_000 });
    // The first request's declared 60,000 bytes are held while it sends: a second of 60,000 does not fit.
    let answered!: (status: number) => void;
    const firstAnswer = new Promise<number>((resolve) => (answered = resolve));
    const first = request(endpoint, { method: 'POST', agent: false, headers: { 'Content-Length': 60_000, ...ours() } });
    first.on('response', (res) => {
      res.resume();
      answered(res.statusCode ?? 0);
    });
    first.write(Buffer.alloc(100, 0x61));
    while (gateways[0].bodyBytesHeld() < 60_000) await new Promise((resolve) => setTimeout(resolve, 10));

    const second = await partialRequest(endpoint, 60_000, ours(), 0);
    second.close();
    expect(second.status).toBe(400);
    expect(JSON.parse(second.text)).toMatchObject({ __type: expect.stringMatching(/#ThrottlingException$/) });
    // A chunked body is counted as it comes.
    const chunked = await partialRequest(endpoint, undefined, ours(), 50_000);
    chunked.close();
    expect(chunked.status).toBe(400);

    // The first ends; its signature is wrong, and its share is given back before it is answered.
    first.end(Buffer.alloc(60_000 - 100, 0x61));
    expect(await firstAnswer).toBe(403);
    const third = await partialRequest(endpoint, 60_000, ours(), 60_000);
    third.close();
    expect(third.status).toBe(403);
    expect(gateways[0].bodyBytesHeld()).toBe(0);
    expect(reached).toEqual([]);
  });
});

describe('timeouts', () => {
  it('closes a connection that does not send its headers, or its body, within the limits it is given', async () => {
    const endpoint = await gateway('dynamodb', { headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const { port } = new URL(endpoint);
    const stalled = (sent: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1');
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(answer));
        socket.write(sent);
      });
    // Headers never finished, and a body that stops half-way (under the gateway's key, so that it is read).
    const head = ['POST / HTTP/1.1', 'Host: 127.0.0.1', 'Content-Length: 1000', ...Object.entries(ours()).map(([name, value]) => `${name}: ${value}`), '', ''].join('\r\n');
    const [headers, body] = await Promise.all([stalled('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n'), stalled(`${head}${'a'.repeat(10)}`)]);
    expect(headers).toMatch(/^HTTP\/1\.1 408|^$/);
    expect(body).toMatch(/^HTTP\/1\.1 408|^$/);
    expect(reached).toEqual([]);
  });
});

import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Transactions } from './dynamo-transactions';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** What the gateway stands in front of: its AWS service name, and the private socket its emulator listens on. */
export interface GatewayTarget {
  service: 's3' | 'dynamodb' | 'sqs';
  socketPath: string;
  region: string;
  credentials: Credentials;
  /** A refusal of a request that is signed but asks for what no Drive call asks (an id or key a path could escape with). */
  refuse?: (req: IncomingMessage, url: URL) => GatewayError | undefined;
  /** DynamoDB's transactions, which the emulator lacks: every other request runs under their shared lock. */
  transactions?: Transactions;
}

/** A refusal, in the service's own error shape. */
export interface GatewayError {
  status: number;
  code: string;
  message: string;
}

/** The most a DynamoDB request may carry (BatchWriteItem's 16 MB): the gateway holds it to check its hash. */
const MAX_DYNAMODB_BODY = 16 * 1024 * 1024;
/** How far a request's signing time may stand from this machine's clock, as AWS allows. */
const CLOCK_SKEW_MS = 15 * 60_000;

/**
 * The only way to an emulator: a server on 127.0.0.1 that checks each request's SigV4 signature (header or
 * presigned query) with the SDK's own signer and the host's credentials, refuses anything else as the
 * service would (S3's XML errors, DynamoDB's JSON), and passes the rest to the emulator, which listens on a
 * socket in a folder only this user may open. Browsers' CORS preflights (unsigned by design) pass to S3.
 */
export async function startGateway(target: GatewayTarget): Promise<{ endpoint: string; close(): Promise<void> }> {
  const signer = new SignatureV4({ service: target.service, region: target.region, credentials: target.credentials, sha256: Sha256, uriEscapePath: target.service !== 's3', applyChecksum: false });
  const server: Server = createServer((req, res) => {
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    handle(target, signer, req, res).catch((error: unknown) => refuse(res, target.service, { status: 500, code: 'InternalError', message: `the gateway failed: ${String(error)}` }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(target: GatewayTarget, signer: SignatureV4, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(`http://localhost${req.url ?? '/'}`);
  const preflight = req.method === 'OPTIONS' && target.service === 's3' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
  // DynamoDB's and SQS's signatures cover the body's hash, so the body is read first; S3's names its hash in a header.
  const body = target.service !== 's3' ? await readAll(req, MAX_DYNAMODB_BODY) : undefined;
  if (body === 'too large') return refuse(res, target.service, { status: 413, code: 'RequestEntityTooLarge', message: 'the request is larger than the service takes' });
  if (!preflight) {
    const problem = await checkSignature(signer, target, req, url, body);
    if (problem) return refuse(res, target.service, problem);
    const refusal = target.refuse?.(req, url);
    if (refusal) return refuse(res, target.service, refusal);
  }
  const { transactions } = target;
  if (!transactions) return forward(target.socketPath, req, res, body);
  if (req.headers['x-amz-target'] === 'DynamoDB_20120810.TransactWriteItems') {
    const answer = await transactions.transactWrite(body ?? Buffer.alloc(0), { authorization: String(req.headers.authorization), 'x-amz-date': String(req.headers['x-amz-date']) });
    res.writeHead(answer.status, { 'Content-Type': 'application/x-amz-json-1.0', ...(answer.errorType ? { 'x-amzn-ErrorType': answer.errorType } : {}) });
    return void res.end(answer.body);
  }
  await transactions.shared(() => forward(target.socketPath, req, res, body));
}

/** Why the request's signature is not the host's, or undefined if it is. */
async function checkSignature(signer: SignatureV4, target: GatewayTarget, req: IncomingMessage, url: URL, body: Buffer | undefined): Promise<GatewayError | undefined> {
  const denied = (message: string): GatewayError => ({ status: 403, code: target.service === 's3' ? 'AccessDenied' : 'UnrecognizedClientException', message });
  const mismatch: GatewayError = { status: 403, code: target.service === 's3' ? 'SignatureDoesNotMatch' : 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided.' };
  const header = req.headers.authorization;
  const presigned = url.searchParams.get('X-Amz-Algorithm') !== null;
  if (!header && !presigned) return denied('Access Denied: the request is not signed');

  const fields = presigned
    ? {
        credential: url.searchParams.get('X-Amz-Credential') ?? '',
        signedHeaders: url.searchParams.get('X-Amz-SignedHeaders') ?? '',
        signature: url.searchParams.get('X-Amz-Signature') ?? '',
        date: url.searchParams.get('X-Amz-Date') ?? '',
      }
    : parseAuthorization(header ?? '', String(req.headers['x-amz-date'] ?? ''));
  if (!fields) return denied('Access Denied: the Authorization header is not AWS4-HMAC-SHA256');
  const [accessKeyId, , region, service] = fields.credential.split('/');
  if (accessKeyId !== target.credentials.accessKeyId) return denied('The AWS Access Key Id you provided does not exist in our records.');
  if (region !== target.region || service !== target.service) return mismatch;
  const signingDate = parseAmzDate(fields.date);
  if (!signingDate) return denied('Access Denied: the signing date is missing or malformed');
  if (presigned) {
    const expires = Number(url.searchParams.get('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > 604_800) return denied('Access Denied: X-Amz-Expires must be 1 to 604800 seconds');
    if (Date.now() > signingDate.getTime() + expires * 1000) return denied('Request has expired');
  }
  if (Math.abs(signingDate.getTime() - Date.now()) > CLOCK_SKEW_MS && !presigned) {
    return { status: 403, code: target.service === 's3' ? 'RequestTimeTooSkewed' : 'InvalidSignatureException', message: 'The difference between the request time and the current time is too large.' };
  }

  const signed = new Set(fields.signedHeaders.split(';').filter((name) => name !== ''));
  if (!signed.has('host')) return mismatch;
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = req.headers[name];
    if (value === undefined) return mismatch;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    if (presigned && name === 'X-Amz-Signature') continue;
    const held = query[name];
    query[name] = held === undefined ? value : [...(Array.isArray(held) ? held : [held]), value];
  }
  const rawPath = (req.url ?? '/').split('?')[0];
  const base = { method: req.method ?? 'GET', protocol: 'http:', hostname: '127.0.0.1', path: rawPath, query, headers, body };
  let expected: string;
  if (presigned) {
    // The signer adds the X-Amz-* parameters itself: take them out and sign again with the same date and
    // expiry. The payload's hash goes back in as the header the S3 presigner hoisted it from.
    const payloadHash = url.searchParams.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD';
    for (const name of ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Content-Sha256']) delete query[name];
    const again = await signer.presign(
      { ...base, headers: { ...headers, 'X-Amz-Content-Sha256': payloadHash } },
      { signingDate, expiresIn: Number(url.searchParams.get('X-Amz-Expires')), signableHeaders: signed },
    );
    expected = String(again.query?.['X-Amz-Signature'] ?? '');
  } else {
    const again = await signer.sign(base, { signingDate, signableHeaders: signed });
    expected = /Signature=([0-9a-f]{64})/.exec(String(again.headers.authorization ?? again.headers.Authorization ?? ''))?.[1] ?? '';
  }
  return sameHex(expected, fields.signature) ? undefined : mismatch;
}

/** The parts of an `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` header. */
function parseAuthorization(header: string, date: string): { credential: string; signedHeaders: string; signature: string; date: string } | undefined {
  const match = /^AWS4-HMAC-SHA256 +Credential=([^,\s]+), *SignedHeaders=([^,\s]+), *Signature=([0-9a-f]{64})$/.exec(header.trim());
  return match ? { credential: match[1], signedHeaders: match[2], signature: match[3], date } : undefined;
}

/** `20261124T201500Z` as a Date, or undefined. */
function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number);
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
}

function sameHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === 32 && left.length === right.length && timingSafeEqual(left, right);
}

/** The whole body, or 'too large' past `max` bytes. */
function readAll(req: IncomingMessage, max: number): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.resume();
        return resolve('too large');
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Sends the request on to the emulator's socket and its answer back, every stream with its error path. */
function forward(socketPath: string, req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Promise<void> {
  return new Promise((resolve) => {
    const upstream = request({ socketPath, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      answer.on('error', () => res.destroy());
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
      answer.on('end', () => resolve());
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
      resolve();
    });
    res.on('close', () => {
      upstream.destroy();
      resolve();
    });
    if (body) upstream.end(body);
    else req.pipe(upstream);
  });
}

function refuse(res: ServerResponse, service: GatewayTarget['service'], error: GatewayError): void {
  if (res.headersSent) return void res.destroy();
  if (service === 's3') {
    const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message></Error>`;
    res.writeHead(error.status, { 'Content-Type': 'application/xml', Connection: 'close' });
    return void res.end(xml);
  }
  res.writeHead(error.status, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-ErrorType': error.code, Connection: 'close' });
  res.end(JSON.stringify({ __type: `com.amazon.coral.service#${error.code}`, message: error.message }));
}

function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

/** SHA-256 (or HMAC-SHA256 with a secret) in the shape the SDK's signer takes, on Node's crypto. */
class Sha256 {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }

  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }

  reset(): void {
    this.hash = this.fresh();
  }

  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
}

function bytes(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

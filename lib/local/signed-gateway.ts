import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type RequestListener, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Transactions } from './dynamo-transactions';
import type { EmbeddedDynalite } from './embedded-dynalite';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * What the gateway stands in front of: its AWS service name, and the private socket its emulator listens on (the
 * embedded queue's), or the emulator itself, called in this thread: the embedded DynamoDB
 * (lib/local/embedded-dynalite.ts) with each request read whole, the embedded S3 as a Node request listener.
 */
export type GatewayTarget = {
  service: 's3' | 'dynamodb' | 'sqs';
  region: string;
  credentials: Credentials;
  /** A refusal of a request that is signed but asks for what no Drive call asks (an id or key a path could escape with). */
  refuse?: (req: IncomingMessage, url: URL) => GatewayError | undefined;
  /** DynamoDB's transactions and what else the emulator lacks: every other request runs under their shared lock. */
  transactions?: Transactions;
  /** The service's limits, by default `GATEWAY_LIMITS[service]` (tests set small ones). */
  limits?: Partial<GatewayLimits>;
} & (
  | { socketPath: string; emulator?: undefined; handler?: undefined }
  | { emulator: Pick<EmbeddedDynalite, 'serve'>; socketPath?: undefined; handler?: undefined }
  /** A Node request listener in this thread (the embedded S3's Koa app), handed the request and answer themselves. */
  | { handler: RequestListener; socketPath?: undefined; emulator?: undefined }
);

/** What one gateway takes before it refuses. */
export interface GatewayLimits {
  /** The largest body read to check its hash (DynamoDB's and SQS's signatures cover it; S3's streams through). */
  maxBodyBytes: number;
  /** Bytes of bodies held at once, across connections; past it the service's throttling error (the SDK retries it). */
  bodyBudgetBytes: number;
  /** Time to send a request's headers. */
  headersTimeoutMs: number;
  /** Time to send a whole request, headers and body (Node's `requestTimeout`). */
  requestTimeoutMs: number;
  /** Bytes of a refused request's body read and dropped so that its client reads the refusal; past it the connection closes. */
  drainBytes: number;
}

const MiB = 1024 * 1024;

/**
 * Each service's limits. DynamoDB's largest request is BatchWriteItem's 16 MB; the embedded SQS takes a 256 KiB
 * message. S3's bodies (parts up to 5 GiB) stream through unread: its headers are timed as closely, a whole part has Node's 300 s.
 * The headers' time counts from the connection's accept, and Node checks it on a timer that runs before the
 * socket's data is read: an event loop held up longer than it (a client and the gateway in one process on a
 * machine loaded tenfold) loses a request a client sent whole. So it is a guard against a client that stops
 * sending, not a pace: 60 s (at 5 s, two test suites side by side saw DynamoDB calls end in ECONNRESET).
 */
const HEADERS_TIMEOUT_MS = 60_000;

export const GATEWAY_LIMITS: Readonly<Record<GatewayTarget['service'], GatewayLimits>> = {
  dynamodb: { maxBodyBytes: 16 * MiB, bodyBudgetBytes: 64 * MiB, headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 90_000, drainBytes: 16 * MiB },
  sqs: { maxBodyBytes: 1 * MiB, bodyBudgetBytes: 16 * MiB, headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 90_000, drainBytes: 1 * MiB },
  s3: { maxBodyBytes: 0, bodyBudgetBytes: 0, headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 300_000, drainBytes: 16 * MiB },
};

/** A refusal, in the service's own error shape. */
export interface GatewayError {
  status: number;
  code: string;
  message: string;
  /** Further elements of S3's XML error (`HeadersNotSigned`); appended to the message in JSON errors. */
  details?: Record<string, string>;
}

/** How far a request's signing time may stand from this machine's clock, as AWS allows. */
const CLOCK_SKEW_MS = 15 * 60_000;

/**
 * The only way to an emulator: a server on 127.0.0.1 that checks each request's SigV4 signature (header or
 * presigned query) with the SDK's own signer and the host's credentials, refuses anything else as the
 * service would (S3's XML errors, DynamoDB's JSON), and passes the rest to the emulator, which listens on no
 * port: it is called in this thread, or listens on a socket in a folder only this user may open. Browsers'
 * CORS preflights (unsigned by design) pass to S3.
 * What the signature leaves out cannot change the request: an `x-amz-*` header it does not cover is refused, as
 * S3 refuses it, so a presigned part URL writes its one part and nothing else (an `x-amz-copy-source` added to
 * it would copy any object of the bucket into the part). A request whose Authorization names another key or
 * is malformed is refused before its body is read; the bodies held are capped across connections, and
 * headers and whole requests are timed.
 */
export async function startGateway(target: GatewayTarget): Promise<{ endpoint: string; bodyBytesHeld(): number; close(): Promise<void> }> {
  const limits: GatewayLimits = { ...GATEWAY_LIMITS[target.service], ...target.limits };
  const signer = new SignatureV4({ service: target.service, region: target.region, credentials: target.credentials, sha256: Sha256, uriEscapePath: target.service !== 's3', applyChecksum: false });
  const budget = new ByteBudget(limits.bodyBudgetBytes);
  const server: Server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node looks for requests past their time only this often (every 30 s by default).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
    (req, res) => {
      req.on('error', () => undefined);
      res.on('error', () => undefined);
      handle(target, limits, budget, signer, req, res).catch((error: unknown) =>
        refuse(req, res, target.service, { status: 500, code: 'InternalError', message: `the gateway failed: ${String(error)}` }, limits.drainBytes),
      );
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodyBytesHeld: () => budget.held,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(target: GatewayTarget, limits: GatewayLimits, budget: ByteBudget, signer: SignatureV4, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(`http://localhost${req.url ?? '/'}`);
  const preflight = req.method === 'OPTIONS' && target.service === 's3' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
  if (preflight) return pass(target, req, res, undefined);
  // Everything but the signature itself is checked before a byte of the body is read.
  const auth = readAuthorization(target, req, url);
  if ('status' in auth) return refuse(req, res, target.service, auth, limits.drainBytes);
  // DynamoDB's and SQS's signatures cover the body's hash, so the body is read first; S3's names its hash in a header.
  let held: HeldBody | undefined;
  if (target.service !== 's3') {
    const read = await holdBody(req, limits, budget);
    if (read === 'aborted') return void res.destroy();
    if ('status' in read) return refuse(req, res, target.service, read, limits.drainBytes);
    held = read;
  }
  try {
    const body = held?.body;
    const problem = await checkSignature(signer, target, req, url, auth, body);
    if (problem) return refuse(req, res, target.service, problem, limits.drainBytes);
    const refusal = target.refuse?.(req, url);
    if (refusal) return refuse(req, res, target.service, refusal, limits.drainBytes);
    const { transactions } = target;
    if (!transactions) return await pass(target, req, res, body);
    const action = String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_20120810\./, '');
    const answering = transactions.answer(action, body ?? Buffer.alloc(0), { authorization: String(req.headers.authorization), 'x-amz-date': String(req.headers['x-amz-date']) });
    if (answering) {
      const answer = await answering;
      res.writeHead(answer.status, { 'Content-Type': 'application/x-amz-json-1.0', ...(answer.errorType ? { 'x-amzn-ErrorType': answer.errorType } : {}) });
      return void res.end(answer.body);
    }
    await transactions.shared(() => pass(target, req, res, body));
  } finally {
    held?.release();
  }
}

/** A request's signing fields, read from its Authorization header or its presigned query. */
interface Authorization {
  presigned: boolean;
  signedHeaders: Set<string>;
  signature: string;
  signingDate: Date;
}

/**
 * The request's signing fields, or why they are not the host's: no signature, a malformed one, another access
 * key, region or service, a date too far off, or an `x-amz-*` header the signature does not cover. Needs no body.
 */
function readAuthorization(target: GatewayTarget, req: IncomingMessage, url: URL): Authorization | GatewayError {
  const denied = (message: string): GatewayError => ({ status: 403, code: target.service === 's3' ? 'AccessDenied' : 'UnrecognizedClientException', message });
  const mismatch = signatureMismatch(target.service);
  const header = req.headers.authorization;
  const presigned = url.searchParams.get('X-Amz-Algorithm') !== null;
  if (!header && !presigned) return denied('Access Denied: the request is not signed');
  // S3 takes one or the other: a client that follows a presigned redirect with its own Authorization header
  // (an API key it should not have sent) is refused, not served.
  if (header && presigned && target.service === 's3') {
    return {
      status: 400,
      code: 'InvalidArgument',
      message: 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified',
    };
  }

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

  const signedHeaders = new Set(fields.signedHeaders.split(';').filter((name) => name !== ''));
  if (!signedHeaders.has('host')) return mismatch;
  if ([...signedHeaders].some((name) => req.headers[name] === undefined)) return mismatch;
  // An x-amz-* header names an operation or its input (a copy's source, metadata, ACLs): one the signer did not
  // cover was added by someone other than the signer. Node gives header names in lower case, however sent.
  const unsigned = Object.keys(req.headers).filter((name) => name.startsWith('x-amz-') && !signedHeaders.has(name));
  if (unsigned.length > 0) {
    return {
      status: 403,
      code: target.service === 's3' ? 'AccessDenied' : 'InvalidSignatureException',
      message: 'There were headers present in the request which were not signed',
      details: { HeadersNotSigned: unsigned.join(', ') },
    };
  }
  return { presigned, signedHeaders, signature: fields.signature, signingDate };
}

function signatureMismatch(service: GatewayTarget['service']): GatewayError {
  return { status: 403, code: service === 's3' ? 'SignatureDoesNotMatch' : 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided.' };
}

/** Whether the request's signature is the host's, over its method, path, query, signed headers and (DynamoDB, SQS) body. */
async function checkSignature(signer: SignatureV4, target: GatewayTarget, req: IncomingMessage, url: URL, auth: Authorization, body: Buffer | undefined): Promise<GatewayError | undefined> {
  const { presigned, signedHeaders, signingDate } = auth;
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = req.headers[name] ?? '';
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
      { signingDate, expiresIn: Number(url.searchParams.get('X-Amz-Expires')), signableHeaders: signedHeaders },
    );
    expected = String(again.query?.['X-Amz-Signature'] ?? '');
  } else {
    const again = await signer.sign(base, { signingDate, signableHeaders: signedHeaders });
    expected = /Signature=([0-9a-f]{64})/.exec(String(again.headers.authorization ?? again.headers.Authorization ?? ''))?.[1] ?? '';
  }
  return sameHex(expected, auth.signature) ? undefined : signatureMismatch(target.service);
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

/** Bytes of request bodies one gateway holds, across its connections. */
class ByteBudget {
  private bytes = 0;

  constructor(private readonly limit: number) {}

  get held(): number {
    return this.bytes;
  }

  take(bytes: number): boolean {
    if (this.bytes + bytes > this.limit) return false;
    this.bytes += bytes;
    return true;
  }

  give(bytes: number): void {
    this.bytes -= bytes;
  }
}

/** A body read whole, its bytes counted against the budget until `release`. */
interface HeldBody {
  body: Buffer;
  release(): void;
}

/**
 * The whole body, counted against `budget` (a declared length before a byte is read, a chunked body as it
 * comes); a refusal past the service's largest body or the budget, 'aborted' if the client went away.
 */
function holdBody(req: IncomingMessage, limits: GatewayLimits, budget: ByteBudget): Promise<HeldBody | GatewayError | 'aborted'> {
  const tooLarge: GatewayError = { status: 413, code: 'RequestEntityTooLarge', message: `the request is larger than the service takes (${limits.maxBodyBytes} bytes)` };
  const throttled: GatewayError = { status: 400, code: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput: the gateway holds as many request bodies as it may' };
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  if (declared !== undefined && declared > limits.maxBodyBytes) return Promise.resolve(tooLarge);
  let reserved = declared ?? 0;
  if (!budget.take(reserved)) return Promise.resolve(throttled);
  let released = false;
  const release = () => {
    if (!released) budget.give(reserved);
    released = true;
  };
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (result: HeldBody | GatewayError | 'aborted') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      if (result === 'aborted' || 'status' in result) {
        req.pause();
        chunks.length = 0;
        release();
      }
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBodyBytes) return stop(tooLarge);
      if (size > reserved) {
        if (!budget.take(size - reserved)) return stop(throttled);
        reserved = size;
      }
      chunks.push(chunk);
    };
    const onEnd = () => stop({ body: Buffer.concat(chunks), release });
    const onClose = () => stop('aborted');
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
  });
}

/** Sends the request on to the emulator, in this thread or on its socket, and its answer back. */
async function pass(target: GatewayTarget, req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Promise<void> {
  if (target.socketPath !== undefined) return forward(target.socketPath, req, res, body);
  if (target.handler !== undefined) {
    if (body) throw new Error('a handler in this thread reads its own body: the gateway must not have read it');
    return handOver(target.handler, req, res);
  }
  const answer = await target.emulator.serve({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: body ?? Buffer.alloc(0) });
  res.writeHead(answer.status, answer.headers.flat());
  res.end(answer.body);
}

/**
 * Hands the request (its body unread: only S3 has a handler, and the gateway reads no S3 body) and its answer to
 * `handler`, as a server on a socket of its own would, without the second HTTP exchange; done when the answer is
 * sent or its connection gone.
 */
function handOver(handler: RequestListener, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    res.once('close', () => resolve());
    handler(req, res);
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

/**
 * Answers with `error`. A body not yet read whole is read on and dropped, up to `drainBytes`, so that the
 * client, still sending, reads the answer rather than a reset connection; past that the connection closes.
 */
function refuse(req: IncomingMessage, res: ServerResponse, service: GatewayTarget['service'], error: GatewayError, drainBytes: number): void {
  if (res.headersSent) return void res.destroy();
  const draining = !req.complete;
  if (draining) {
    let dropped = 0;
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > drainBytes) req.socket.destroy();
    });
    req.resume();
  }
  // A connection whose body is still coming stays open until it has come; one read whole closes with the answer.
  const close: Record<string, string> = draining ? {} : { Connection: 'close' };
  if (service === 's3') {
    const details = Object.entries(error.details ?? {})
      .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
      .join('');
    const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message>${details}</Error>`;
    res.writeHead(error.status, { 'Content-Type': 'application/xml', ...close });
    return void res.end(xml);
  }
  res.writeHead(error.status, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-ErrorType': error.code, ...close });
  const message = error.details ? `${error.message}: ${Object.values(error.details).join('; ')}` : error.message;
  res.end(JSON.stringify({ __type: `com.amazon.coral.service#${error.code}`, message }));
}

function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

/** SHA-256 (or HMAC-SHA256 with a secret) in the shape the SDK's signer takes, on Node's crypto. */
export class Sha256 {
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

import { createHash, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Writable } from 'node:stream';
import { CORS_ORIGINS, CORS_REQUEST_HEADERS } from '../../functions/http/cors';
import { AWS_LIMITS, FUNCTION_SIZING, GATEWAY_REQUEST_ID_HEADER, gatewayErrorBody } from '../aws-limits';
import { type Route, matchPath } from '../routes';
import { type BufferedHandler, type GatewayFailure, type Invocation, deliver, invocationTimeout, invokeBuffered, isFailure, runInvocation, sendGatewayError } from './invoke';
import { cpuMicros, hostCpu } from './host-cpu';
import { LocalResponseStream } from './lambda-runtime';
import { type TraceSampling, lambdaContext, toProxyEvent, traceSampler } from './proxy-event';
import type { TraceCollector } from './trace-collector';
import type { KeyCheck } from './domain';
import { stopwatch, traceContextOf } from '../../functions/telemetry/trace';

export type { BufferedHandler };
export type StreamingHandler = (event: APIGatewayProxyEvent, stream: Writable, context: Context) => Promise<void>;

export interface MountedRoute {
  route: Route;
  handler: BufferedHandler | StreamingHandler;
}

// What a refused request still sends is read and thrown away up to this size, so that the client, which is
// still sending, reads its answer rather than a reset connection. Past it, the connection is cut.
const MAX_DISCARD_BYTES = 64 * 1024 * 1024;
/** The body a route that takes none (GET, HEAD) may carry; past it, a 413 before it is read. */
export const NO_BODY_BYTES = 8 * 1024;
/** Request bodies held at once, across connections: past it, a request is refused (429) rather than read. */
export const MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
export interface LocalServerOptions {
  /** The function guard's answer to a key: an API request with no live key is refused before its body is read. */
  keyCheck?: KeyCheck;
  /** How long a client has to send its whole request (default 30 s); a slower one is cut off with a 408. */
  requestTimeoutMs?: number;
  /** Watches each answer as it is sent, changing nothing (the contract checker, lib/local/contract.ts). */
  observe?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Where each invocation's segment goes (the functions send their calls' subsegments there themselves). */
  traces?: Pick<TraceCollector, 'keep'>;
  /**
   * Which requests are traced: by default every one; with a rule, as the stack's sampling rule decides in AWS
   * (the bench's host: X-Ray's tracing is not every request's cost there). An unsampled request's event says
   * `Sampled=0` and no segment is kept for it.
   */
  tracing?: TraceSampling & { clock?: () => number; random?: () => number };
  /**
   * Failed keys a source address may send in a burst, and how many more a second: past them the address's
   * requests get a 429 before their key is checked, so guessing goes no faster. Unset, nothing is counted.
   */
  keyFailures?: { burst: number; perSecond: number; clock?: () => number };
  /** The count of request-body bytes held across connections (MAX_BUFFERED_BYTES caps it); tests read it. */
  budget?: { buffered: number };
  /**
   * Whether an invocation is cut off at its function's or API Gateway's timeout, as in AWS (default true).
   * Tests turn it off: on a busy test machine wall time says nothing of how long Lambda would take.
   */
  cutOffLateAnswers?: boolean;
  /**
   * The clock a function's timeout is measured on: past it, the invocation's AWS calls are refused and its
   * answer is the gateway's failure, as Lambda stops a function at its timeout (lib/local/invoke.ts). By
   * default the machine's when answers are cut off, and one that stands still when they are not (tests, whose
   * wall time says nothing of Lambda's); a test that needs a function stopped drives its own.
   */
  invocationClock?: () => number;
  /**
   * The host's own line for every request (`GET /drive/list 200 12ms`), as API Gateway's access log would add
   * (`DRIVE_LOCAL_ACCESS_LOG=1`). By default only a request no function logged has it (the host's own answers:
   * no route, too large, an unknown key's 429, a function that failed): a request writes one line.
   */
  accessLog?: boolean;
}

/** The clock of a host whose answers are not cut off: a function's timeout never passes on it. */
const standingClock = () => 0;

/** Answers whose function wrote the request's line itself (api-handler.ts), so the host writes none. */
const functionLogged = new WeakSet<ServerResponse>();

/**
 * An HTTP server that plays API Gateway in front of the handlers: it routes, enforces the payload limit,
 * builds the proxy event, invokes the handler module Lambda would run, and writes back its result.
 */
export function createLocalServer(routes: readonly MountedRoute[], log: (line: string) => void, options: LocalServerOptions = {}): Server {
  const budget = options.budget ?? { buffered: 0 };
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const failures = options.keyFailures ? new FailureBuckets(options.keyFailures) : undefined;
  const sampled = options.tracing ? traceSampler(options.tracing, options.tracing.clock, options.tracing.random) : () => true;
  // Timeouts are checked every second (Node's default, 30 s, would let a slow sender stay twice as long).
  // Idle keep-alive connections are kept a minute (as API Gateway's front does), well past any client's own
  // idle timeout, so a client never sends on a connection the host is closing.
  const server = createServer({ requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: 1000, keepAliveTimeout: 61_000 }, (req, res) => {
    const started = Date.now();
    // Named on arrival, as API Gateway names it: its own answers, the function's event and the host's errors all carry it.
    const requestId = randomUUID();
    res.setHeader(GATEWAY_REQUEST_ID_HEADER, requestId);
    options.observe?.(req, res);
    res.on('finish', () => {
      if (options.accessLog || !functionLogged.has(res)) log(`${req.method} ${loggedPath(routes, req.url)} ${res.statusCode} ${Date.now() - started}ms`);
    });
    // A refused request whose client hangs up while its body is dropped never finishes: it is logged all the same.
    res.on('close', () => {
      if (!res.writableFinished && res.headersSent) log(`${req.method} ${loggedPath(routes, req.url)} ${res.statusCode} ${Date.now() - started}ms (the client closed the connection first)`);
    });
    handle(routes, req, res, budget, options, requestId, failures, sampled).catch((error: unknown) => {
      // A client that hung up is no failure of the handler's: a line in the log, below error level. (Not
      // `req.destroyed`: a request whose body has been read is destroyed too, though its client still waits.)
      if (req.socket.destroyed || res.destroyed) {
        log(`${req.method} ${loggedPath(routes, req.url)}: the client closed the connection before the answer (${String(error)})`);
        return void res.destroy();
      }
      // What API Gateway sends when the integration fails; past the first byte, the connection closes there.
      functionLogged.delete(res);
      sendGatewayError(res, { status: 502, error: 'serverError', reason: `the handler failed: ${String(error)}` }, requestId);
    });
  });
  // What Node's parser refuses (headers or target over 16 KB, malformed lines) still gets a JSON answer.
  // A request answered before its body ended (refuse) that then runs out of time has had its answer: cut it.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || answeredEarly.has(socket)) return void socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const slow = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const message = tooLarge ? 'the request line and headers are larger than 16 KB' : slow ? `the request was not sent whole within ${requestTimeout / 1000} s` : 'the request is not valid HTTP';
    // Named as every other answer is, though no request event was made for it.
    const requestId = randomUUID();
    const body = JSON.stringify({ error: { code: 'bad_request', message, request_id: requestId } });
    const status = tooLarge ? '431 Request Header Fields Too Large' : slow ? '408 Request Timeout' : '400 Bad Request';
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${GATEWAY_REQUEST_ID_HEADER}: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

/** The path a log line names: the one called, or for a route whose path holds a secret, the route's template. */
function loggedPath(routes: readonly MountedRoute[], target: string | undefined): string {
  let path: string;
  try {
    // Resolved as the router resolves it (dot segments), so that every form that reaches a secret route is seen.
    path = new URL(`http://localhost${target ?? '/'}`).pathname;
  } catch {
    return '(a target that is not a URL)';
  }
  const secret = routes.find(({ route }) => route.secretPath && (matchPath(route.path, path) || matchPath(route.path, path.replace(/\/+$/, ''))));
  if (secret) return secret.route.path;
  // An API route's ids (jobs, uploads, keys, links) are no secrets, and a log that hides them is of less use.
  if (routes.some(({ route }) => 'permission' in route && matchPath(route.path, path))) return path;
  // Any other spelling of a secret route's first segments (doubled slashes, another case, escapes), which no
  // route matched: the rest stays out of the log, as does any segment shaped like a token.
  const spelled = loose(path);
  for (const { route } of routes) {
    if (!route.secretPath) continue;
    const prefix = route.path.slice(0, route.path.indexOf('{'));
    const at = spelled.indexOf(loose(prefix));
    if (at !== -1) return `${prefix}…`;
  }
  return path
    .split('/')
    .map((segment) => (TOKEN_SHAPED.test(segment) ? '…' : segment))
    .join('/');
}

/** A share link's token (43 base64url characters) or anything as long and as random-looking. */
const TOKEN_SHAPED = /^[A-Za-z0-9_%-]{32,}$/;

/** A path as loosely as anyone might spell it: escapes decoded, slashes single, lower case. */
function loose(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Malformed escapes stay as they are.
  }
  return decoded.replace(/\/+/g, '/').toLowerCase();
}

async function handle(
  routes: readonly MountedRoute[],
  req: IncomingMessage,
  res: ServerResponse,
  budget: { buffered: number },
  options: LocalServerOptions,
  requestId: string,
  failures: FailureBuckets | undefined,
  sampled: () => boolean,
): Promise<void> {
  let url: URL;
  try {
    // Prefixing keeps a path like "//drive/list" a path rather than a host.
    url = new URL(`http://localhost${req.url ?? '/'}`);
  } catch {
    return refuse(req, res, 400, { error: { code: 'bad_request', message: 'the request target is not a valid URL path', request_id: requestId } });
  }
  const onPath = routes.filter(({ route }) => matchPath(route.path, url.pathname));
  const mounted = onPath.find(({ route }) => route.method === req.method);
  if (!mounted && req.method === 'OPTIONS' && onPath.length > 0 && CORS_ORIGINS.length > 0) {
    // The preflight API Gateway answers itself (a mock integration) when CORS origins are configured.
    const origin = req.headers.origin;
    const allowed = CORS_ORIGINS.includes('*') ? '*' : origin && CORS_ORIGINS.includes(origin) ? origin : undefined;
    res.writeHead(204, {
      ...(allowed ? { 'Access-Control-Allow-Origin': allowed } : {}),
      'Access-Control-Allow-Methods': onPath.map(({ route }) => route.method).join(', '),
      'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS.join(', '),
      'Access-Control-Max-Age': '3600',
      Vary: 'Origin',
    });
    return afterBody(req, res);
  }
  if (!mounted) {
    // API Gateway answers a path or method it has no route for as "Missing Authentication Token", which the
    // stack's gateway response turns into the spec's 404.
    return refuseAsGateway(req, res, { status: 404, error: 'noRoute', reason: `no route for ${req.method} ${url.pathname}` }, requestId);
  }

  // A route that takes no body holds none: a large one is refused before it is read (keyless routes included).
  const bodyLimit = mounted.route.method === 'GET' || mounted.route.method === 'HEAD' ? NO_BODY_BYTES : AWS_LIMITS.apiGatewayBodyBytes;
  if (Number(req.headers['content-length'] ?? 0) > bodyLimit) return refuseTooLarge(req, res, bodyLimit, requestId);

  if ('permission' in mounted.route && options.keyCheck) {
    const address = req.socket.remoteAddress ?? '';
    // A key that was sent is a guess until it proves live, and takes a token of its address's bucket first
    // (given back if it is live), so a burst sent at once cannot pass the bucket. A request with no key is no guess.
    const charged = failures !== undefined && req.headers.authorization !== undefined && !failures.knownLive(req.headers.authorization);
    const wait = charged ? failures.take(address) : undefined;
    if (wait !== undefined) {
      // An address that sent too many wrong keys is not heard until its bucket refills: no key is checked.
      res.setHeader(options.keyCheck.requestIdHeader, requestId);
      const message = `too many requests with an unknown key from this address; retry in ${wait} second${wait === 1 ? '' : 's'}`;
      return refuse(req, res, 429, { error: { code: 'rate_limited', message, request_id: requestId } }, { 'Retry-After': String(wait) });
    }
    // A stranger's body is never read: refused as the function's guard would refuse it, before a byte is held.
    const refusal = await options.keyCheck.refusal(req.headers.authorization);
    if (refusal) {
      // Named and logged as the function's guard names and logs the 401 it would send.
      res.setHeader(options.keyCheck.requestIdHeader, requestId);
      options.keyCheck.logRefusal(mounted.route.path, req.method ?? '', requestId);
      functionLogged.add(res);
      return refuse(req, res, 401, { error: { code: refusal.code, message: refusal.message, request_id: requestId } });
    }
    if (charged) failures.proved(address, req.headers.authorization!);
  }
  const body = await readBody(req, budget, bodyLimit);
  if (body === 'too large') return refuseTooLarge(req, res, bodyLimit, requestId);
  if (body === 'busy') {
    const message = 'the host holds as many request bodies as it may; retry in 1 second';
    return refuse(req, res, 429, { error: { code: 'rate_limited', message, request_id: requestId } }, { 'Retry-After': '1' });
  }
  try {
    await answer(mounted, req, res, url, body, requestId, sampled() ? options.traces : 'unsampled', options.cutOffLateAnswers ?? true, options.invocationClock ?? (options.cutOffLateAnswers === false ? standingClock : Date.now));
  } finally {
    budget.buffered -= body.length;
  }
}

/** Sockets whose answer was sent before their request's body had ended (see refuse). */
const answeredEarly = new WeakSet<object>();

/**
 * Answers `req` before its body is read, as API Gateway answers its own refusals: the answer is sent whole at
 * once, then whatever the client still sends is read and dropped, never held, up to MAX_DISCARD_BYTES, and only
 * then is the connection closed. Closed at once, it would reset while the client still sends, and the client
 * would never read its answer (an EPIPE for a 401).
 */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)), Connection: 'close' });
  // Written, not ended: the client can read all of it now; ending waits for the body's end (afterBody).
  res.write(text);
  afterBody(req, res);
}

/** Ends `res` once the rest of `req`'s body has been read and dropped (cut past MAX_DISCARD_BYTES). */
function afterBody(req: IncomingMessage, res: ServerResponse): void {
  const end = () => {
    if (!res.destroyed && !res.writableEnded) res.end();
  };
  if (req.complete) return end();
  answeredEarly.add(req.socket);
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DISCARD_BYTES) req.socket.destroy();
  });
  req.once('end', end);
  req.once('error', () => req.socket.destroy());
  req.resume();
}

/** API Gateway's own answer to a request it refuses before the function (no route, too large), as refuse sends it. */
function refuseAsGateway(req: IncomingMessage, res: ServerResponse, failure: GatewayFailure, requestId: string): void {
  refuse(req, res, failure.status, gatewayErrorBody(failure.error, requestId), { [GATEWAY_REQUEST_ID_HEADER]: requestId });
}

/** The 413 for a body over `limit`: API Gateway's own, or the host's for a route that takes no body. */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse, limit: number, requestId: string): void {
  if (limit === AWS_LIMITS.apiGatewayBodyBytes) return refuseAsGateway(req, res, { status: 413, error: 'tooLarge', reason: `the body is over ${limit} bytes` }, requestId);
  const message = `${req.method} ${new URL(`http://localhost${req.url ?? '/'}`).pathname} takes no request body; the host reads at most ${limit} bytes of one`;
  refuse(req, res, 413, { error: { code: 'payload_too_large', message, request_id: requestId } }, { [GATEWAY_REQUEST_ID_HEADER]: requestId });
}

/** Hands the request, body read, to its handler as API Gateway would, and writes back what it answers. */
async function answer(
  mounted: MountedRoute,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: Buffer,
  requestId: string,
  traces: Pick<TraceCollector, 'keep'> | undefined | 'unsampled',
  cutOff: boolean,
  clock: () => number,
): Promise<void> {
  const params = matchPath(mounted.route.path, url.pathname)!;
  let cpu = cpuMicros();
  const event = deliver(toProxyEvent(req, url, mounted.route, body, Object.keys(params).length > 0 ? params : null, requestId, traces !== 'unsampled'));
  if (isFailure(event)) return sendGatewayError(res, event, requestId);
  const limit = invocationTimeout(mounted.route.handler, mounted.route.streaming);
  const context = lambdaContext(`drive-${mounted.route.handler}`, limit.ms);
  // Not cut off: the handler still sees its function's timeout, but is given as long as it takes.
  const timeout = cutOff ? limit : { ...limit, ms: 2 ** 31 - 1 };
  const timeoutSeconds = FUNCTION_SIZING[mounted.route.handler].timeoutSeconds;
  const invocation: Invocation = { functionName: context.functionName, timeoutSeconds, deadline: clock() + timeoutSeconds * 1000, clock };
  const timer = stopwatch();
  const invoked = (status: number) => {
    const now = cpuMicros();
    hostCpu.invocations++;
    hostCpu.handlerMicros += now - cpu;
    cpu = now;
    if (traces && traces !== 'unsampled') traces.keep(invocationSegment(event, context.functionName, timer, status));
  };
  const built = cpuMicros();
  hostCpu.emulationMicros += built - cpu;
  cpu = built;
  if (mounted.route.streaming) {
    const stream = new LocalResponseStream(res, AWS_LIMITS.streamedResponseBytes, requestId);
    // Past the function's timeout Lambda stops the stream: the client gets what was sent, or the gateway's error.
    const timer = setTimeout(() => {
      // Cut off: the host's line says so, whatever the function logged as it began.
      functionLogged.delete(res);
      stream.cutOff({ ...timeout, error: 'serverError', reason: `the stream ran past ${timeout.ms / 1000} s` });
    }, timeout.ms);
    // A streamed answer ends inside the handler, after the function has logged it as it began (unless the
    // handler fails: then the host answers, and logs, itself).
    functionLogged.add(res);
    try {
      await runInvocation(invocation, () => (mounted.handler as StreamingHandler)(event, stream, context));
      if (!stream.writableFinished) stream.end();
    } finally {
      clearTimeout(timer);
      invoked(res.statusCode);
    }
    return;
  }
  const result = await invokeBuffered(mounted.handler as BufferedHandler, event, context, timeout, invocation);
  invoked(isFailure(result) ? result.status : result.statusCode);
  if (isFailure(result)) return sendGatewayError(res, result, requestId);
  functionLogged.add(res);
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) res.setHeader(name, values.map(String));
  res.statusCode = result.statusCode;
  res.end(Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8'));
  hostCpu.emulationMicros += cpuMicros() - cpu;
}

/**
 * The segment Lambda's active tracing records for an invocation, under the trace and with the id the event's
 * `X-Amzn-Trace-Id` names: the functions' subsegments hang below it. (In AWS, API Gateway's segment and
 * Lambda's own come before it; the host records the one.)
 */
function invocationSegment(event: APIGatewayProxyEvent, functionName: string, timer: ReturnType<typeof stopwatch>, status: number): Record<string, unknown> {
  const trace = traceContextOf(event.headers['X-Amzn-Trace-Id']);
  return {
    name: functionName,
    id: trace?.parent,
    trace_id: trace?.root,
    origin: 'AWS::Lambda::Function',
    start_time: timer.start / 1000,
    end_time: timer.stop() / 1000,
    http: { request: { method: event.httpMethod, url: event.resource }, response: { status } },
    ...(status >= 500 ? { fault: true } : status === 429 ? { throttle: true, error: true } : status >= 400 ? { error: true } : {}),
    aws: { request_id: event.requestContext.requestId },
  };
}

/**
 * The whole body, or 'too large' as soon as it passes `limit`, or 'busy' if holding it would pass the host's
 * budget of buffered bytes; on either, the rest is left unread for the refusal (refuse). The bytes held are
 * counted in `budget` until the caller gives them back; a body given up on gives its bytes back at once.
 */
function readBody(req: IncomingMessage, budget: { buffered: number }, limit: number): Promise<Buffer | 'too large' | 'busy'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Settled once, whichever comes first: a body given up on, then cut off mid-drain, must not give its bytes
    // back a second time (the budget would go below zero and hold more than its cap).
    const settle = (outcome: Buffer | 'too large' | 'busy' | Error) => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      // An abort later on (during a refusal's drain) is nobody's failure.
      req.on('error', () => undefined);
      if (outcome instanceof Error || !Buffer.isBuffer(outcome)) {
        budget.buffered -= size;
        size = 0;
        chunks.length = 0;
      }
      if (outcome instanceof Error) return reject(outcome);
      if (!Buffer.isBuffer(outcome)) req.pause();
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limit) return settle('too large');
      if (budget.buffered + chunk.length > MAX_BUFFERED_BYTES) return settle('busy');
      budget.buffered += chunk.length;
      size += chunk.length;
      chunks.push(chunk);
    };
    // The caller gives `size` back, as the body's length, once the request is answered.
    const onEnd = () => settle(Buffer.concat(chunks, size));
    const onError = (error: Error) => settle(error);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/**
 * A token bucket per source address for the keys it gets wrong (GCRA: one "theoretical arrival time" each).
 * Addresses whose bucket is full again are forgotten, so the map holds only recent guessers. A key that proved
 * live in the last 10 minutes is heard even from a throttled address: the host listens on loopback, where every
 * local client shares one address, and one cron job retrying a revoked key must not lock the owner out.
 */
class FailureBuckets {
  private readonly next = new Map<string, number>();
  /** SHA-256 of Authorization headers that held a live key, and until when they are trusted. */
  private readonly live = new Map<string, number>();
  private readonly interval: number;
  private readonly tolerance: number;
  private readonly clock: () => number;

  constructor({ burst, perSecond, clock }: { burst: number; perSecond: number; clock?: () => number }) {
    this.interval = 1000 / perSecond;
    this.tolerance = this.interval * burst;
    this.clock = clock ?? Date.now;
  }

  /** Takes a token of `address`'s bucket, or answers the seconds until one is there (and takes none). */
  take(address: string): number | undefined {
    const now = this.clock();
    const tat = Math.max(this.next.get(address) ?? now, now);
    if (tat + this.interval - now > this.tolerance) return Math.max(1, Math.ceil((tat + this.interval - now - this.tolerance) / 1000));
    this.next.set(address, tat + this.interval);
    if (this.next.size > 10_000) for (const [key, at] of this.next) if (at <= now) this.next.delete(key);
    return undefined;
  }

  /** Gives back the token `address` took for `authorization`, which held a live key, and trusts it for a while. */
  proved(address: string, authorization: string): void {
    const tat = this.next.get(address);
    if (tat !== undefined) this.next.set(address, tat - this.interval);
    if (this.live.size >= 1_000) this.live.clear();
    this.live.set(digest(authorization), this.clock() + 600_000);
  }

  /** Whether `authorization` held a live key in the last 10 minutes. */
  knownLive(authorization: string): boolean {
    const until = this.live.get(digest(authorization));
    return until !== undefined && until > this.clock();
  }
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

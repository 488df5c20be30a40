import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Writable } from 'node:stream';
import { CORS_ORIGINS, CORS_REQUEST_HEADERS } from '../../functions/http/cors';
import { AWS_LIMITS, GATEWAY_REQUEST_ID_HEADER } from '../aws-limits';
import { type Route, matchPath } from '../routes';
import { type BufferedHandler, deliver, invocationTimeout, invokeBuffered, isFailure, sendGatewayError } from './invoke';
import { cpuMicros, hostCpu } from './host-cpu';
import { LocalResponseStream } from './lambda-runtime';
import { lambdaContext, toProxyEvent } from './proxy-event';
import type { TraceCollector } from './trace-collector';
import { stopwatch, traceContextOf } from '../../functions/telemetry/trace';
import { DriveError } from '../../functions/core/errors';
import { bearerSecret, unknownKey } from '../../functions/http/guard';
import { REQUEST_ID_HEADER, logRequest } from '../../functions/http/request-log';

export type { BufferedHandler };
export type StreamingHandler = (event: APIGatewayProxyEvent, stream: Writable, context: Context) => Promise<void>;

export interface MountedRoute {
  route: Route;
  handler: BufferedHandler | StreamingHandler;
}

// A body over the limit is still read to its end (and thrown away) up to this size, so that the client,
// which is still sending, then reads the 413 rather than a reset connection. Past it, answer and drop.
const MAX_DISCARD_BYTES = 64 * 1024 * 1024;
/** Request bodies held at once, across connections: past it, a request is refused (429) rather than read. */
export const MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
export interface LocalServerOptions {
  /** Whether a live key has this secret: an API request with none is refused before its body is read. */
  knownKey?: (secret: string) => Promise<boolean>;
  /** How long a client has to send its whole request (default 30 s); a slower one is cut off with a 408. */
  requestTimeoutMs?: number;
  /** Watches each answer as it is sent, changing nothing (the contract checker, lib/local/contract.ts). */
  observe?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Where each invocation's segment goes (the functions send their calls' subsegments there themselves). */
  traces?: Pick<TraceCollector, 'keep'>;
}

/**
 * An HTTP server that plays API Gateway in front of the handlers: it routes, enforces the payload limit,
 * builds the proxy event, invokes the handler module Lambda would run, and writes back its result.
 */
export function createLocalServer(routes: readonly MountedRoute[], log: (line: string) => void, options: LocalServerOptions = {}): Server {
  const budget = { buffered: 0 };
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  // Timeouts are checked every second (Node's default, 30 s, would let a slow sender stay twice as long).
  // Idle keep-alive connections are kept a minute (as API Gateway's front does), well past any client's own
  // idle timeout, so a client never sends on a connection the host is closing.
  const server = createServer({ requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: 1000, keepAliveTimeout: 61_000 }, (req, res) => {
    const started = Date.now();
    // Named on arrival, as API Gateway names it: its own answers, the function's event and the host's errors all carry it.
    const requestId = randomUUID();
    res.setHeader(GATEWAY_REQUEST_ID_HEADER, requestId);
    options.observe?.(req, res);
    res.on('finish', () => log(`${req.method} ${loggedPath(routes, req.url)} ${res.statusCode} ${Date.now() - started}ms`));
    handle(routes, req, res, budget, options, requestId).catch((error: unknown) => {
      // A client that hung up is no failure of the handler's: a line in the log, below error level. (Not
      // `req.destroyed`: a request whose body has been read is destroyed too, though its client still waits.)
      if (req.socket.destroyed || res.destroyed) {
        log(`${req.method} ${loggedPath(routes, req.url)}: the client closed the connection before the answer (${String(error)})`);
        return void res.destroy();
      }
      // What API Gateway sends when the integration fails; past the first byte, the connection closes there.
      sendGatewayError(res, { status: 502, error: 'serverError', reason: `the handler failed: ${String(error)}` }, requestId);
    });
  });
  // What Node's parser refuses (headers or target over 16 KB, malformed lines) still gets a JSON answer.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const slow = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const message = tooLarge ? 'the request line and headers are larger than 16 KB' : slow ? `the request was not sent whole within ${requestTimeout / 1000} s` : 'the request is not valid HTTP';
    const body = JSON.stringify({ error: { code: 'bad_request', message } });
    const status = tooLarge ? '431 Request Header Fields Too Large' : slow ? '408 Request Timeout' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
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
  // A path with a secret route's first segments, which no route matched (a trailing slash, an extra segment): its rest stays out of the log.
  const prefix = routes.find(({ route }) => route.secretPath && path.startsWith(route.path.slice(0, route.path.indexOf('{'))));
  return prefix ? `${prefix.route.path.slice(0, prefix.route.path.indexOf('{'))}…` : path;
}

async function handle(routes: readonly MountedRoute[], req: IncomingMessage, res: ServerResponse, budget: { buffered: number }, options: LocalServerOptions, requestId: string): Promise<void> {
  let url: URL;
  try {
    // Prefixing keeps a path like "//drive/list" a path rather than a host.
    url = new URL(`http://localhost${req.url ?? '/'}`);
  } catch {
    req.resume();
    return send(res, 400, { error: { code: 'bad_request', message: 'the request target is not a valid URL path', request_id: requestId } });
  }
  const onPath = routes.filter(({ route }) => matchPath(route.path, url.pathname));
  const mounted = onPath.find(({ route }) => route.method === req.method);
  if (!mounted && req.method === 'OPTIONS' && onPath.length > 0 && CORS_ORIGINS.length > 0) {
    // The preflight API Gateway answers itself (a mock integration) when CORS origins are configured.
    req.resume();
    const origin = req.headers.origin;
    const allowed = CORS_ORIGINS.includes('*') ? '*' : origin && CORS_ORIGINS.includes(origin) ? origin : undefined;
    res.writeHead(204, {
      ...(allowed ? { 'Access-Control-Allow-Origin': allowed } : {}),
      'Access-Control-Allow-Methods': onPath.map(({ route }) => route.method).join(', '),
      'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS.join(', '),
      'Access-Control-Max-Age': '3600',
      Vary: 'Origin',
    });
    return void res.end();
  }
  if (!mounted) {
    // API Gateway answers a path or method it has no route for as "Missing Authentication Token", which the
    // stack's gateway response turns into the spec's 404.
    req.resume();
    return sendGatewayError(res, { status: 404, error: 'noRoute', reason: `no route for ${req.method} ${url.pathname}` }, requestId);
  }

  if ('endpoint' in mounted.route && options.knownKey) {
    // A stranger's body is never read: refused as the function's guard would refuse it, before a byte is held.
    const refusal = await refuseKey(req.headers.authorization, options.knownKey);
    if (refusal) {
      // Whatever the client still sends is read and dropped (no byte held), so it reads the 401, not a reset.
      req.resume();
      res.setHeader('Connection', 'close');
      // Named and logged as the function's guard names and logs the 401 it would send (functions/http/request-log.ts).
      res.setHeader(REQUEST_ID_HEADER, requestId);
      logRefusal(mounted.route, req.method ?? '', requestId);
      return send(res, 401, { error: { code: refusal.code, message: refusal.message, request_id: requestId } });
    }
  }
  const body = await readBody(req, budget);
  if (body === 'busy') {
    req.resume();
    res.setHeader('Connection', 'close');
    res.setHeader('Retry-After', '1');
    return send(res, 429, { error: { code: 'rate_limited', message: 'the host holds as many request bodies as it may; retry in 1 second', request_id: requestId } });
  }
  try {
    await answer(mounted, req, res, url, body, requestId, options.traces);
  } finally {
    if (Buffer.isBuffer(body)) budget.buffered -= body.length;
  }
}

/** The 401 a request's key gets, or undefined for a live key. */
async function refuseKey(header: string | undefined, knownKey: (secret: string) => Promise<boolean>): Promise<DriveError | undefined> {
  try {
    return (await knownKey(bearerSecret(header))) ? undefined : unknownKey();
  } catch (error) {
    if (error instanceof DriveError) return error;
    throw error;
  }
}

/** Hands the request, body read, to its handler as API Gateway would, and writes back what it answers. */
async function answer(
  mounted: MountedRoute,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: Buffer | 'too large',
  requestId: string,
  traces?: Pick<TraceCollector, 'keep'>,
): Promise<void> {
  if (body === 'too large') {
    res.setHeader('Connection', 'close');
    return sendGatewayError(res, { status: 413, error: 'tooLarge', reason: `the body is over API Gateway's ${AWS_LIMITS.apiGatewayBodyBytes} bytes` }, requestId);
  }

  const params = matchPath(mounted.route.path, url.pathname)!;
  let cpu = cpuMicros();
  const event = deliver(toProxyEvent(req, url, mounted.route, body, Object.keys(params).length > 0 ? params : null, requestId));
  if (isFailure(event)) return sendGatewayError(res, event, requestId);
  const timeout = invocationTimeout(mounted.route.handler, mounted.route.streaming);
  const context = lambdaContext(`drive-${mounted.route.handler}`, timeout.ms);
  const timer = stopwatch();
  const invoked = (status: number) => {
    const now = cpuMicros();
    hostCpu.invocations++;
    hostCpu.handlerMicros += now - cpu;
    cpu = now;
    if (traces) traces.keep(invocationSegment(event, context.functionName, timer, status));
  };
  const built = cpuMicros();
  hostCpu.emulationMicros += built - cpu;
  cpu = built;
  if (mounted.route.streaming) {
    const stream = new LocalResponseStream(res, AWS_LIMITS.streamedResponseBytes, requestId);
    // Past the function's timeout Lambda stops the stream: the client gets what was sent, or the gateway's error.
    const timer = setTimeout(() => stream.cutOff({ ...timeout, error: 'serverError', reason: `the stream ran past ${timeout.ms / 1000} s` }), timeout.ms);
    try {
      await (mounted.handler as StreamingHandler)(event, stream, context);
      if (!stream.writableFinished) stream.end();
    } finally {
      clearTimeout(timer);
      invoked(res.statusCode);
    }
    return;
  }
  const result = await invokeBuffered(mounted.handler as BufferedHandler, event, context, timeout);
  invoked(isFailure(result) ? result.status : result.statusCode);
  if (isFailure(result)) return sendGatewayError(res, result, requestId);
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
 * The whole body, or 'too large' once it passes the limit (answered early if the client keeps sending), or
 * 'busy' if holding it would pass the host's budget of buffered bytes. The bytes held are counted in
 * `budget` until the caller gives them back; a body given up on gives its bytes back at once.
 */
function readBody(req: IncomingMessage, budget: { buffered: number }): Promise<Buffer | 'too large' | 'busy'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    const giveBack = () => {
      budget.buffered -= held;
      held = 0;
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= AWS_LIMITS.apiGatewayBodyBytes) {
        if (budget.buffered + chunk.length > MAX_BUFFERED_BYTES) {
          giveBack();
          chunks.length = 0;
          req.removeAllListeners('data');
          return resolve('busy');
        }
        budget.buffered += chunk.length;
        held += chunk.length;
        chunks.push(chunk);
      } else {
        giveBack();
        chunks.length = 0;
        if (size > MAX_DISCARD_BYTES) resolve('too large');
      }
    });
    req.on('end', () => {
      if (size > AWS_LIMITS.apiGatewayBodyBytes) return resolve('too large');
      // The caller gives `held` back, as the body's length, once the request is answered.
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      giveBack();
      reject(error);
    });
  });
}

/**
 * The line the function's guard would log for the 401 the host sends in its place: the request line of
 * functions/http/request-log.ts, metrics included, from the same code.
 */
function logRefusal(route: Route, method: string, requestId: string): void {
  const event = { resource: route.path, httpMethod: method, body: null, isBase64Encoded: false, headers: {}, multiValueHeaders: {}, requestContext: { requestId } } as unknown as APIGatewayProxyEvent;
  logRequest(event, { status: 401, startedAt: Date.now(), bytesOut: 0 });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

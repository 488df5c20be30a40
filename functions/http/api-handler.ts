import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, StreamifyHandler } from 'aws-lambda';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Caller, type Permission, conflictFor } from '../core/access';
import { DriveError } from '../core/errors';
import type { IdempotencyStore } from '../core/idempotency';
import { corsHeaders } from './cors';
import type { Guard } from './guard';
import { IdempotencySession, idempotencyKeyOf } from './idempotency';
import { withRequestContext } from '../telemetry/request-context';
import { REQUEST_ID_HEADER, bodyBytes, logRequest, requestIdOf, traceHeaderOf, traceIfAsked } from './request-log';
import { type Headers, Reply, errorResponse, ok, replied } from './respond';

/**
 * What a handler receives for one request: who calls and on which drive, the stores its endpoint names, the
 * request's id, and the time by which it must have answered.
 */
export interface RequestContext<S> {
  caller: Caller;
  /** The caller's drive: everything the request reads or writes is in it. */
  drive: string;
  stores: S;
  requestId: string;
  /** When the invocation runs out of time, in epoch milliseconds (see `deadlineOf`). */
  deadline: number;
}

/**
 * One endpoint of the API: the permission its route asks, the guard that checks it, and the stores its
 * handler uses. The handler module names them from functions/wiring, one module per store, each built once
 * per container: a bundle then holds the adapters and SDK clients its route uses and no others.
 */
export interface Endpoint<S> {
  permission: Permission;
  guard: Guard;
  stores: S;
  /**
   * Where the route keeps its Idempotency-Key records: given for the routes the route table marks
   * `idempotent` (functions/http/routes.ts), and only for them. A request without the header makes no call of it.
   */
  idempotency?: IdempotencyStore;
}

/** API Gateway's integration timeout: no answer is heard after it, whatever the function's own timeout. */
const GATEWAY_TIMEOUT_MS = 29_000;

/**
 * The time the request must have answered by: the Lambda invocation's remaining time, and never past API
 * Gateway's 29 s from `startedAt`. Without a Lambda context (a direct call in a test), the gateway's bound.
 */
export function deadlineOf(lambda: Pick<Context, 'getRemainingTimeInMillis'> | undefined, startedAt: number): number {
  const gateway = startedAt + GATEWAY_TIMEOUT_MS;
  return lambda ? Math.min(gateway, startedAt + lambda.getRemainingTimeInMillis()) : gateway;
}

/** A buffered endpoint's handler, as Lambda calls it; `idempotent` when it honours Idempotency-Key. */
export type JsonHandler = ((event: APIGatewayProxyEvent, lambda?: Context) => Promise<APIGatewayProxyResult>) & { idempotent: boolean };

/**
 * A buffered endpoint: guard, then `operation`, whose result is sent in the `data` envelope (a `Reply` picks its
 * own status). With an `idempotency` store, a request that sends `Idempotency-Key` takes it beside the guard's
 * rate-limit bucket and gets the first answer again if the same request ran before (functions/http/idempotency.ts).
 */
export function jsonHandler<S>(
  endpoint: Endpoint<S>,
  operation: (event: APIGatewayProxyEvent, context: RequestContext<S>) => Promise<unknown>,
): JsonHandler {
  const handler = (event: APIGatewayProxyEvent, lambda?: Context) => withRequestContext(requestIdOf(event), async () => {
    const startedAt = Date.now();
    const requestId = requestIdOf(event);
    let headers: Headers = { ...corsHeaders(event), [REQUEST_ID_HEADER]: requestId };
    let caller: Caller | undefined;
    let answer: APIGatewayProxyResult;
    let session: IdempotencySession | undefined;
    let reason: string | undefined;
    try {
      session = idempotencySession(endpoint.idempotency, event, lambda);
      const admitted = await endpoint.guard(endpoint.permission, event, session && ((who) => session!.take(who)));
      headers = { ...headers, ...admitted.headers };
      caller = admitted.caller;
      traceIfAsked(event, caller);
      if (session && !session.taken) await session.take(caller);
      const replay = session?.replayed(headers);
      if (replay) {
        logRequest(event, { status: replay.statusCode, caller, startedAt, bytesOut: bodyBytes(replay.body, false) });
        return replay;
      }
      const result = await operation(event, { caller, drive: caller.drive, stores: endpoint.stores, requestId, deadline: deadlineOf(lambda, startedAt) });
      answer = result instanceof Reply ? replied(result, headers) : ok(result, headers);
    } catch (error) {
      // Worded for the key: a conflict tells it nothing it may not see.
      const shown = caller ? conflictFor(caller, error) : error;
      reason = shown instanceof DriveError ? shown.reason : undefined;
      answer = errorResponse(shown, headers, requestId);
      // Refused before the handler ran (the bucket taken beside the key): the key is free again.
      if (!caller) await session?.abandon();
    }
    await session?.settle(answer, reason);
    logRequest(event, { status: answer.statusCode, caller, startedAt, bytesOut: bodyBytes(answer.body, answer.isBase64Encoded) });
    return answer;
  }, traceHeaderOf(event));
  return Object.assign(handler, { idempotent: endpoint.idempotency !== undefined });
}

/** The request's Idempotency-Key session, when the endpoint keeps keys and the request sends one (a 400 for a malformed one). */
function idempotencySession(store: IdempotencyStore | undefined, event: APIGatewayProxyEvent, lambda: Pick<Context, 'getRemainingTimeInMillis'> | undefined): IdempotencySession | undefined {
  if (!store) return undefined;
  const key = idempotencyKeyOf(event);
  if (key === undefined) return undefined;
  // Held for as long as the function may run (its timeout), not the gateway's 29 s: a handler past them still writes.
  const runMs = lambda ? lambda.getRemainingTimeInMillis() : GATEWAY_TIMEOUT_MS;
  return new IdempotencySession(store, key, event, runMs);
}

/**
 * A buffered route that takes no API key (the token exchange): `operation` answers, or throws an error that is
 * sent as JSON. Headers it puts in `answered` (rate limits) go on the answer whichever it is; a caller it
 * puts in `seen` (the key it minted) is named in the request's log line.
 */
export function keylessJsonHandler<S>(
  endpoint: { stores: S },
  operation: (event: APIGatewayProxyEvent, answered: Headers, seen: { caller?: Caller }, context: Omit<RequestContext<S>, 'caller' | 'drive'>) => Promise<unknown>,
): (event: APIGatewayProxyEvent, lambda?: Context) => Promise<APIGatewayProxyResult> {
  return (event, lambda) => withRequestContext(requestIdOf(event), async () => {
    const startedAt = Date.now();
    const requestId = requestIdOf(event);
    const headers: Headers = { ...corsHeaders(event), [REQUEST_ID_HEADER]: requestId };
    const seen: { caller?: Caller } = {};
    let answer: APIGatewayProxyResult;
    try {
      answer = ok(await operation(event, headers, seen, { stores: endpoint.stores, requestId, deadline: deadlineOf(lambda, startedAt) }), headers);
    } catch (error) {
      answer = errorResponse(error, headers, requestId);
    }
    logRequest(event, { status: answer.statusCode, caller: seen.caller, startedAt, bytesOut: bodyBytes(answer.body, answer.isBase64Encoded) });
    return answer;
  }, traceHeaderOf(event));
}

/** What a streamed endpoint answers: a status, headers, and the bytes to stream after them, if any. */
export interface StreamedResult {
  statusCode: number;
  headers: Headers;
  body?: Readable;
}

/** A streamed endpoint: guard, then `operation`, whose body is piped to the client as it is read. */
export function streamingHandler<S>(
  endpoint: Endpoint<S>,
  operation: (event: APIGatewayProxyEvent, context: RequestContext<S>) => Promise<StreamedResult>,
): StreamifyHandler<APIGatewayProxyEvent, void> {
  return keylessStreamingHandler({ stores: endpoint.stores }, async (event, answered, seen, context) => {
    const admitted = await endpoint.guard(endpoint.permission, event);
    Object.assign(answered, admitted.headers);
    seen.caller = admitted.caller;
    traceIfAsked(event, admitted.caller);
    return operation(event, { ...context, caller: admitted.caller, drive: admitted.caller.drive });
  });
}

/**
 * A streamed route that takes no API key (share links): `operation` answers, or throws an error that is sent
 * as JSON. Headers it puts in `answered` (rate limits) go on the answer whichever it is.
 */
export function keylessStreamingHandler<S>(
  endpoint: { stores: S },
  operation: (event: APIGatewayProxyEvent, answered: Headers, seen: { caller?: Caller }, context: Omit<RequestContext<S>, 'caller' | 'drive'>) => Promise<StreamedResult>,
): StreamifyHandler<APIGatewayProxyEvent, void> {
  return (event, responseStream, lambda) => withRequestContext(requestIdOf(event), async () => {
    const startedAt = Date.now();
    const requestId = requestIdOf(event);
    const seen: { caller?: Caller } = {};
    // A client that hangs up fails the stream, maybe before anything is written: the pipeline below, or the
    // next write, reports it; unheard, the 'error' event would end the process.
    responseStream.on('error', () => undefined);
    const headers: Headers = { ...corsHeaders(event), [REQUEST_ID_HEADER]: requestId };
    let result: StreamedResult;
    try {
      result = await operation(event, headers, seen, { stores: endpoint.stores, requestId, deadline: deadlineOf(lambda, startedAt) });
    } catch (error) {
      const failure = errorResponse(error, headers, requestId);
      // A response to HEAD has no body (RFC 9110 §9.3.2), errors included.
      const body = event.httpMethod === 'HEAD' ? undefined : failure.body;
      logRequest(event, { status: failure.statusCode, caller: seen.caller, startedAt, bytesOut: bodyBytes(body, false) });
      await send(responseStream, failure.statusCode, failure.headers, body);
      return;
    }
    // The client may have gone while the file was opened: close the object's stream rather than leave it open.
    if (responseStream.destroyed) return void result.body?.destroy();
    // Logged when the answer starts: a stream cut short later is the runtime's to report.
    logRequest(event, { status: result.statusCode, caller: seen.caller, startedAt, bytesOut: streamedBytes(event, result) });
    await send(responseStream, result.statusCode, { ...headers, ...result.headers }, result.body);
  }, traceHeaderOf(event));
}

/** The bytes a stream will send, where its headers say (a file's Content-Length); none for HEAD or a bodiless answer. */
function streamedBytes(event: APIGatewayProxyEvent, result: StreamedResult): number | undefined {
  if (event.httpMethod === 'HEAD' || result.body === undefined) return 0;
  const length = Object.entries(result.headers).find(([name]) => name.toLowerCase() === 'content-length')?.[1];
  return length === undefined ? undefined : Number(length);
}

/**
 * Sends the status and headers, then `body`, and ends the stream. The Lambda runtime sends the prelude given
 * to `HttpResponseStream.from` just before the first `write()`, and never if the stream ends without one
 * (or by `end(chunk)`, which bypasses `write()`): so an empty write always comes first, which is what lets
 * a response without a body (HEAD, 304, an empty file) carry its status and headers.
 */
async function send(responseStream: Writable, statusCode: number, headers: Headers, body?: Readable | string): Promise<void> {
  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode, headers });
  if (stream.destroyed) return;
  stream.write('');
  if (body !== undefined && typeof body !== 'string') return pipeline(body, stream);
  if (body) stream.write(body);
  // `finish` or, for a client that hung up meanwhile, `close`: either ends the answer.
  await new Promise<void>((resolve) => {
    stream.once('close', resolve);
    stream.end(resolve);
  });
}

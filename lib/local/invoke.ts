import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { AWS_LIMITS, FUNCTION_SIZING, GATEWAY_REQUEST_ID_HEADER, type GATEWAY_ERRORS, gatewayErrorBody } from '../aws-limits';
import { log } from '../../functions/telemetry/log';
import type { HandlerName } from '../routes';

/** What API Gateway answers itself when the invocation cannot give an answer. */
export interface GatewayFailure {
  status: number;
  error: keyof typeof GATEWAY_ERRORS;
  /** Why, for the host's log (API Gateway's execution log says as much). */
  reason: string;
}

export type BufferedHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** How long an invocation of `handler` may run: its function's timeout, and 29 s more for a buffered answer. */
export function invocationTimeout(handler: HandlerName, streaming: boolean): { ms: number; status: number } {
  const functionSeconds = FUNCTION_SIZING[handler].timeoutSeconds;
  const gatewaySeconds = streaming ? AWS_LIMITS.streamedTimeoutSeconds : AWS_LIMITS.integrationTimeoutSeconds;
  // Whichever ends first answers: Lambda's own timeout is a failed invocation (502), API Gateway's a 504.
  return functionSeconds < gatewaySeconds ? { ms: functionSeconds * 1000, status: 502 } : { ms: gatewaySeconds * 1000, status: 504 };
}

/**
 * One invocation as the host runs it. Lambda stops a function at its timeout (its `timeout` in the stack,
 * FUNCTION_SIZING): nothing it would have done after that happens. The host cannot stop a promise, so it
 * refuses the invocation's AWS calls from then on (`stoppedInvocation`, checked by the handlers' clients) and
 * answers the gateway's failure instead of whatever the handler answers late. `clock` is the host's: the
 * machine's by default, one a test drives (never the wall clock of a busy machine).
 */
export interface Invocation {
  functionName: string;
  timeoutSeconds: number;
  /** On `clock`, when the function's timeout ends. */
  deadline: number;
  clock: () => number;
}

const invocations = new AsyncLocalStorage<Invocation>();

/** Runs `work` as `invocation`: what it starts (its AWS calls included) knows which invocation it is part of. */
export function runInvocation<T>(invocation: Invocation, work: () => T): T {
  return invocations.run(invocation, work);
}

/** Whether `invocation`'s function has passed its timeout on the host's clock. */
export function pastTimeout(invocation: Invocation): boolean {
  return invocation.clock() >= invocation.deadline;
}

/**
 * Why the invocation running now may do no more (its function passed its timeout, so Lambda would have
 * stopped it), or undefined: outside an invocation, or within its time.
 */
export function stoppedInvocation(): string | undefined {
  const invocation = invocations.getStore();
  if (!invocation || !pastTimeout(invocation)) return undefined;
  return `${invocation.functionName} ran past its timeout of ${invocation.timeoutSeconds} s; Lambda would have stopped it`;
}

/**
 * The event as the function receives it, through Lambda's JSON (so a header or parameter named `__proto__`
 * or `constructor` is an own property, as in AWS), or the refusal Lambda gives one over its payload limit,
 * measured as Lambda measures it.
 */
export function deliver(event: APIGatewayProxyEvent): APIGatewayProxyEvent | GatewayFailure {
  // The body is a string, which no handler can change, so it is handed over as it is and only the rest goes
  // through JSON: for an upload, writing out and reading back a body of megabytes was most of this host's work.
  const { body, ...rest } = event;
  const head = JSON.stringify(rest);
  const bytes = Buffer.byteLength(head) + bodyJsonBytes(body, event.isBase64Encoded);
  if (bytes > AWS_LIMITS.lambdaPayloadBytes) {
    return { status: 413, error: 'tooLarge', reason: `the event is ${bytes} bytes; Lambda takes at most ${AWS_LIMITS.lambdaPayloadBytes}` };
  }
  const delivered = JSON.parse(head) as APIGatewayProxyEvent;
  if (body !== undefined) delivered.body = body;
  return delivered;
}

/** What `,"body":…` adds to the event's JSON: base64 needs no escaping, so its characters are its bytes. */
function bodyJsonBytes(body: string | null | undefined, isBase64Encoded: boolean): number {
  if (body === undefined) return 0;
  const value = typeof body === 'string' && isBase64Encoded ? body.length + 2 : Buffer.byteLength(JSON.stringify(body));
  return ',"body":'.length + value;
}

/**
 * Invokes a buffered handler as API Gateway's proxy integration would, within `timeout`: a handler that
 * throws, answers late, answers a malformed result or one over Lambda's payload limit gets API Gateway's
 * failure instead. Past its function's timeout on the host's clock (`invocation`) the handler's AWS calls are
 * refused, as Lambda would have stopped it, and what it answers then is dropped for the same failure.
 */
export async function invokeBuffered(
  handler: BufferedHandler,
  event: APIGatewayProxyEvent,
  context: Context,
  timeout: { ms: number; status: number },
  invocation?: Invocation,
): Promise<APIGatewayProxyResult | GatewayFailure> {
  let timer: NodeJS.Timeout | undefined;
  const lateFailure = (): GatewayFailure => ({ status: timeout.status, error: 'serverError', reason: `the handler did not answer within ${timeout.ms / 1000} s` });
  const late = new Promise<GatewayFailure>((resolve) => {
    timer = setTimeout(() => resolve(lateFailure()), timeout.ms);
  });
  const run = () => handler(event, context).catch((error: unknown): GatewayFailure => ({ status: 502, error: 'serverError', reason: `the handler failed: ${String(error)}` }));
  try {
    const result = await Promise.race([invocation ? runInvocation(invocation, run) : run(), late]);
    // Stopped at its timeout on the host's clock: the gateway's answer, whatever the handler said after.
    if (invocation && pastTimeout(invocation)) return { ...lateFailure(), reason: `${invocation.functionName} ran past its timeout of ${invocation.timeoutSeconds} s and was stopped` };
    if (isFailure(result)) return result;
    return checkResult(result);
  } finally {
    clearTimeout(timer);
  }
}

/** A handler's result as API Gateway accepts it, or the 502 it answers for one it cannot use. */
function checkResult(result: unknown): APIGatewayProxyResult | GatewayFailure {
  const valid = typeof result === 'object' && result !== null && Number.isInteger((result as APIGatewayProxyResult).statusCode);
  if (!valid) return { status: 502, error: 'serverError', reason: 'the handler answered a malformed proxy result' };
  const bytes = Buffer.byteLength(JSON.stringify(result));
  if (bytes > AWS_LIMITS.lambdaPayloadBytes) {
    return { status: 502, error: 'serverError', reason: `the response is ${bytes} bytes; Lambda returns at most ${AWS_LIMITS.lambdaPayloadBytes}` };
  }
  return result as APIGatewayProxyResult;
}

export function isFailure(value: unknown): value is GatewayFailure {
  return typeof value === 'object' && value !== null && 'error' in value && 'reason' in value && !('statusCode' in value);
}

/**
 * API Gateway's own answer (as the stack's gateway responses render it, naming `requestId`), and why, in
 * the host's log. The request id header is the one API Gateway puts on its own answers; X-Request-Id is the
 * functions'.
 */
export function sendGatewayError(res: ServerResponse, failure: GatewayFailure, requestId: string): void {
  if (failure.status >= 500) log('ERROR', failure.reason, { request_id: requestId });
  if (res.headersSent) return void res.destroy();
  res.writeHead(failure.status, { 'Content-Type': 'application/json; charset=utf-8', [GATEWAY_REQUEST_ID_HEADER]: requestId });
  res.end(gatewayErrorBody(failure.error, requestId));
}

import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
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
 * failure instead. A late handler is not stopped (Lambda would freeze it); its answer is dropped.
 */
export async function invokeBuffered(
  handler: BufferedHandler,
  event: APIGatewayProxyEvent,
  context: Context,
  timeout: { ms: number; status: number },
): Promise<APIGatewayProxyResult | GatewayFailure> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<GatewayFailure>((resolve) => {
    timer = setTimeout(() => resolve({ status: timeout.status, error: 'serverError', reason: `the handler did not answer within ${timeout.ms / 1000} s` }), timeout.ms);
  });
  try {
    const result = await Promise.race([
      handler(event, context).catch((error: unknown): GatewayFailure => ({ status: 502, error: 'serverError', reason: `the handler failed: ${String(error)}` })),
      late,
    ]);
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

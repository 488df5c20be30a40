import type { APIGatewayProxyResult } from 'aws-lambda';
import { DriveError, IdempotencyError } from '../core/errors';
import { describeError, log } from '../telemetry/log';

export type Headers = Record<string, string>;

/** The Content-Type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A `200` with `payload` wrapped in the spec's `data` envelope. */
export function ok(payload: unknown, headers: Headers = {}): APIGatewayProxyResult {
  return { statusCode: 200, headers: { 'Content-Type': JSON_TYPE, ...headers }, body: JSON.stringify({ data: payload }) };
}

/** An answer other than `ok`'s: its status, the payload for the `data` envelope, and headers of its own. */
export class Reply {
  constructor(
    readonly statusCode: number,
    readonly payload: unknown,
    readonly headers: Headers = {},
  ) {}
}

/** `reply` as a response, with `headers` under its own. */
export function replied(reply: Reply, headers: Headers = {}): APIGatewayProxyResult {
  return { ...ok(reply.payload), statusCode: reply.statusCode, headers: { 'Content-Type': JSON_TYPE, ...headers, ...reply.headers } };
}

/**
 * The spec's error body for `error`, naming the request (`request_id`, as its `X-Request-Id` header does)
 * so that a client's report leads to its log line. Only a `DriveError` is shown to the client; anything
 * else is a bug or an outage, logged here with its cause and sent as a bare `internal_error`.
 */
export function errorResponse(error: unknown, headers: Headers = {}, requestId?: string): { statusCode: number; headers: Headers; body: string } {
  const known = error instanceof DriveError ? error : undefined;
  if (!known) log('ERROR', 'unhandled error', { request_id: requestId, error: describeError(error) });
  const statusCode = known?.status ?? 500;
  const body = {
    error: {
      code: known?.code ?? 'internal_error',
      message: known?.message ?? 'internal error; the request may be retried',
      ...(known?.reason ? { reason: known.reason } : {}),
      ...(known instanceof IdempotencyError ? { idempotency: known.idempotency } : {}),
      ...(requestId === undefined ? {} : { request_id: requestId }),
    },
  };
  return { statusCode, headers: { 'Content-Type': JSON_TYPE, ...headers, ...known?.headers }, body: JSON.stringify(body) };
}

import type { APIGatewayProxyResult } from 'aws-lambda';
import { DriveError } from '../core/errors';

export type Headers = Record<string, string>;

const JSON_TYPE = 'application/json; charset=utf-8';

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
 * The spec's error body for `error`. Only a `DriveError` is shown to the client; anything else is a
 * bug or an outage, logged here and sent as a bare `internal_error`.
 */
export function errorResponse(error: unknown, headers: Headers = {}): { statusCode: number; headers: Headers; body: string } {
  const known = error instanceof DriveError ? error : undefined;
  if (!known) console.error(JSON.stringify({ level: 'error', message: 'unhandled error', error: describe(error) }));
  const statusCode = known?.status ?? 500;
  const body = { error: { code: known?.code ?? 'internal_error', message: known?.message ?? 'internal error; the request may be retried', ...(known?.reason ? { reason: known.reason } : {}) } };
  return { statusCode, headers: { 'Content-Type': JSON_TYPE, ...headers, ...known?.headers }, body: JSON.stringify(body) };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
}

import type { APIGatewayProxyEvent } from 'aws-lambda';
import { setting } from '../config';
import { headerOf } from './event';
import type { Headers } from './respond';

/** Origins allowed to call from a browser, from `DRIVE_CORS_ORIGINS` (comma-separated, or `*`). */
export const CORS_ORIGINS = setting('corsOrigins');

// What a browser script may read beyond the CORS-safelisted headers (Content-Type, Content-Length and
// Last-Modified are among those): the download's name, its validator and range, and the rate limits.
const EXPOSED = [
  'Content-Disposition',
  'ETag',
  'Accept-Ranges',
  'Content-Range',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
  'Idempotent-Replayed',
].join(', ');

/** The request headers a preflight allows: the key, the body's type, those of ranged and conditional downloads (If-Match too), and a mutation's Idempotency-Key. */
export const CORS_REQUEST_HEADERS: readonly string[] = ['Authorization', 'Content-Type', 'Range', 'If-Range', 'If-None-Match', 'If-Modified-Since', 'If-Match', 'Idempotency-Key'];

/** The CORS headers for a response to `event`: none unless its Origin is allowed. */
export function corsHeaders(event: APIGatewayProxyEvent, allowed: readonly string[] = CORS_ORIGINS): Headers {
  const origin = headerOf(event, 'origin');
  if (!origin || allowed.length === 0) return {};
  if (allowed.includes('*')) return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED };
  if (!allowed.includes(origin)) return { Vary: 'Origin' };
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED, Vary: 'Origin' };
}

import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, type Endpoint, type KeyStore, type RateLimiter, hashSecret } from '../core/access';
import { DriveError } from '../core/errors';
import { headerOf } from './event';
import type { Headers } from './respond';

/** Checks a request's API key, then takes a token from its rate-limit bucket. */
export type Guard = (endpoint: Endpoint, event: APIGatewayProxyEvent) => Promise<{ caller: Caller; headers: Headers }>;

// RFC 6750 b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

const unauthorized = (message: string) => new DriveError('unauthorized', message);

/**
 * Builds the guard every endpoint runs first. Verified keys are cached for `keyCacheMs` in a warm
 * container, so a revoked key keeps working there for at most that long.
 */
export function createGuard(deps: {
  keys: KeyStore;
  limiter: RateLimiter;
  limits: Record<Endpoint, number> | undefined;
  keyCacheMs: number;
}): Guard {
  const cache = new Map<string, { caller: Caller; until: number }>();

  const authenticate = async (event: APIGatewayProxyEvent): Promise<Caller> => {
    const header = headerOf(event, 'authorization');
    if (!header) throw unauthorized('missing Authorization header; send "Authorization: Bearer <API key>"');
    const secret = BEARER.exec(header)?.[1];
    if (!secret) throw unauthorized('Authorization header must be "Bearer <API key>"');
    const hash = hashSecret(secret);
    const cached = cache.get(hash);
    if (cached && cached.until > Date.now()) return cached.caller;
    const caller = await deps.keys.find(hash);
    if (!caller) throw unauthorized('the API key is not valid');
    if (deps.keyCacheMs > 0) cache.set(hash, { caller, until: Date.now() + deps.keyCacheMs });
    return caller;
  };

  return async (endpoint, event) => {
    const caller = await authenticate(event);
    if (!deps.limits) return { caller, headers: {} };
    const limit = deps.limits[endpoint];
    const decision = await deps.limiter.take(`${caller.keyId}#${endpoint}`, limit);
    const headers: Headers = {
      'RateLimit-Limit': String(limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
    };
    if (!decision.allowed) {
      const wait = decision.retryAfterSeconds ?? 1;
      throw new DriveError(
        'rate_limited',
        `rate limit of ${limit} requests per minute for this endpoint exceeded; retry in ${wait} second${wait === 1 ? '' : 's'}`,
        { ...headers, 'Retry-After': String(wait) },
      );
    }
    return { caller, headers };
  };
}

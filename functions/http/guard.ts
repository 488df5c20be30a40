import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, type Permission, type KeyStore, ROLE_PERMISSIONS, type RateLimiter, hashSecret } from '../core/access';
import { DriveError, forbidden } from '../core/errors';
import { headerOf } from './event';
import type { Headers } from './respond';

/**
 * Checks a request's API key and that its role holds the route's permission, then takes a token from that
 * permission's rate-limit bucket, running `beside` (given the caller) at the same time: work that needs the
 * caller and must be done before the handler, without a call of its own on the critical path (an
 * Idempotency-Key taken). The bucket's refusal is thrown first, once `beside` has settled.
 */
export type Guard = (permission: Permission, event: APIGatewayProxyEvent, beside?: (caller: Caller) => Promise<void>) => Promise<{ caller: Caller; headers: Headers }>;

// RFC 6750 b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

const unauthorized = (message: string) => new DriveError('unauthorized', message);

/** The 401 for a key no live record holds. */
export const unknownKey = () => unauthorized('the API key is not valid');

/** The secret of an `Authorization: Bearer <key>` header; throws `unauthorized` for a missing or malformed one. */
export function bearerSecret(header: string | undefined): string {
  if (!header) throw unauthorized('missing Authorization header; send "Authorization: Bearer <API key>"');
  const secret = BEARER.exec(header)?.[1];
  if (!secret) throw unauthorized('Authorization header must be "Bearer <API key>"');
  return secret;
}

/** The SHA-256 of the request's API key, as stored: a share link keeps it to find the key that made it in one read. */
export function keyHashOf(event: APIGatewayProxyEvent): string {
  return hashSecret(bearerSecret(headerOf(event, 'authorization')));
}

/** What a refused role was asking to do, for the 403's message. */
const ACTION: Record<Permission, string> = {
  upload: 'upload files',
  download: 'download files',
  list: 'list folders',
  'create-folder': 'create folders',
  'delete-folder': 'delete folders',
  files: 'delete files',
  keys: 'manage API keys',
  jobs: 'read delete jobs',
  links: 'share files by link',
  whoami: 'say what it may do',
  token: 'exchange identity tokens',
  changes: 'follow the change feed',
  webhooks: 'manage webhooks',
  trash: 'list the trash',
  restore: 'restore from the trash',
  purge: 'purge the trash',
  'empty-trash': 'empty the trash',
};

/** How often a warm container records a key's use: "last used" is accurate to about this. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Builds the guard every endpoint runs first. Verified keys are cached for `keyCacheMs` in a warm
 * container, so a revoked key keeps working there for at most that long.
 */
export function createGuard(deps: {
  keys: KeyStore;
  limiter: RateLimiter;
  limits: Record<Permission, number> | undefined;
  keyCacheMs: number;
}): Guard {
  const cache = new Map<string, { caller: Caller; until: number }>();
  const touched = new Map<string, number>();

  /** Records the key's use, once a minute per container: one small write, not one per request. */
  const touch = async (hash: string): Promise<void> => {
    const now = Date.now();
    if (now - (touched.get(hash) ?? 0) < TOUCH_INTERVAL_MS) return;
    touched.set(hash, now);
    await deps.keys.touch(hash, new Date(now)).catch(() => touched.delete(hash));
  };

  /** The caller of the request's key, and the key's hash. */
  const authenticate = async (event: APIGatewayProxyEvent): Promise<{ caller: Caller; hash: string }> => {
    const hash = keyHashOf(event);
    const cached = cache.get(hash);
    if (cached && cached.until > Date.now()) return { caller: cached.caller, hash };
    const caller = await deps.keys.find(hash);
    if (!caller) throw unknownKey();
    // A minted key is trusted no longer than it lives.
    if (deps.keyCacheMs > 0) cache.set(hash, { caller, until: Math.min(Date.now() + deps.keyCacheMs, caller.expiresAt === undefined ? Infinity : Date.parse(caller.expiresAt)) });
    return { caller, hash };
  };

  return async (permission, event, beside) => {
    const { caller, hash } = await authenticate(event);
    if (!ROLE_PERMISSIONS[caller.role].includes(permission)) throw forbidden(`this key is ${caller.role}, which may not ${ACTION[permission]}`);
    await touch(hash);
    const [bucket, besides] = await Promise.allSettled([
      deps.limits ? takeToken(deps.limiter, `${caller.keyId}#${permission}`, deps.limits[permission], 'this endpoint') : Promise.resolve({}),
      beside?.(caller),
    ]);
    if (bucket.status === 'rejected') throw bucket.reason;
    if (besides.status === 'rejected') throw besides.reason;
    return { caller, headers: bucket.value };
  };
}

/**
 * Takes a token (or `cost` tokens) from `bucket` and returns the `RateLimit-*` headers of the answer; throws
 * `rate_limited` with `Retry-After` when the bucket is empty. `what` names the bucket in the message.
 */
export async function takeToken(limiter: RateLimiter, bucket: string, limit: number, what: string, cost = 1): Promise<Headers> {
  const decision = await limiter.take(bucket, limit, cost);
  const headers: Headers = {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
  if (!decision.allowed) {
    const wait = decision.retryAfterSeconds ?? 1;
    throw new DriveError(
      'rate_limited',
      `rate limit of ${limit} requests per minute for ${what} exceeded; retry in ${wait} second${wait === 1 ? '' : 's'}`,
      { ...headers, 'Retry-After': String(wait) },
    );
  }
  return headers;
}

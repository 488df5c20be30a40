import { DynamoKeyStore, DynamoRateLimiter } from '../aws/dynamo-access';
import { setting } from '../config';
import type { Caller, Permission } from '../core/access';
import { createGuard, takeToken } from '../http/guard';
import { dynamodb } from './dynamodb';

const accessTable = setting('accessTable');

/** API keys by the SHA-256 of their secret: the guard's, and a share link's check of the key that made it. */
export const keys = new DynamoKeyStore(dynamodb, accessTable);

export const rateLimiter = new DynamoRateLimiter(dynamodb, accessTable);

/** Requests per minute for each permission's bucket, or undefined when `DRIVE_RATE_LIMITS=off`. */
export const rateLimits = setting('rateLimits');

/** Seconds a warm container trusts a verified key; a revoked key works there at most this long. */
const keyCacheSeconds = setting('keyCacheSeconds');

export const guard = createGuard({ keys, limiter: rateLimiter, limits: rateLimits, keyCacheMs: keyCacheSeconds * 1000 });

/**
 * Takes `tokens` more from the caller's bucket of `permission`, beyond the one the guard took: a request whose
 * work grows with what it asks for pays by its size. Throws `rate_limited` (429, Retry-After) when the bucket
 * lacks them.
 */
export async function chargeMore(caller: Caller, permission: Permission, tokens: number): Promise<void> {
  if (!rateLimits || tokens <= 0) return;
  await takeToken(rateLimiter, `${caller.keyId}#${permission}`, rateLimits[permission], 'this endpoint', tokens);
}

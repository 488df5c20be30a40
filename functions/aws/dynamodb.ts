import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Caller, type Permission, parseRateLimits } from '../core/access';
import { createGuard, takeToken } from '../http/guard';
import { DynamoKeyStore, DynamoRateLimiter } from './dynamo-access';
import { DynamoFileRecords } from './dynamo-file-records';
import { DynamoLinkStore } from './dynamo-links';
import { DynamoNodeStore } from './dynamo-node-store';
import { DynamoJobStore } from './dynamo-jobs';
import { DynamoUploadJournal } from './dynamo-upload-journal';
import { requireEnv } from './env';
import { QUIET_SDK_LOGGER } from './sdk-logger';
import { countAwsCalls } from '../telemetry/aws-call-counter';

const endpoint = process.env.DRIVE_DYNAMODB_ENDPOINT;

/**
 * One client per container; `DRIVE_DYNAMODB_ENDPOINT` points it at the local emulator. The middleware
 * stack is resolved once per command type rather than on every call (nothing changes it after start).
 */
export const dynamodb = countAwsCalls(new DynamoDBClient({ cacheMiddleware: true, logger: QUIET_SDK_LOGGER, ...(endpoint ? { endpoint } : {}) }), 'dynamodb');

export const nodes = new DynamoNodeStore(dynamodb, requireEnv('DRIVE_NODES_TABLE'));

/** The upload journal, beside the upload sessions. */
export const journal = new DynamoUploadJournal(dynamodb, requireEnv('DRIVE_UPLOADS_TABLE'));

/** Moves and removals of file records with the journal, as single transactions. */
export const records = new DynamoFileRecords(dynamodb, requireEnv('DRIVE_NODES_TABLE'), requireEnv('DRIVE_UPLOADS_TABLE'));

/** Delete jobs, beside the upload sessions. */
export const jobs = new DynamoJobStore(dynamodb, requireEnv('DRIVE_UPLOADS_TABLE'));

export const accessTable = requireEnv('DRIVE_ACCESS_TABLE');

/** Seconds a warm container trusts a verified key; a revoked key works there at most this long. */
export const KEY_CACHE_SECONDS = Number(process.env.DRIVE_KEY_CACHE_SECONDS ?? 30);

/** Share links, beside the API keys. */
export const links = new DynamoLinkStore(dynamodb, accessTable);

export const rateLimiter = new DynamoRateLimiter(dynamodb, accessTable);

/** Requests per minute for each permission's bucket, or undefined when `DRIVE_RATE_LIMITS=off`. */
export const rateLimits = parseRateLimits(process.env.DRIVE_RATE_LIMITS);

/** API keys by the SHA-256 of their secret: the guard's, and a share link's check of the key that made it. */
export const keys = new DynamoKeyStore(dynamodb, accessTable);

export const guard = createGuard({
  keys,
  limiter: rateLimiter,
  limits: rateLimits,
  keyCacheMs: KEY_CACHE_SECONDS * 1000,
});

/**
 * Takes `tokens` more from the caller's bucket of `permission`, beyond the one the guard took: a request whose
 * work grows with what it asks for pays by its size. Throws `rate_limited` (429, Retry-After) when the bucket
 * lacks them.
 */
export async function chargeMore(caller: Caller, permission: Permission, tokens: number): Promise<void> {
  if (!rateLimits || tokens <= 0) return;
  await takeToken(rateLimiter, `${caller.keyId}#${permission}`, rateLimits[permission], 'this endpoint', tokens);
}

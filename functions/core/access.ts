import { createHash, randomBytes } from 'node:crypto';

/** The endpoints, by the names used for their rate-limit buckets, handlers and functions. */
export type Endpoint = 'upload' | 'download' | 'list' | 'create-folder' | 'delete-folder';

/** Requests per minute per API key (spec section 8). */
export const SPEC_RATE_LIMITS: Readonly<Record<Endpoint, number>> = {
  upload: 100,
  download: 500,
  list: 300,
  'create-folder': 100,
  'delete-folder': 50,
};

/** Who is calling: the key's id (never its secret) and the drive it belongs to. */
export interface Caller {
  keyId: string;
  drive: string;
}

/** API keys by the SHA-256 of their secret. */
export interface KeyStore {
  /** The caller a live key belongs to, or undefined for an unknown or revoked key. */
  find(secretHash: string): Promise<Caller | undefined>;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests that would be admitted right now after this one. */
  remaining: number;
  /** Whole seconds until the bucket is full again. */
  resetSeconds: number;
  /** Whole seconds (≥ 1) until a request would be admitted; set when not allowed. */
  retryAfterSeconds?: number;
}

/** Token buckets: `limit` requests per minute per bucket, refilling continuously. */
export interface RateLimiter {
  /** Takes one token from `bucket`, or reports how long until one is available. */
  take(bucket: string, limitPerMinute: number): Promise<RateDecision>;
}

/** Prefix of every secret: tells a reader (and secret scanners) what the string is. */
const SECRET_PREFIX = 'drv_';

/** A new API key secret: 32 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** What is stored of a secret: its SHA-256, hex. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Drive ids: one path-safe token, since they prefix keys in S3 and DynamoDB. */
export const DRIVE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The limits for each endpoint from `DRIVE_RATE_LIMITS`: unset means the spec's, `off` means none, and
 * `upload=5,list=20` overrides some of the spec's.
 */
export function parseRateLimits(value: string | undefined): Record<Endpoint, number> | undefined {
  if (value === 'off') return undefined;
  const limits = { ...SPEC_RATE_LIMITS };
  for (const entry of (value ?? '').split(',').filter((e) => e.trim() !== '')) {
    const [name, count] = entry.split('=').map((s) => s.trim());
    if (!(name in limits) || !/^[1-9][0-9]*$/.test(count ?? '')) {
      throw new Error(`DRIVE_RATE_LIMITS entry "${entry}" is not <endpoint>=<requests per minute> (endpoints: ${Object.keys(limits).join(', ')})`);
    }
    limits[name as Endpoint] = Number(count);
  }
  return limits;
}

import { createHash, randomBytes } from 'node:crypto';
import { DriveError, conflict, forbidden } from './errors';

/**
 * What a route asks of a key, and the family of routes that shares one rate-limit bucket per key: move, copy
 * and deleting files are all `files`. `keys` (the admin routes), `jobs` (reading a job), `files`, `links`
 * (making, listing and revoking share links) and `whoami` (what the caller's key may do) are extensions, and
 * so is `token`, the bucket of the keyless token exchange, which no role holds; `webhooks` (registering,
 * listing and deleting webhooks and reading their failed deliveries) is issue 27's, admin only.
 */
export type Permission = 'upload' | 'download' | 'list' | 'create-folder' | 'delete-folder' | 'files' | 'keys' | 'jobs' | 'links' | 'whoami' | 'token' | 'changes' | 'trash' | 'restore' | 'purge' | 'empty-trash' | 'webhooks';

/**
 * Requests per minute per API key (spec section 8; `keys`, `jobs`, `links` and `whoami` are ours: a client
 * polls a job with backoff, and asks who it is once per sign-in). A share link's own keyless GETs take from a bucket per link at the `download` rate.
 * `token` is the keyless token exchange's: no role holds it; its requests take from a bucket per drive and one
 * per source address.
 */
export const SPEC_RATE_LIMITS: Readonly<Record<Permission, number>> = {
  upload: 100,
  download: 500,
  list: 300,
  'create-folder': 100,
  'delete-folder': 50,
  files: 100,
  keys: 60,
  jobs: 300,
  links: 100,
  whoami: 60,
  token: 60,
  // The change feed: a follower long-polling is answered at most four times a second while changes trickle in
  // (a wait that found one lingers 250 ms for more), about 240 a minute; one fits, with room for a second.
  changes: 300,
  webhooks: 60,
  // The trash (issue 28): listing as a folder listing; restores and purges as folder deletes.
  trash: 300,
  restore: 50,
  purge: 50,
  'empty-trash': 50,
};

/** What a key may do (an extension of the spec): each role's permissions are in `ROLE_PERMISSIONS`. */
export type Role = 'admin' | 'read-write' | 'read-only' | 'upload-only';

// Every role may ask what it may do (`whoami`): the answer tells a key only of itself.
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  // Webhooks are admin only: a webhook is sent every change of its subtree, whichever key made it.
  admin: ['upload', 'download', 'list', 'create-folder', 'delete-folder', 'files', 'keys', 'jobs', 'links', 'whoami', 'changes', 'trash', 'restore', 'purge', 'empty-trash', 'webhooks'],
  'read-write': ['upload', 'download', 'list', 'create-folder', 'delete-folder', 'files', 'jobs', 'links', 'whoami', 'changes', 'trash', 'restore', 'purge'],
  // A link hands out what the key may read, so the roles that may read may share; and follow the change feed.
  // It may list the trash, not restore nor purge.
  'read-only': ['download', 'list', 'links', 'whoami', 'changes', 'trash'],
  // A job that pushes files: it may make the folders its uploads make anyway, and nothing it cannot undo.
  'upload-only': ['upload', 'create-folder', 'whoami'],
};

export const ROLES = Object.keys(ROLE_PERMISSIONS) as Role[];

/** The role of keys made before roles existed. */
export const DEFAULT_ROLE: Role = 'read-write';

/** Who is calling: the key's id (never its secret), its drive, its role, and the folder it is confined to. */
export interface Caller {
  keyId: string;
  drive: string;
  role: Role;
  /** `/` for the whole drive; otherwise the key reaches only this folder and what is below it. */
  prefix: string;
  /** A key minted by the token exchange: the trust rule that admitted the token. */
  trustId?: string;
  /** A minted key's end (ISO 8601): from then on it is refused as an unknown key. */
  expiresAt?: string;
  /** A minted key's token subject (`repo:acme/etl:ref:refs/heads/main`). */
  subject?: string;
}

/** What is kept of an API key: never the secret, only its hash (the key of its item). */
export interface ApiKeyRecord extends Caller {
  name: string;
  createdAt: string;
  /** The secret's last four characters, to tell keys apart. */
  last4: string;
  /** When a request last used the key, to about a minute. */
  lastUsedAt?: string;
  revokedAt?: string;
}

/**
 * Why a key cannot have this role and prefix, or undefined if it can: an admin manages every key of the
 * drive, so it must reach the whole drive (else it could make itself a key that does).
 */
export function accessProblem(role: Role, prefix: string): string | undefined {
  if (role === 'admin' && prefix !== '/') return 'an admin key reaches the whole drive; give it no prefix';
  return undefined;
}

/** Whether `path` lies within the caller's prefix (the prefix itself included). */
export function withinPrefix(caller: Pick<Caller, 'prefix'>, path: string): boolean {
  return caller.prefix === '/' || path === caller.prefix || path.startsWith(`${caller.prefix}/`);
}

/** Whether the caller may replace files: an `upload-only` key may neither read nor delete, so it may not overwrite either. */
export function mayReplace(caller: Pick<Caller, 'role'>): boolean {
  return caller.role !== 'upload-only';
}

/**
 * What a key may be told of a conflict: an `upload-only` key may not see the drive, and a key confined to a
 * folder may not see above it, so a conflict that would say what stands where they may not look says only
 * that the request could not be stored.
 */
export function conflictFor(caller: Pick<Caller, 'role' | 'prefix'>, error: unknown): unknown {
  // A conflict with a reason (a session busy) names no destination: a client needs it as it is.
  if (!(error instanceof DriveError) || error.code !== 'conflict' || error.reason) return error;
  const outside = error.paths.some((path) => !withinPrefix(caller, path));
  if (caller.role !== 'upload-only' && !outside) return error;
  return conflict(`a destination, or a folder above one, is taken; this key may ${caller.role === 'upload-only' ? 'neither replace nor see' : 'not see'} what is there`, []);
}

/** Throws `forbidden` naming `param` if `path` lies outside the caller's prefix. */
export function confine(caller: Pick<Caller, 'prefix'>, path: string, param: string): void {
  if (!withinPrefix(caller, path)) throw forbidden(`${param} ${path} is outside ${caller.prefix}, the only folder this key may reach`);
}

/** API keys by the SHA-256 of their secret. */
export interface KeyStore {
  /** The caller a live key belongs to, or undefined for an unknown or revoked key. */
  find(secretHash: string): Promise<Caller | undefined>;
  /** Notes that the key was used at `at` (shown as "last used"). */
  touch(secretHash: string, at: Date): Promise<void>;
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
  /**
   * Takes `cost` tokens (default 1; at most `limitPerMinute`) from `bucket` at once, or none and reports how
   * long until that many are available: work that grows with a request is charged by its size.
   */
  take(bucket: string, limitPerMinute: number, cost?: number): Promise<RateDecision>;
}

/** Prefix of every secret: tells a reader (and secret scanners) what the string is. */
const SECRET_PREFIX = 'drv_';

/** A new API key secret: 32 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** The record of a new key of `secret`: a fresh id, made now, its secret's last four characters. */
export function newKeyRecord(secret: string, fields: Omit<ApiKeyRecord, 'keyId' | 'createdAt' | 'last4'>): ApiKeyRecord {
  // The fields in the order keys have always been written in, whatever else `fields` holds.
  const { drive, role, prefix, name, ...minted } = fields;
  return { keyId: randomBytes(8).toString('hex'), drive, role, prefix, name, createdAt: new Date().toISOString(), last4: secret.slice(-4), ...minted };
}

/** What is stored of a secret: its SHA-256, hex. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Drive ids: one path-safe token, since they prefix keys in S3 and DynamoDB. */
export const DRIVE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The limits for each permission's bucket from `DRIVE_RATE_LIMITS`: unset means the spec's, `off` means none, and
 * `upload=5,list=20` overrides some of the spec's.
 */
export function parseRateLimits(value: string | undefined): Record<Permission, number> | undefined {
  if (value === 'off') return undefined;
  const limits = { ...SPEC_RATE_LIMITS };
  for (const entry of (value ?? '').split(',').filter((e) => e.trim() !== '')) {
    const [name, count] = entry.split('=').map((s) => s.trim());
    if (!(name in limits) || !/^[1-9][0-9]*$/.test(count ?? '')) {
      throw new Error(`DRIVE_RATE_LIMITS entry "${entry}" is not <endpoint>=<requests per minute> (endpoints: ${Object.keys(limits).join(', ')})`);
    }
    limits[name as Permission] = Number(count);
  }
  return limits;
}

/**
 * Idempotency keys (issue 26): a client's `Idempotency-Key` names one attempt at a mutating request, so that a
 * retry after a lost reply answers what the first answered instead of doing the work again. The HTTP layer
 * (functions/http/idempotency.ts) takes a key before the handler runs and records the answer after; this
 * module is the record's life and the port that stores it.
 *
 * A record is one of:
 * - `running`: a request holds the key until `leaseUntil` (its function's timeout and a margin); a request
 *   killed mid-way frees the key when the lease lapses, never later;
 * - `done`: the first answer, replayed to any request with the same fingerprint until the record expires.
 * A record expires 24 hours after the request that took it; an expired record is as none.
 */

/** How long a key answers what its first request answered. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

/** Past the function's own timeout, for clocks of two functions that differ and a runtime slow to kill. */
export const LEASE_MARGIN_MS = 10_000;

/** What a retry that finds the key still running is told to wait, at most: the first usually ends well before its lease. */
export const IN_PROGRESS_RETRY_SECONDS = 2;

/** The rule of the header: 1 to 255 printable ASCII characters (RFC 9110 field values, no controls). */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** An answer as it is kept and replayed: its status, the headers a client needs, and the body sent. */
export interface StoredAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** The request that takes a key: who (the API key's id), the key, and what was asked (its fingerprint). */
export interface IdempotentRequest {
  /** The caller's API key id: keys are scoped to it, so two callers never see each other's answers. */
  scope: string;
  key: string;
  /** SHA-256 of the method, path, query and body's SHA-256 (functions/http/idempotency.ts). */
  fingerprint: string;
}

/** What taking a key found. */
export type TakeOutcome =
  /** The key is this request's until `leaseUntil`: run, then `complete` or `release` with `owner`. */
  | { kind: 'taken'; owner: string; leaseUntil: number }
  /** The same request ran to its end: its answer. */
  | { kind: 'done'; answer: StoredAnswer }
  /** The same request is still running, until `leaseUntil` (epoch ms) at the latest. */
  | { kind: 'running'; leaseUntil: number; now: number }
  /** Another request (another fingerprint) holds the key or answered under it. */
  | { kind: 'mismatch' };

/**
 * Where records live (functions/aws/dynamo-idempotency.ts in AWS and on the local host; an in-memory one in
 * the tests). Every write is conditional: a request that lost its lease never overwrites its successor's.
 */
export interface IdempotencyStore {
  /**
   * Takes the key for `request` for `leaseMs` from now, if no live record holds it (none, an expired one, or
   * a running one whose lease lapsed); else says what holds it, read in the same call that failed.
   */
  take(request: IdempotentRequest, leaseMs: number): Promise<TakeOutcome>;
  /** Records `answer` as the key's, if `owner` still holds it; false when it lost the key meanwhile. */
  complete(request: IdempotentRequest, owner: string, answer: StoredAnswer): Promise<boolean>;
  /** Frees the key at once (an answer not to remember), if `owner` still holds it. */
  release(request: IdempotentRequest, owner: string): Promise<void>;
}

/**
 * Whether an answer is kept for replay: every answer the handler gave, but a failure on the server's side
 * (5xx), the answers that say "try again" (429, or any with `Retry-After`), and every 409 (a conflict changed
 * nothing, and some say "try again" in words: an upload still open, a folder being moved), which a retry must
 * not be stuck with.
 */
export function remembers(answer: { statusCode: number; headers: Record<string, string | number | boolean> }, reason?: string): boolean {
  // A 409 changed nothing (the request contradicts what is stored: a folder being deleted or moved, an upload
  // still open, "try again"), and what is stored moves on: a retry asks again instead of reading it back.
  if (answer.statusCode >= 500 || answer.statusCode === 429 || answer.statusCode === 409 || reason === 'upload_busy') return false;
  return !Object.keys(answer.headers).some((name) => name.toLowerCase() === 'retry-after');
}

/** The seconds a request that found the key running should wait: at least one, at most `IN_PROGRESS_RETRY_SECONDS`, never past the lease. */
export function inProgressRetrySeconds(leaseUntil: number, now: number): number {
  return Math.max(1, Math.min(IN_PROGRESS_RETRY_SECONDS, Math.ceil((leaseUntil - now) / 1000)));
}

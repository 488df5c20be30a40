import { randomUUID } from 'node:crypto';
import { backoffDelay, rateLimitedDelay } from './backoff';
import { DriveError, abortReason, errorName } from './errors';
import { type KeySource, StaticKey } from './oidc';
import { type Clock, RateLimitPacer, systemClock } from './rate-limit-pacer';

/**
 * The API's rate-limit buckets (one per endpoint and key); the large-upload routes take `upload` tokens.
 * The trash's routes take `trash` (listing), `restore`, `purge` (one item) and `empty-trash` (a folder's) tokens.
 * `token` is the keyless exchange's (`POST /drive/token`, kept per source address): paced, sent with no key.
 */
export type Bucket = 'upload' | 'download' | 'list' | 'create-folder' | 'delete-folder' | 'files' | 'jobs' | 'links' | 'whoami' | 'token' | 'changes' | 'trash' | 'restore' | 'purge' | 'empty-trash';

/** How failed attempts are retried. */
export interface RetryOptions {
  /** Retries after a 5xx or no answer (connection error, timeout), per call. Default 5. */
  maxRetries: number;
  /** The ceiling of the first backoff, in ms (full jitter, doubling). Default 250. */
  baseDelayMs: number;
  /** The longest backoff, in ms. Default 20,000. */
  maxDelayMs: number;
  /** `429` answers waited out per call before giving up. Default 50. */
  maxRateLimited: number;
  /**
   * `409` with reason `idempotency_in_progress` answers (the call's earlier attempt still running on the server) waited out
   * per call. Default 60: a first attempt holds its key at most its function's timeout and a margin (about 40 s).
   */
  maxInProgress?: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 5, baseDelayMs: 250, maxDelayMs: 20_000, maxRateLimited: 50, maxInProgress: 60 };

/** The header that names one attempt at a mutating call; every retry of the call sends the same (docs/api.md). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** What the transport tells while it retries a call: which call, the attempt coming, why, and how long it waits first. */
export interface RetryNotice {
  method: string;
  /** The route called, without its query (a path there may be private to the report's reader). */
  path: string;
  /** The URL called, without its query: names the host when it cannot be reached. */
  url: string;
  /** The attempt about to be sent: 2 for the first retry. */
  attempt: number;
  /** The most attempts the call gets, where retries are bounded (a 5xx or a lost answer); absent for waits. */
  attempts?: number;
  /** Why: `503`, `504`, `no answer (ECONNRESET)`, `rate limited`, `earlier attempt still running`… */
  reason: string;
  waitMs: number;
}

/** One HTTP call: to the API (with `bucket`: authorized and paced) or to storage (a presigned URL). */
export interface Call {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  bucket?: Bucket;
  headers?: Record<string, string>;
  /** Reused as is by a retry, so only bodies that can be read twice. */
  body?: Blob | Uint8Array | string;
  signal?: AbortSignal;
  /** `manual`: a 3xx is the answer, not followed (a direct download's 307, whose URL must get no API key). */
  redirect?: 'manual';
  /**
   * The Idempotency-Key of this call; by default a mutating API call (POST or DELETE with a key) gets a random
   * one, sent again by each of its retries, so that the server does its work once however many are sent.
   */
  idempotencyKey?: string;
  /** Told the status of each answer, retried ones included (an upload learns from a 504 that its request was too big). */
  onAttempt?: (status: number) => void;
}

/** A call's final answer. */
export interface CallResult {
  response: Response;
  /** An earlier attempt ended without a clear answer (no answer, or a 5xx), so it may have taken effect. */
  uncertain: boolean;
}

/** What the transport has done so far, for reports. */
export interface TransportStats {
  /** HTTP requests sent, retries included. */
  requests: number;
  /** Requests sent, by bucket, or `storage` for presigned URLs. */
  requestsBy: Record<string, number>;
  /** Retries after a 5xx or no answer. */
  retries: number;
  /** `429` answers received. */
  rateLimited: number;
  /** Milliseconds requests waited for a rate-limit token (pacing and `Retry-After`), summed over requests. */
  pacedMs: number;
}

export interface TransportOptions {
  baseUrl: string;
  /** A fixed key, or a source of short-lived ones (an OIDC token exchanged at `POST /drive/token`). */
  apiKey: string | KeySource;
  fetch: typeof fetch;
  retry: RetryOptions;
  /** Abort one attempt after this long (it is then retried as a network failure); none by default. */
  timeoutMs?: number;
  random?: () => number;
  clock?: Clock;
  /** Told before each retry (the CLI says it on stderr); the default says nothing. */
  onRetry?: (notice: RetryNotice) => void;
}

// Failures that happen before a request is on the wire.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Sends calls with the client's rules: each API call waits for a token of its bucket (`RateLimit-*`), a
 * `429` is waited out (`Retry-After`) and sent again, and a 5xx or a lost answer is retried with jittered
 * backoff. Every call the client makes is safe to repeat (each operation's JSDoc says why), so retries are
 * uniform; what a repeat can answer differently (a `404` after an earlier attempt did the work) is left to
 * the caller through `uncertain`. No other 4xx is retried.
 */
export class Transport {
  readonly stats: TransportStats = { requests: 0, requestsBy: {}, retries: 0, rateLimited: 0, pacedMs: 0 };
  private readonly pacers = new Map<Bucket, RateLimitPacer>();
  private readonly clock: Clock;
  private readonly keys: KeySource;

  constructor(private readonly options: TransportOptions) {
    this.clock = options.clock ?? systemClock;
    this.keys = typeof options.apiKey === 'string' ? new StaticKey(options.apiKey) : options.apiKey;
  }

  /** The absolute URL of an API route with its query. */
  url(route: string, query?: Record<string, string | undefined>): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(name, value);
    const search = params.toString();
    return `${this.options.baseUrl.replace(/\/+$/, '')}${route}${search ? `?${search}` : ''}`;
  }

  /**
   * Sends `call`, retrying as the class comment says; resolves with the last answer, whatever its status. A
   * mutating call sends one Idempotency-Key with every attempt: a retry after a lost answer or a `504` gets the
   * first attempt's answer (waiting, on `409` with reason `idempotency_in_progress`, as long as it runs) instead of doing
   * the work twice.
   */
  async send(call: Call): Promise<CallResult> {
    const { retry } = this.options;
    let uncertain = false;
    let retries = 0;
    let refusals = 0;
    let waits = 0;
    let reexchanged = false;
    let attempt = 1;
    const idempotencyKey = call.idempotencyKey ?? (isMutation(call) ? randomUUID() : undefined);
    if (idempotencyKey !== undefined) call = { ...call, headers: { ...call.headers, [IDEMPOTENCY_KEY_HEADER]: idempotencyKey } };
    for (;; attempt++) {
      const pacer = call.bucket ? this.pacerOf(call.bucket) : undefined;
      if (pacer) await this.paced(pacer, call.signal);
      const key = call.bucket && call.bucket !== 'token' ? await this.keys.key(call.signal) : undefined;
      let response: Response;
      try {
        response = await this.attempt(call, key);
      } catch (error) {
        pacer?.settle(undefined, this.clock.now());
        if (call.signal?.aborted) throw abortReason(call.signal);
        if (isLocalReadError(error)) throw new DriveError('local_file_error', `a file to send could not be read, or changed since it was opened (${call.method} ${new URL(call.url).pathname})`, 0, { cause: error });
        if (retries >= retry.maxRetries) throw networkError(call, error);
        if (!NOT_SENT.has(causeCode(error) ?? '')) uncertain = true;
        await this.backoff(retries++, call, attempt, `no answer (${causeCode(error) ?? messageOf(error) ?? 'network error'})`);
        continue;
      }
      pacer?.settle(response.headers, this.clock.now());
      call.onAttempt?.(response.status);
      if (response.status === 429 && refusals < retry.maxRateLimited) {
        refusals++;
        this.stats.rateLimited++;
        const delay = rateLimitedDelay(response.headers, this.options.random);
        await discard(response);
        this.notify(call, attempt, 'rate limited (429)', delay);
        if (pacer) pacer.refuse(delay, this.clock.now());
        else await this.clock.sleep(delay, call.signal);
        continue;
      }
      // The call's earlier attempt (a lost answer, a 504) still runs on the server: its answer comes to a retry
      // with the same key once it ends. Read from a clone: any other 409 is the caller's to read.
      if (response.status === 409 && idempotencyKey !== undefined && waits < (retry.maxInProgress ?? DEFAULT_RETRY.maxInProgress!) && (await isInProgress(response))) {
        waits++;
        const delay = rateLimitedDelay(response.headers, this.options.random);
        await discard(response);
        this.notify(call, attempt, 'an earlier attempt is still running on the server (409)', delay);
        await this.clock.sleep(delay, call.signal);
        continue;
      }
      // A short-lived key that ended (or was cut short) since it was handed out: one new exchange, one retry.
      if (response.status === 401 && key !== undefined && !reexchanged && this.keys.refused(key)) {
        reexchanged = true;
        await discard(response);
        continue;
      }
      if (response.status >= 500 && retries < retry.maxRetries) {
        await discard(response);
        uncertain = true;
        await this.backoff(retries++, call, attempt, response.status === 504 ? 'the gateway timed out (504)' : `server error (${response.status})`);
        continue;
      }
      return { response, uncertain };
    }
  }

  /** The transport's clock's time (real time, but for tests). */
  now(): number {
    return this.clock.now();
  }

  /** Waits `ms` on the transport's clock (real time, but for tests). */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.clock.sleep(ms, signal);
  }

  private async attempt(call: Call, key: string | undefined): Promise<Response> {
    this.stats.requests++;
    const kind = call.bucket ?? 'storage';
    this.stats.requestsBy[kind] = (this.stats.requestsBy[kind] ?? 0) + 1;
    const headers: Record<string, string> = { ...call.headers };
    if (key !== undefined) headers.Authorization = `Bearer ${key}`;
    const signals = [call.signal, this.options.timeoutMs ? AbortSignal.timeout(this.options.timeoutMs) : undefined].filter(
      (signal): signal is AbortSignal => signal !== undefined,
    );
    return this.options.fetch(call.url, {
      method: call.method,
      headers,
      body: call.body,
      signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
      ...(call.redirect ? { redirect: call.redirect } : {}),
    });
  }

  private async paced(pacer: RateLimitPacer, signal?: AbortSignal): Promise<void> {
    const before = pacer.waitedMs;
    await pacer.acquire(signal);
    this.stats.pacedMs += pacer.waitedMs - before;
  }

  private async backoff(retry: number, call: Call, attempt: number, reason: string): Promise<void> {
    this.stats.retries++;
    const delay = backoffDelay(retry, this.options.retry, this.options.random);
    this.notify(call, attempt, reason, delay, this.options.retry.maxRetries + 1);
    await this.clock.sleep(delay, call.signal);
  }

  private notify(call: Call, attempt: number, reason: string, waitMs: number, attempts?: number): void {
    const url = call.url.replace(/[?#].*$/, '');
    this.options.onRetry?.({ method: call.method, path: pathOf(call.url), url, attempt: attempt + 1, ...(attempts === undefined ? {} : { attempts }), reason, waitMs });
  }

  private pacerOf(bucket: Bucket): RateLimitPacer {
    let pacer = this.pacers.get(bucket);
    if (!pacer) this.pacers.set(bucket, (pacer = new RateLimitPacer(60_000, this.clock)));
    return pacer;
  }
}

/** A call that changes something on the server: an API POST or DELETE with a key (the keyless token exchange changes nothing). */
function isMutation(call: Call): boolean {
  return call.bucket !== undefined && call.bucket !== 'token' && (call.method === 'POST' || call.method === 'DELETE');
}

/** Whether a 409's reason is `idempotency_in_progress`, read from a clone so that the answer stays whole for its caller. */
async function isInProgress(response: Response): Promise<boolean> {
  try {
    const body = (await response.clone().json()) as { error?: { reason?: unknown } };
    return body.error?.reason === 'idempotency_in_progress';
  } catch {
    return false;
  }
}

/** A URL's path, without its query. */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** Reads and drops a body, so the connection can be reused. */
export async function discard(response: Response): Promise<void> {
  await response.arrayBuffer().catch(() => undefined);
}

function networkError(call: Call, error: unknown): DriveError {
  const detail = causeCode(error) ?? messageOf(causeOf(error));
  const reason = `${messageOf(error) ?? String(error)}${detail ? ` (${detail})` : ''}`;
  const where = call.bucket ? `${call.method} ${new URL(call.url).pathname}` : `${call.method} to storage`;
  return new DriveError('network_error', `${where} got no answer: ${reason}`, 0, { cause: error });
}

/** A Blob body whose file went away or changed: sending it again cannot help. */
function isLocalReadError(error: unknown): boolean {
  const name = errorName(causeOf(error));
  return name === 'NotReadableError' || name === 'NotFoundError';
}

// fetch's errors come from Node's own realm, where `instanceof Error` of another (a test's vm) fails: duck-type.
function causeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'cause' in error ? error.cause : undefined;
}

function messageOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string' ? error.message : undefined;
}

function causeCode(error: unknown): string | undefined {
  const cause = causeOf(error);
  return typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
}

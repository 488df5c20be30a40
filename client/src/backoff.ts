import { abortReason } from './errors';

/** How retries after a 5xx or a network error are spaced. */
export interface BackoffOptions {
  /** The ceiling of the first wait, in ms; it doubles with each retry. */
  baseDelayMs: number;
  /** No wait is longer than this, in ms. */
  maxDelayMs: number;
}

/**
 * The wait before retry number `retry` (0 for the first): "full jitter", a uniform draw below the
 * exponential ceiling, so that many clients failing at once do not come back at once (AWS Architecture
 * Blog, "Exponential Backoff And Jitter").
 */
export function backoffDelay(retry: number, options: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/**
 * The wait a `429` asks for: `Retry-After` seconds (or, without one, `RateLimit-Reset`, else a second),
 * plus up to a tenth of it at random so that clients refused together spread out again.
 */
export function rateLimitedDelay(headers: Headers, random: () => number = Math.random): number {
  const seconds = secondsHeader(headers, 'retry-after') ?? retryAfterDate(headers) ?? secondsHeader(headers, 'ratelimit-reset') ?? 1;
  const ms = Math.max(1, seconds) * 1000;
  return ms + Math.floor(random() * ms * 0.1);
}

/** A header holding whole (or decimal) seconds; `undefined` when absent or not a number. */
export function secondsHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}

/** `Retry-After` given as an HTTP date (RFC 9110 allows it), as seconds from now. */
function retryAfterDate(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  const at = value === null ? NaN : Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

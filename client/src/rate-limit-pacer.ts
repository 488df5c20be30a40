import { sleep } from './backoff';
import { abortReason } from './errors';

// setTimeout's longest delay.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The time source a pacer reads and sleeps on; tests pass a fake one. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now(), sleep };

/**
 * Paces the requests of one rate-limit bucket (one endpoint of one API key) so that they are not refused.
 *
 * Drive's limits are token buckets of `RateLimit-Limit` tokens that refill evenly over a minute (spec
 * section 8), and every answer says how many are left (`RateLimit-Remaining`). The pacer keeps an estimate:
 * the last `Remaining` it heard, less the requests still in flight that the server may not have counted
 * yet (so it errs on the side of waiting), plus what has refilled since; an answer never raises it above
 * what the pacer already knew (answers overtake each other). A request goes when the estimate
 * holds a whole token, and otherwise waits until it will. Until the first answer, one request goes alone to
 * learn the bucket. A `429` (another client on the same key, say) stops every request of the bucket until
 * its `Retry-After` has passed.
 */
export class RateLimitPacer {
  private limit: number | undefined;
  /** No `RateLimit-*` headers came back: the server does not limit this bucket. */
  private unlimited = false;
  private tokens = 0;
  private at = 0;
  private notBefore = 0;
  private inFlight = 0;
  private wake: () => void = () => {};
  private settled: Promise<void> = this.nextSettle();
  /** Milliseconds requests spent waiting for a token, summed over requests. */
  waitedMs = 0;

  constructor(
    private readonly windowMs = 60_000,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * How long a request must wait at `now` before it may go: 0 to go at once, `Infinity` to wait for an
   * answer in flight (the bucket's size is not known yet).
   */
  delay(now: number): number {
    if (now < this.notBefore) return this.notBefore - now;
    if (this.unlimited) return 0;
    if (this.limit === undefined) return this.inFlight === 0 ? 0 : Infinity;
    const tokens = this.estimate(now);
    if (tokens >= 1) return 0;
    return Math.ceil((1 - tokens) / this.ratePerMs(this.limit));
  }

  /** Waits until a request may go (see `delay`), then counts it as in flight. */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const start = this.clock.now();
      const wait = this.delay(start);
      if (wait === 0) return this.take(start);
      await this.waitForChange(wait, signal);
      this.waitedMs += this.clock.now() - start;
    }
  }

  /** Counts a request as sent at `now`, taking a token from the estimate. */
  take(now: number): void {
    if (this.limit !== undefined && !this.unlimited) {
      this.tokens = this.estimate(now) - 1;
      this.at = now;
    }
    this.inFlight++;
  }

  /** Records a request's end: what the server said is left, or nothing (`headers` undefined: no answer). */
  settle(headers: Headers | undefined, now: number): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (headers) {
      const limit = integerHeader(headers, 'ratelimit-limit');
      const remaining = integerHeader(headers, 'ratelimit-remaining');
      if (limit !== undefined && remaining !== undefined && limit > 0) {
        // Requests still in flight may already be counted in `remaining`, or not yet: assume not. Answers may
        // come back in another order than the server counted them: an older count (higher) arriving after a
        // newer one must not raise the estimate, so the lower of the two stands.
        const heard = remaining - this.inFlight;
        this.tokens = this.limit === limit && !this.unlimited ? Math.min(this.estimate(now), heard) : heard;
        this.limit = limit;
        this.unlimited = false;
        this.at = now;
      } else if (this.limit === undefined) {
        this.unlimited = true;
      }
    }
    this.wake();
  }

  /** A `429`: no request of this bucket goes before `now + delayMs`. */
  refuse(delayMs: number, now: number): void {
    this.notBefore = Math.max(this.notBefore, now + delayMs);
    this.tokens = Math.min(this.tokens, 0);
    this.at = now;
  }

  /** Sleeps `ms` (forever for `Infinity`), or less if an answer comes meanwhile, since it may free a token. */
  private async waitForChange(ms: number, signal?: AbortSignal): Promise<void> {
    const answered = new AbortController();
    void this.settled.then(() => answered.abort());
    try {
      await this.clock.sleep(Math.min(ms, MAX_TIMER_MS), signal ? AbortSignal.any([signal, answered.signal]) : answered.signal);
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      if (!answered.signal.aborted) throw error;
    }
  }

  private estimate(now: number): number {
    const limit = this.limit ?? 0;
    return Math.min(limit, this.tokens + (now - this.at) * this.ratePerMs(limit));
  }

  private ratePerMs(limit: number): number {
    return limit / this.windowMs;
  }

  private nextSettle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = () => {
        this.settled = this.nextSettle();
        resolve();
      };
    });
  }
}

function integerHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  return value !== null && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}

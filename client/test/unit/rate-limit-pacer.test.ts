import { RateLimitPacer } from '../../src/rate-limit-pacer';
import { FakeClock } from '../support/fakes';

const limits = (limit: number, remaining: number) => new Headers({ 'RateLimit-Limit': String(limit), 'RateLimit-Remaining': String(remaining), 'RateLimit-Reset': '1' });

describe('Class: RateLimitPacer', () => {
  let clock: FakeClock;
  let pacer: RateLimitPacer;

  beforeEach(() => {
    clock = new FakeClock();
    pacer = new RateLimitPacer(60_000, clock);
  });

  describe('Method: delay', () => {
    it('lets one request go alone until the first answer tells the bucket', () => {
      // Prepare
      expect(pacer.delay(clock.now())).toBe(0);
      pacer.take(clock.now());

      // Act / Assess
      expect(pacer.delay(clock.now())).toBe(Infinity);
      pacer.settle(limits(100, 99), clock.now());
      expect(pacer.delay(clock.now())).toBe(0);
    });

    it('lets requests go while tokens remain, then waits for one to refill (limit per minute)', () => {
      // Prepare: 60 a minute is one a second; 2 left.
      pacer.take(clock.now());
      pacer.settle(limits(60, 2), clock.now());

      // Act
      pacer.take(clock.now());
      pacer.take(clock.now());

      // Assess: both tokens taken; the next is 1 s away, half of it after 500 ms.
      expect(pacer.delay(clock.now())).toBe(1000);
      expect(pacer.delay(clock.now() + 500)).toBe(500);
      expect(pacer.delay(clock.now() + 1000)).toBe(0);
    });

    it('counts requests still in flight against what the last answer said was left', () => {
      // Prepare: three requests out, then one answers with 3 left.
      pacer.take(clock.now());
      pacer.settle(limits(60, 10), clock.now());
      for (let i = 0; i < 3; i++) pacer.take(clock.now());

      // Act
      pacer.settle(limits(60, 3), clock.now());

      // Assess: 3 left less the 2 still in flight is 1 token.
      expect(pacer.delay(clock.now())).toBe(0);
      pacer.take(clock.now());
      expect(pacer.delay(clock.now())).toBe(1000);
    });

    it('is not raised by an older count that arrives after a newer one (answers overtake each other)', () => {
      // Prepare: 60 a minute; 2 left, then two requests out. The server counts A (1 left), then B (0 left).
      pacer.take(clock.now());
      pacer.settle(limits(60, 2), clock.now());
      pacer.take(clock.now());
      pacer.take(clock.now());

      // Act: B's answer comes first, then A's, which says 1 is left.
      pacer.settle(limits(60, 0), clock.now());
      pacer.settle(limits(60, 1), clock.now());

      // Assess: none is left, so the next request waits (a second at least: B's answer, counting A as still
      // out, erred by one on the side of waiting).
      expect(pacer.delay(clock.now())).toBeGreaterThanOrEqual(1000);
    });

    it('after a 429, holds every request of the bucket until Retry-After has passed', () => {
      pacer.take(clock.now());
      pacer.settle(limits(600, 0), clock.now());

      // Act
      pacer.refuse(5000, clock.now());

      // Assess: although 600 a minute would refill a token in 100 ms.
      expect(pacer.delay(clock.now())).toBe(5000);
      expect(pacer.delay(clock.now() + 5000)).toBe(0);
    });

    it('never waits when the server sends no RateLimit headers (limits off)', () => {
      pacer.take(clock.now());
      pacer.settle(new Headers(), clock.now());
      pacer.take(clock.now());
      pacer.take(clock.now());
      expect(pacer.delay(clock.now())).toBe(0);
    });

    it('lets a request go after an attempt that got no answer', () => {
      pacer.take(clock.now());
      pacer.settle(undefined, clock.now());
      expect(pacer.delay(clock.now())).toBe(0);
    });

    it('never estimates more tokens than the limit, however long it was idle', () => {
      pacer.take(clock.now());
      pacer.settle(limits(2, 2), clock.now());
      clock.time += 3_600_000;
      pacer.take(clock.now());
      pacer.take(clock.now());
      expect(pacer.delay(clock.now())).toBe(30_000);
    });
  });

  describe('Method: acquire', () => {
    it('sleeps until a token has refilled, and adds the wait to waitedMs', async () => {
      // Prepare
      pacer.take(clock.now());
      pacer.settle(limits(30, 0), clock.now());

      // Act
      await pacer.acquire();

      // Assess: 30 a minute is a token every 2 s.
      expect(clock.sleeps).toEqual([2000]);
      expect(pacer.waitedMs).toBe(2000);
    });

    it('waits for the first answer when another request is learning the bucket', async () => {
      // Prepare
      await pacer.acquire();
      let second = false;
      const waiting = pacer.acquire().then(() => (second = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(second).toBe(false);

      // Act
      pacer.settle(limits(100, 50), clock.now());
      await waiting;

      // Assess
      expect(second).toBe(true);
    });

    it('rejects with the abort reason when the signal fires while waiting', async () => {
      pacer.take(clock.now());
      const controller = new AbortController();
      const waiting = pacer.acquire(controller.signal);
      controller.abort();
      await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    });
  });
});

import { backoffDelay, rateLimitedDelay, secondsHeader } from '../../src/backoff';

describe('Function: backoffDelay', () => {
  const options = { baseDelayMs: 250, maxDelayMs: 20_000 };

  it('draws below a ceiling that doubles with each retry (full jitter)', () => {
    expect([0, 1, 2, 3].map((retry) => backoffDelay(retry, options, () => 0.999999))).toEqual([249, 499, 999, 1999]);
    expect(backoffDelay(3, options, () => 0)).toBe(0);
    expect(backoffDelay(2, options, () => 0.5)).toBe(500);
  });

  it('never exceeds maxDelayMs, however many retries', () => {
    expect(backoffDelay(30, options, () => 0.999999)).toBe(19_999);
  });
});

describe('Function: rateLimitedDelay', () => {
  it('waits Retry-After seconds, plus at most a tenth at random', () => {
    const headers = new Headers({ 'Retry-After': '7', 'RateLimit-Reset': '60' });
    expect(rateLimitedDelay(headers, () => 0)).toBe(7000);
    expect(rateLimitedDelay(headers, () => 0.999999)).toBe(7699);
  });

  it('takes an HTTP date in Retry-After as the time until then', () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const delay = rateLimitedDelay(new Headers({ 'Retry-After': at }), () => 0);
    expect(delay).toBeGreaterThan(28_000);
    expect(delay).toBeLessThanOrEqual(30_000);
  });

  it('falls back to RateLimit-Reset, then to one second', () => {
    expect(rateLimitedDelay(new Headers({ 'RateLimit-Reset': '3' }), () => 0)).toBe(3000);
    expect(rateLimitedDelay(new Headers(), () => 0)).toBe(1000);
    expect(rateLimitedDelay(new Headers({ 'Retry-After': '0' }), () => 0)).toBe(1000);
  });
});

describe('Function: secondsHeader', () => {
  it('reads whole and decimal seconds, and nothing else', () => {
    const headers = new Headers({ a: '12', b: ' 1.5 ', c: '-1', d: 'soon' });
    expect(['a', 'b', 'c', 'd', 'e'].map((name) => secondsHeader(headers, name))).toEqual([12, 1.5, undefined, undefined, undefined]);
  });
});

import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Whether a webhook delivery is Drive's: its `Drive-Signature` header (`t=<unix seconds>,v1=<hex>`) is the
 * HMAC-SHA256 of `"<t>.<raw body>"` with the webhook's secret, and `t` is within 5 minutes of `now` (so a
 * captured delivery cannot be replayed later). Pass the body exactly as received, before any JSON parsing.
 */
export function verify(rawBody: string, header: string, secret: string, now = Date.now() / 1000): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=', 2)));
  const expected = createHmac('sha256', secret).update(`${parts.t}.${rawBody}`).digest();
  const given = Buffer.from(parts.v1 ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(now - Number(parts.t)) <= 300;
}

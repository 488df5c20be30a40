import { createHmac } from 'node:crypto';

/**
 * The `Drive-Signature` header of a delivery sent at `t` (unix seconds): `t=<t>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>" with the webhook's secret>`, as Stripe signs its events. The receiver checks it with
 * `verify` (client/src/webhook-verify.ts), which docs/api.md shows.
 */
export function signatureHeader(secret: string, rawBody: string, t: number): string {
  const v1 = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

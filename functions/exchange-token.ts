import { rateLimiter, rateLimits } from './wiring/guard';
import { trust } from './wiring/trust';
import { verifier } from './wiring/verifier';
import { DRIVE_ID } from './core/access';
import { invalid } from './core/errors';
import { PER_DRIVE_BUCKET_FACTOR, exchangeToken } from './core/token-exchange';
import { keylessJsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { takeToken } from './http/guard';
import { type Messages, jsonInput } from './http/request-input';
import { TokenRequest } from './openapi/request-schemas';

const EXAMPLE = '{"drive": "default", "token": "<the JWT your platform issued>"}';
const MESSAGES: Messages = {
  ttl_seconds: { value: () => 'ttl_seconds must be a whole number of seconds, 60 or more (at most the trust rule\'s max_ttl_seconds, which caps it)' },
  // Never quote the token, whatever is wrong with it.
  token: { value: () => 'token must be the identity token (a JWT) your platform issued, 1 to 16384 characters' },
};

/**
 * POST /drive/token, with no key: `{ drive, token, ttl_seconds? }` → a key of `drive` that lives until
 * `expires_at`, with the role and folder of the first trust rule that admits the token. 401 names the check
 * that failed (never echoing the token); 503 when the token's issuer does not answer. Rate-limited per source
 * address first, every attempt before its body is read, then per drive (a bucket PER_DRIVE_BUCKET_FACTOR times
 * larger) once the token passed the checks that ask no issuer.
 */
export const handler = keylessJsonHandler({ stores: { trust, verifier } }, async (event, answered, seen, { stores }) => {
  const limits = rateLimits;
  // Every attempt costs its address, before the body is read: a body that is not JSON, names no token or no
  // drive id is as much an attempt as a forged token, and none of them may come unlimited.
  if (limits) {
    const address = event.requestContext?.identity?.sourceIp ?? 'unknown';
    Object.assign(answered, await takeToken(rateLimiter, `token#address#${address}`, limits.token, 'token exchanges from this address'));
  }
  const request = jsonInput(bodyOf(event), TokenRequest, EXAMPLE, MESSAGES);
  if (!DRIVE_ID.test(request.drive)) throw invalid(`drive must be a drive id: 1 to 64 letters, digits, "-" or "_" (got ${JSON.stringify(request.drive.slice(0, 64))})`);
  // The answer's RateLimit-* headers stay the address's, the bucket a caller can run out of alone.
  const chargeDrive = async () => {
    if (limits) await takeToken(rateLimiter, `token#drive#${request.drive}`, limits.token * PER_DRIVE_BUCKET_FACTOR, 'token exchanges to this drive');
  };
  const exchange = { drive: request.drive, token: request.token, ttlSeconds: request.ttl_seconds ?? undefined };
  const { secret, record, rule } = await exchangeToken({ ...stores, chargeDrive }, exchange, new Date());
  seen.caller = record;
  return { key: secret, expires_at: record.expiresAt!, drive: record.drive, role: rule.role, prefix: record.prefix, trust_id: rule.id };
});

import { guard } from './wiring/guard';
import { loopbackIssuers, trust } from './wiring/trust';
import { conflict } from './core/errors';
import { MAX_RULES_PER_DRIVE } from './core/trust';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { trustRuleRequest } from './http/trust-request';
import { trustView } from './http/views';

/**
 * POST /drive/trust (admin keys only) with `{ issuer, audience, subject, claims?, role, prefix?, max_ttl_seconds? }`
 * → the new trust rule of the caller's drive: tokens it admits exchange for keys of its role and prefix.
 */
export const handler = jsonHandler({ permission: 'keys', guard, stores: { trust } }, async (event, { drive, stores }) => {
  const made = await stores.trust.add(drive, trustRuleRequest(bodyOf(event), loopbackIssuers));
  if (made === 'full') throw conflict(`this drive has ${MAX_RULES_PER_DRIVE} live trust rules, its most; revoke one first`, []);
  return { trust: trustView(made) };
});

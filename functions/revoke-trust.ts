import { guard } from './wiring/guard';
import { trust } from './wiring/trust';
import { notFound } from './core/errors';
import { jsonHandler } from './http/api-handler';
import { trustView } from './http/views';

/**
 * DELETE /drive/trust/{trust_id} (admin keys only) → the rule, revoked: it admits no token from then on, and
 * every key minted under it is revoked (401 from then on, within the key cache of a warm function, 30 s).
 */
export const handler = jsonHandler({ permission: 'keys', guard, stores: { trust } }, async (event, { drive, stores }) => {
  const id = event.pathParameters?.trust_id ?? '';
  if (!/^[0-9a-f]{16}$/.test(id)) throw notFound(`no trust rule ${JSON.stringify(id.slice(0, 40))} in this drive`);
  const revoked = await stores.trust.revokeWithKeys(drive, id);
  if (!revoked) throw notFound(`no trust rule ${id} in this drive`);
  return { trust: trustView(revoked.rule) };
});

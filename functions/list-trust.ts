import { guard } from './wiring/guard';
import { trust } from './wiring/trust';
import { jsonHandler } from './http/api-handler';
import { trustView } from './http/views';

/** GET /drive/trust (admin keys only) → every trust rule of the caller's drive, revoked ones included, oldest first (the order the exchange tries them in). */
export const handler = jsonHandler({ permission: 'keys', guard, stores: { trust } }, async (_event, { drive, stores }) => {
  return { trust: (await stores.trust.rules(drive)).map(trustView) };
});

import { guard } from './wiring/guard';
import { webhooks } from './wiring/webhooks';
import { webhookView } from './core/webhooks';
import { jsonHandler } from './http/api-handler';

/** GET /drive/webhooks (admin keys only) → the drive's webhooks, oldest first, never a secret. */
export const handler = jsonHandler({ permission: 'webhooks', guard, stores: { webhooks } }, async (_event, { drive, stores }) => {
  return { webhooks: (await stores.webhooks.list(drive)).map(webhookView) };
});

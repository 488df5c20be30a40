import { guard } from './wiring/guard';
import { webhooks } from './wiring/webhooks';
import { notFound } from './core/errors';
import { WEBHOOK_ID } from './core/webhooks';
import { jsonHandler } from './http/api-handler';

/**
 * DELETE /drive/webhooks/{webhook_id} (admin keys only) → the webhook, deleted: the worker drops its queued
 * deliveries (it finds no webhook), and its failed deliveries go with it.
 */
export const handler = jsonHandler({ permission: 'webhooks', guard, stores: { webhooks } }, async (event, { drive, stores }) => {
  const id = event.pathParameters?.webhook_id ?? '';
  if (!WEBHOOK_ID.test(id)) throw notFound(`no webhook ${JSON.stringify(id.slice(0, 40))} in this drive`);
  if (!(await stores.webhooks.remove(drive, id))) throw notFound(`no webhook ${id} in this drive`);
  return { id, deleted: true };
});

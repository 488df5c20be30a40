import { guard } from './wiring/guard';
import { webhooks } from './wiring/webhooks';
import { notFound } from './core/errors';
import { WEBHOOK_ID, deliveryView } from './core/webhooks';
import { jsonHandler } from './http/api-handler';
import { queryInput } from './http/request-input';
import { DeliveriesQuery } from './openapi/request-schemas';

/**
 * GET /drive/webhooks/{webhook_id}/deliveries?status=failed&limit= (admin keys only) → the webhook's failed
 * deliveries, oldest change first: those not acknowledged within the retry period (24 hours) of their first
 * attempt. Delivered ones are not kept, so `failed` is the only status, and the default.
 */
export const handler = jsonHandler({ permission: 'webhooks', guard, stores: { webhooks } }, async (event, { drive, stores }) => {
  const id = event.pathParameters?.webhook_id ?? '';
  if (!WEBHOOK_ID.test(id)) throw notFound(`no webhook ${JSON.stringify(id.slice(0, 40))} in this drive`);
  const query = queryInput(event, DeliveriesQuery);
  if (!(await stores.webhooks.get(drive, id))) throw notFound(`no webhook ${id} in this drive`);
  return { deliveries: (await stores.webhooks.failures(drive, id, query.limit ?? 100)).map(deliveryView) };
});

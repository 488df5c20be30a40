import { changeSource } from './wiring/change-source';
import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { webhooks } from './wiring/webhooks';
import { setting } from './config';
import { ROOT, parsePath } from './core/paths';
import { registerWebhook, webhookView } from './core/webhooks';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { type Messages, jsonInput } from './http/request-input';
import { resolveAll } from './http/webhook-post';
import { CreateWebhookRequest } from './openapi/request-schemas';
import { CHANGE_TYPES } from './core/change-source';

const EXAMPLE = '{"url": "https://hooks.example.com/drive", "path": "/reports", "types": ["file.created"]}';
const MESSAGES: Messages = {
  url: { required: () => `url is required: where to POST each change, like ${EXAMPLE}` },
  types: { value: () => `types must be a list of at least one of ${CHANGE_TYPES.join(', ')}` },
};
/** The local host lets webhooks reach loopback receivers (DRIVE_WEBHOOK_ALLOW_LOOPBACK); the stack never does. */
const allowLoopback = setting('webhookAllowLoopback');

/**
 * POST /drive/webhooks (admin keys only) with `{ url, path?, types? }` → the webhook and its signing secret,
 * shown this once. The URL's host is resolved now and refused (422) if any address is not public.
 */
export const handler = jsonHandler({ permission: 'webhooks', guard, idempotency, stores: { webhooks, changeSource } }, async (event, { caller, drive, stores }) => {
  const body = jsonInput(bodyOf(event), CreateWebhookRequest, EXAMPLE, MESSAGES);
  const path = body.path == null ? ROOT : parsePath(body.path, 'path', { allowTrailingSlash: true });
  const record = await registerWebhook(
    { store: stores.webhooks, source: stores.changeSource, resolve: resolveAll },
    { drive, prefix: caller.prefix },
    { url: body.url, path, ...(body.types == null ? {} : { types: body.types }) },
    { now: new Date(), allowLoopback },
  );
  return { webhook: webhookView(record), secret: record.secret };
});

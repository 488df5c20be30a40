import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { links } from './wiring/links';
import { nodes } from './wiring/nodes';
import { confine } from './core/access';
import { invalid } from './core/errors';
import { createLink, lifetimeError, linkLifetime } from './core/links';
import { ROOT, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf } from './http/event';
import { keyHashOf } from './http/guard';
import { type Messages, jsonInput } from './http/request-input';
import { linkView } from './http/views';
import { CreateLinkRequest } from './openapi/request-schemas';

const EXAMPLE = '{"path": "/reports/q3.pdf", "expires_in": 604800}';
const MESSAGES: Messages = {
  path: { required: () => `path is required: the file to share, like ${EXAMPLE}` },
  expires_in: { type: ({ value }) => lifetimeError(value), value: ({ value }) => lifetimeError(value) },
};

/**
 * POST /drive/links with `{ path, expires_in? }` → a share link to the file: `url` opens it with no key until
 * `expires_at` (a day by default, at most 30) or until it is revoked. The token in `url` is shown this once;
 * only its SHA-256, the link's `id`, is stored.
 */
export const handler = jsonHandler({ permission: 'links', guard, idempotency, stores: { nodes, links } }, async (event, { caller, drive, stores }) => {
  const body = jsonInput(bodyOf(event), CreateLinkRequest, EXAMPLE, MESSAGES);
  const path = parsePath(body.path, 'path', { existing: true });
  if (path === ROOT) throw invalid('path must name a file, not the root');
  confine(caller, path, 'path');
  const { link, token } = await createLink(stores, drive, path, linkLifetime(body.expires_in), new Date(), { keyId: caller.keyId, keyHash: keyHashOf(event) });
  const { id, expires_at } = linkView(link);
  return { id, url: `${baseUrlOf(event)}/s/${token}`, path, expires_at };
});

import { guard, links } from './aws/dynamodb';
import { notFound } from './core/errors';
import { LINK_ID } from './core/links';
import { jsonHandler } from './http/api-handler';

/**
 * DELETE /drive/links/{link_id} → the link, revoked: its item is deleted, so the next GET of its URL is 404
 * (the GET reads the item consistently, and no cache stands between). A link of another drive, or outside
 * a confined key's folder, is 404 as if there were none.
 */
export const handler = jsonHandler('links', guard, async (event, caller) => {
  const id = event.pathParameters?.link_id ?? '';
  if (!LINK_ID.test(id)) throw notFound(`no link ${JSON.stringify(id.slice(0, 80))} in this drive`);
  if (!(await links.remove(caller.drive, id, caller.prefix))) throw notFound(`no link ${id} in this drive`);
  return { id, revoked: true };
});

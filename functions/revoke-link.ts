import { guard } from './wiring/guard';
import { links } from './wiring/links';
import { badRequest, notFound } from './core/errors';
import { LINK_ID, revokeLinksBy } from './core/links';
import { jsonHandler } from './http/api-handler';
import { queryParam } from './http/event';
import { LINK_QUERY_MESSAGES, encodeCursor, pagingOf } from './http/link-query';
import { queryInput } from './http/request-input';
import { RevokeLinksQuery } from './openapi/request-schemas';

/**
 * DELETE /drive/links/{link_id} → the link, revoked: its item is deleted, so the next GET of its URL is 404
 * (the GET reads the item consistently, and no cache stands between). A link of another drive, or outside
 * a confined key's folder, is 404 as if there were none.
 *
 * DELETE /drive/links?created_by=<key id>&limit=&cursor= → one page of the links that key made, revoked (a
 * leaked key's, say): those the caller may reach, as GET /drive/links lists them, with `next_cursor` for
 * the next page until it is null. Each page is one Query and a delete per link it revokes.
 */
export const handler = jsonHandler({ permission: 'links', guard, stores: { links } }, async (event, { caller, drive, stores }) => {
  const id = event.pathParameters?.link_id;
  if (id === undefined) {
    // Optional in the document, which had it so before it said "(required)": checked first, as always.
    if (queryParam(event, 'created_by') === undefined) throw badRequest('created_by is required: the id of the key whose links to revoke, like DELETE /drive/links?created_by=0123456789abcdef');
    const query = queryInput(event, RevokeLinksQuery, LINK_QUERY_MESSAGES);
    const createdBy = query.created_by as string;
    const { limit, after } = pagingOf(query, { under: caller.prefix });
    const { revoked, next } = await revokeLinksBy(stores.links, drive, caller.prefix, createdBy, { limit, after, now: new Date() });
    return { created_by: createdBy, revoked, next_cursor: next ? encodeCursor(next) : null };
  }
  if (!LINK_ID.test(id)) throw notFound(`no link ${JSON.stringify(id.slice(0, 80))} in this drive`);
  if (!(await stores.links.remove(drive, id, caller.prefix))) throw notFound(`no link ${id} in this drive`);
  return { id, revoked: true };
});

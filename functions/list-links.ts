import { guard } from './wiring/guard';
import { links } from './wiring/links';
import { nodes } from './wiring/nodes';
import { confine } from './core/access';
import { liveLinks } from './core/links';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { LINK_QUERY_MESSAGES, encodeCursor, pagingOf } from './http/link-query';
import { queryInput } from './http/request-input';
import { linkView } from './http/views';
import { LinksQuery } from './openapi/request-schemas';

/**
 * GET /drive/links?path=&created_by=&limit=&cursor= → the caller's drive's live links, in path order: those of
 * one file, or every one the key may reach (a confined key sees those under its folder); with `created_by`,
 * only those that key made (a page may then hold fewer than `limit`: the others are read and left out). A
 * page is one Query of `limit` (at most 100) and one batched read of their files; `next_cursor` continues
 * it. Tokens are never shown again: a link is known here by its `id`.
 */
export const handler = jsonHandler({ permission: 'links', guard, stores: { links, nodes } }, async (event, { caller, drive, stores }) => {
  const query = queryInput(event, LinksQuery, LINK_QUERY_MESSAGES);
  const path = query.path === undefined ? undefined : parsePath(query.path, 'path', { existing: true });
  if (path !== undefined) confine(caller, path, 'path');
  const filter = path === undefined ? { under: caller.prefix } : { path };
  const { limit, after } = pagingOf(query, filter);
  const createdBy = query.created_by;
  const now = new Date();
  const page = await stores.links.page(drive, filter, { limit, after, now, ...(createdBy ? { createdBy } : {}) });
  // A link whose file was deleted or replaced opens nothing any more: it is left out, and TTL removes it.
  const live = await liveLinks(stores.nodes, drive, page.links);
  return { links: live.map(linkView), next_cursor: page.next ? encodeCursor(page.next) : null };
});

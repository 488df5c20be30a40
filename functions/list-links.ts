import type { APIGatewayProxyEvent } from 'aws-lambda';
import { guard, links, nodes } from './aws/dynamodb';
import { confine } from './core/access';
import { invalid } from './core/errors';
import { LINK_ID, type LinkCursor, liveLinks } from './core/links';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { queryParam } from './http/event';
import { linkView } from './http/views';

/** Most links one page may hold. */
const MAX_PAGE = 100;

/**
 * GET /drive/links?path=&limit=&cursor= → the caller's drive's live links, in path order: those of one file,
 * or every one the key may reach (a confined key sees those under its folder). A page is one Query of
 * `limit` (at most 100) and one batched read of their files; `next_cursor` continues it. Tokens are never
 * shown again: a link is known here by its `id`.
 */
export const handler = jsonHandler('links', guard, async (event, caller) => {
  const raw = queryParam(event, 'path');
  const path = raw === undefined ? undefined : parsePath(raw, 'path', { existing: true });
  if (path !== undefined) confine(caller, path, 'path');
  const filter = path === undefined ? { under: caller.prefix } : { path };
  const { limit, after } = pagingOf(event, filter);
  const now = new Date();
  const page = await links.page(caller.drive, filter, { limit, after, now });
  // A link whose file was deleted or replaced opens nothing any more: it is left out, and TTL removes it.
  const live = await liveLinks(nodes, caller.drive, page.links);
  return { links: live.map(linkView), next_cursor: page.next ? encodeCursor(page.next) : null };
});

/** `limit` (1 to 100, default 100) and the `cursor` of the page before, checked against the listing it continues. */
function pagingOf(event: APIGatewayProxyEvent, filter: { path: string } | { under: string }): { limit: number; after?: LinkCursor } {
  const rawLimit = queryParam(event, 'limit');
  if (rawLimit !== undefined && !(/^[0-9]{1,3}$/.test(rawLimit) && Number(rawLimit) >= 1 && Number(rawLimit) <= MAX_PAGE)) {
    throw invalid(`limit must be a whole number from 1 to ${MAX_PAGE} (got ${JSON.stringify(rawLimit.slice(0, 20))})`);
  }
  const limit = rawLimit === undefined ? MAX_PAGE : Number(rawLimit);
  const cursor = queryParam(event, 'cursor');
  return { limit, ...(cursor === undefined ? {} : { after: decodeCursor(cursor, filter) }) };
}

/** An opaque cursor: the path and id of the last link a page held. */
function encodeCursor(cursor: LinkCursor): string {
  return Buffer.from(JSON.stringify([cursor.path, cursor.id])).toString('base64url');
}

function decodeCursor(cursor: string, filter: { path: string } | { under: string }): LinkCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const wrong = () => invalid('cursor is not one this API gave for this listing; pass the next_cursor of the page before, as it was');
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string' || !LINK_ID.test(value[1])) throw wrong();
  const [path, id] = value as [string, string];
  let canonical: string;
  try {
    canonical = parsePath(path, 'cursor', { existing: true });
  } catch {
    throw wrong();
  }
  // A cursor resumes inside the listing it came from: never at a path the key may not see.
  const inside = 'path' in filter ? canonical === filter.path : filter.under === '/' || canonical.startsWith(`${filter.under}/`);
  if (canonical !== path || !inside) throw wrong();
  return { path, id };
}

import { invalid } from '../core/errors';
import { LINK_ID, type LinkCursor } from '../core/links';
import { parsePath } from '../core/paths';
import type { Messages } from './request-input';

// The query of the link listing and of the revoke of a key's links (LinksQuery and RevokeLinksQuery in
// functions/openapi/schemas.ts): one page, its cursor, the key filter.

/** Most links one page may hold. */
export const MAX_LINK_PAGE = 100;

/** The words of a `created_by` that is not a key id, in both queries. */
export const LINK_QUERY_MESSAGES: Messages = {
  created_by: { value: ({ value }) => `created_by must be a key id: 16 hex digits, as GET /drive/links lists them (got ${JSON.stringify((value as string).slice(0, 40))})` },
};

/** `limit` (default 100) and the `cursor` of the page before, checked against the listing it continues. */
export function pagingOf(query: { limit?: number; cursor?: string }, filter: { path: string } | { under: string }): { limit: number; after?: LinkCursor } {
  return { limit: query.limit ?? MAX_LINK_PAGE, ...(query.cursor === undefined ? {} : { after: decodeCursor(query.cursor, filter) }) };
}

/** An opaque cursor: the path and id of the last link a page held. */
export function encodeCursor(cursor: LinkCursor): string {
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

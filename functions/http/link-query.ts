import type { APIGatewayProxyEvent } from 'aws-lambda';
import { invalid } from '../core/errors';
import { KEY_ID, LINK_ID, type LinkCursor } from '../core/links';
import { parsePath } from '../core/paths';
import { queryParam } from './event';

// The query of the link listing and of the revoke of a key's links: one page, its cursor, the key filter.

/** Most links one page may hold. */
export const MAX_LINK_PAGE = 100;

/** `created_by`, the id of the key whose links are meant, or undefined; 422 for anything but a key id. */
export function createdByOf(event: APIGatewayProxyEvent): string | undefined {
  const value = queryParam(event, 'created_by');
  if (value !== undefined && !KEY_ID.test(value)) throw invalid(`created_by must be a key id: 16 hex digits, as GET /drive/links lists them (got ${JSON.stringify(value.slice(0, 40))})`);
  return value;
}

/** `limit` (1 to 100, default 100) and the `cursor` of the page before, checked against the listing it continues. */
export function pagingOf(event: APIGatewayProxyEvent, filter: { path: string } | { under: string }): { limit: number; after?: LinkCursor } {
  const rawLimit = queryParam(event, 'limit');
  if (rawLimit !== undefined && !(/^[0-9]{1,3}$/.test(rawLimit) && Number(rawLimit) >= 1 && Number(rawLimit) <= MAX_LINK_PAGE)) {
    throw invalid(`limit must be a whole number from 1 to ${MAX_LINK_PAGE} (got ${JSON.stringify(rawLimit.slice(0, 20))})`);
  }
  const limit = rawLimit === undefined ? MAX_LINK_PAGE : Number(rawLimit);
  const cursor = queryParam(event, 'cursor');
  return { limit, ...(cursor === undefined ? {} : { after: decodeCursor(cursor, filter) }) };
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

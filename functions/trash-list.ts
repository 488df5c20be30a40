import { guard } from './wiring/guard';
import { trash, trashClock } from './wiring/trash';
import { confine } from './core/access';
import { parsePath } from './core/paths';
import { decodeTrashCursor, encodeTrashCursor, listTrash } from './core/trash-list';
import { jsonHandler } from './http/api-handler';
import { queryInput } from './http/request-input';
import { trashItemView } from './http/views';
import { TrashQuery } from './openapi/request-schemas';

/**
 * GET /drive/trash?path=&limit=&cursor= → what deletes and replacements put in the trash, newest first: the
 * items in the key's folder (and at or below `path`), with `next_cursor`, and `usage`, what the trash holds in
 * that scope. Items past their purge time are no longer listed.
 */
export const handler = jsonHandler({ permission: 'trash', guard, stores: { trash } }, async (event, { caller, drive, stores }) => {
  const query = queryInput(event, TrashQuery);
  const path = query.path === undefined ? undefined : parsePath(query.path, 'path', { allowTrailingSlash: true, existing: true });
  if (path !== undefined) confine(caller, path, 'path');
  const scope = { under: caller.prefix, ...(path !== undefined && path !== '/' ? { path } : {}) };
  const after = query.cursor === undefined ? undefined : decodeTrashCursor(query.cursor, scope);
  const page = await listTrash(stores.trash, drive, { ...scope, limit: query.limit ?? 100, after, now: new Date(trashClock()) });
  return { items: page.rows.map(trashItemView), next_cursor: page.next !== undefined ? encodeTrashCursor(page.next, scope) : null, usage: page.usage };
});

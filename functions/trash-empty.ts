import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { objects } from './wiring/objects';
import { trash, trashClock } from './wiring/trash';
import { parsePath } from './core/paths';
import { emptyTrash } from './core/purge';
import { jsonHandler } from './http/api-handler';
import { queryInput } from './http/request-input';
import { EmptyTrashQuery } from './openapi/request-schemas';

const NO_PATH = () => 'path is required: the folder whose trash to empty, e.g. ?path=/reports (or ?path=/ for all of it)';

/**
 * DELETE /drive/trash?path=/folder (admin) → `{purged, path, items, files, bytes}`: every trash item at or
 * below `path` purged now, oldest first (an item a restore holds, or another purge, is left).
 */
export const handler = jsonHandler({ permission: 'empty-trash', guard, idempotency, stores: { trash, objects } }, async (event, { drive, stores, requestId }) => {
  const query = queryInput(event, EmptyTrashQuery, { path: { required: NO_PATH, value: NO_PATH } });
  const path = parsePath(query.path, 'path', { allowTrailingSlash: true, existing: true });
  const emptied = await emptyTrash(stores, drive, path, requestId, new Date(trashClock()));
  return { purged: true, path, ...emptied };
});

import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { objects } from './wiring/objects';
import { trash, trashPolicy } from './wiring/trash';
import { withinPrefix } from './core/access';
import { purgeItem } from './core/purge';
import { noSuchItem } from './core/restore';
import { jsonHandler } from './http/api-handler';

/**
 * DELETE /drive/trash/{item_id} → `{purged, id, files, bytes}`: the item's bytes and records are gone now, for
 * good. An item outside the key's folder does not exist for it (404); one being restored or purged is a 409.
 */
export const handler = jsonHandler({ permission: 'purge', guard, idempotency, stores: { trash, objects } }, async (event, { caller, drive, stores, requestId }) => {
  const id = event.pathParameters?.item_id ?? '';
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) throw noSuchItem(JSON.stringify(id.slice(0, 80)));
  const purged = await purgeItem({ ...stores, trashPolicy: trashPolicy(caller) }, drive, id, requestId, { visible: (row) => withinPrefix(caller, row.path) });
  return { purged: true, id: purged.id, files: purged.files, bytes: purged.bytes };
});

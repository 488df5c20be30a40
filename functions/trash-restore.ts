import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { nodes } from './wiring/nodes';
import { records } from './wiring/records';
import { trash, trashPolicy } from './wiring/trash';
import { confine, conflictFor, withinPrefix } from './core/access';
import { invalid } from './core/errors';
import { ROOT, parsePath } from './core/paths';
import { restoreFile } from './core/restore';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf } from './http/event';
import { jsonInput } from './http/request-input';
import { fileView } from './http/views';
import { RestoreRequest } from './openapi/request-schemas';

const EXAMPLE = '{"id": "0193a1b2-…", "to": "/restored/q3.pdf"}';

/**
 * POST /drive/trash/restore {"id", "to"?, "overwrite"?} → the restored File: the trashed file back at the path it
 * was taken from (or `to`), with its id, bytes and ETag; a file there is replaced (and trashed) only with
 * `overwrite`. An item outside the key's folder does not exist for it (404).
 */
export const handler = jsonHandler({ permission: 'restore', guard, idempotency, stores: { nodes, records, trash, jobs } }, async (event, { caller, drive, stores }) => {
  const body = jsonInput(bodyOf(event), RestoreRequest, EXAMPLE);
  let to: string | undefined;
  if (body.to !== undefined && body.to !== null) {
    to = parsePath(body.to, 'to');
    if (to === ROOT) throw invalid('to must name a file, not the root');
    confine(caller, to, 'to');
  }
  try {
    const file = await restoreFile({ ...stores, trashPolicy: trashPolicy(caller) }, drive, body.id, { to, overwrite: body.overwrite === true, visible: (row) => withinPrefix(caller, row.path) });
    return fileView(file, baseUrlOf(event));
  } catch (error) {
    throw conflictFor(caller, error);
  }
});

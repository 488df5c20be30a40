import { guard, journal, nodes } from './aws/dynamodb';
import { objects } from './aws/s3';
import { confine, conflictFor } from './core/access';
import { copyFile } from './core/copy';
import { badRequest } from './core/errors';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { jsonObject } from './http/json-body';
import { fileEntryView } from './http/views';
import { pathField } from './move';

const EXAMPLE = '{"from": "/templates/invoice.docx", "to": "/clients/acme/invoice.docx"}';

/** POST /drive/copy with `{"from", "to", "overwrite"?}` → the File entry of the copy: a new id, the bytes copied in S3. */
export const handler = jsonHandler('files', guard, async (event, caller) => {
  const body = jsonObject(bodyOf(event), ['from', 'to', 'overwrite'], EXAMPLE);
  const from = pathField(body, 'from');
  const to = pathField(body, 'to');
  if (body.overwrite !== undefined && typeof body.overwrite !== 'boolean') throw badRequest('overwrite must be true or false');
  confine(caller, from, 'from');
  confine(caller, to, 'to');
  try {
    return fileEntryView(await copyFile({ nodes, objects, journal }, caller.drive, from, to, body.overwrite === true));
  } catch (error) {
    throw conflictFor(caller, error);
  }
});

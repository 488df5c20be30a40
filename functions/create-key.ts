import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { keyAdmin } from './wiring/key-admin';
import { ROLES, accessProblem } from './core/access';
import { invalid } from './core/errors';
import { ROOT, checkVisible, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { type Messages, jsonInput } from './http/request-input';
import { keyView } from './http/views';
import { CreateKeyRequest } from './openapi/request-schemas';

const EXAMPLE = '{"name": "nightly export", "role": "upload-only", "prefix": "/exports"}';
// C0 and C1 controls: a name is shown in tables and the dashboard.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const NAME_RULE = 'name must be 1 to 100 characters, without control characters';
const MESSAGES: Messages = {
  name: { required: () => `name is required: a label for the key, like ${EXAMPLE}`, value: () => NAME_RULE },
  role: { value: ({ value }) => `role must be one of ${ROLES.join(', ')} (got ${JSON.stringify((value as string).slice(0, 40))})` },
};

/**
 * POST /drive/keys (admin keys only) with `{ name, role?, prefix? }` → the new key of the caller's drive and
 * its secret, which is shown this once and stored only as a hash.
 */
export const handler = jsonHandler({ permission: 'keys', guard, idempotency, stores: { keyAdmin } }, async (event, { drive, stores }) => {
  const { name, role: asked, prefix: rawPrefix } = jsonInput(bodyOf(event), CreateKeyRequest, EXAMPLE, MESSAGES);
  // Beyond the schema's 1 to 100 characters: not blank, no controls, and at most 100 UTF-16 units as always.
  if (name.trim() === '' || name.length > 100 || CONTROL.test(name)) throw invalid(NAME_RULE);
  checkVisible(name, 'name');
  const role = asked ?? 'read-write';
  const prefix = rawPrefix == null ? ROOT : parsePath(rawPrefix, 'prefix', { allowTrailingSlash: true });
  const problem = accessProblem(role, prefix);
  if (problem) throw invalid(problem);
  const { record, secret } = await stores.keyAdmin.create(drive, name.trim(), { role, prefix });
  return { key: keyView(record), secret };
});

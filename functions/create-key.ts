import { guard } from './wiring/guard';
import { keyAdmin } from './wiring/key-admin';
import { ROLES, type Role, accessProblem } from './core/access';
import { badRequest, invalid } from './core/errors';
import { ROOT, checkVisible, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { jsonObject, optionalString } from './http/json-body';
import { keyView } from './http/views';
import type { Wire } from './openapi/schemas';

const EXAMPLE = '{"name": "nightly export", "role": "upload-only", "prefix": "/exports"}';
// C0 and C1 controls: a name is shown in tables and the dashboard.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * POST /drive/keys (admin keys only) with `{ name, role?, prefix? }` → the new key of the caller's drive and
 * its secret, which is shown this once and stored only as a hash.
 */
export const handler = jsonHandler({ permission: 'keys', guard, stores: { keyAdmin } }, async (event, { drive, stores }) => {
  const body = jsonObject<Wire<'CreateKeyRequest'>>(bodyOf(event), ['name', 'role', 'prefix'], EXAMPLE);
  const name = optionalString(body, 'name');
  if (name === undefined) throw badRequest(`name is required: a label for the key, like ${EXAMPLE}`);
  if (name.trim() === '' || name.length > 100 || CONTROL.test(name)) throw invalid('name must be 1 to 100 characters, without control characters');
  checkVisible(name, 'name');
  const role = optionalString(body, 'role') ?? 'read-write';
  if (!(ROLES as string[]).includes(role)) throw invalid(`role must be one of ${ROLES.join(', ')} (got ${JSON.stringify(role.slice(0, 40))})`);
  const rawPrefix = optionalString(body, 'prefix');
  const prefix = rawPrefix === undefined ? ROOT : parsePath(rawPrefix, 'prefix', { allowTrailingSlash: true });
  const problem = accessProblem(role as Role, prefix);
  if (problem) throw invalid(problem);
  const { record, secret } = await stores.keyAdmin.create(drive, name.trim(), { role: role as Role, prefix });
  return { key: keyView(record), secret };
});

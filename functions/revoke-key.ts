import { guard } from './wiring/guard';
import { keyAdmin } from './wiring/key-admin';
import { conflict, notFound } from './core/errors';
import { jsonHandler } from './http/api-handler';
import { keyView } from './http/views';

/**
 * DELETE /drive/keys/{key_id} (admin keys only) → the key, revoked: it answers 401 from then on (within the
 * key cache of a warm function, 30 s). The drive's last live admin key cannot be revoked this way.
 */
export const handler = jsonHandler({ permission: 'keys', guard, stores: { keyAdmin } }, async (event, { drive, stores }) => {
  const id = event.pathParameters?.key_id ?? '';
  if (!/^[0-9a-f]{16}$/.test(id)) throw notFound(`no key ${JSON.stringify(id.slice(0, 40))} in this drive`);
  const revoked = await stores.keyAdmin.revoke(id, drive);
  if (!revoked) throw notFound(`no key ${id} in this drive`);
  if (revoked === 'last admin') throw conflict(`key ${id} is the drive's last admin key; create another admin key before revoking it`, []);
  return { key: keyView(revoked) };
});

import { guard } from './wiring/guard';
import { keyAdmin } from './wiring/key-admin';
import { jsonHandler } from './http/api-handler';
import { keyView } from './http/views';

/** GET /drive/keys (admin keys only) → every key of the caller's drive, revoked ones included, oldest first. */
export const handler = jsonHandler({ permission: 'keys', guard, stores: { keyAdmin } }, async (_event, { drive, stores }) => {
  return { keys: (await stores.keyAdmin.list(drive)).map(keyView) };
});

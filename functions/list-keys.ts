import { guard } from './wiring/guard';
import { keyAdmin } from './wiring/key-admin';
import { jsonHandler } from './http/api-handler';
import { keyView } from './http/views';

/** GET /drive/keys (admin keys only) → every key of the caller's drive, revoked ones included, oldest first. */
export const handler = jsonHandler('keys', guard, async (_event, caller) => {
  return { keys: (await keyAdmin.list(caller.drive)).map(keyView) };
});

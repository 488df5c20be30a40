import { guard } from './wiring/guard';
import { jsonHandler } from './http/api-handler';

/**
 * GET /drive/whoami → what the calling key may do: its role, the folder it is confined to, its drive and its
 * id (never its secret or hash), so that a client offers only what the API will allow. Any valid key may ask.
 */
export const handler = jsonHandler({ permission: 'whoami', guard, stores: {} }, async (_event, { caller, drive }) => ({
  role: caller.role,
  prefix: caller.prefix,
  drive,
  key_id: caller.keyId,
}));

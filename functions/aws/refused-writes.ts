import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { WRITE_REFUSED } from '../core/ports';

/** The inputs of calls one of whose attempts failed in a way that may have left its write made. */
const uncertain = new WeakSet<object>();
const watched = new WeakSet<object>();

/**
 * Has `client` note, for each call, whether any attempt of it failed in a way that may have made its write: a
 * lost reply, a timeout, a server fault (anything but a refusal of the request itself, AWS's `$fault:
 * 'client'`). The SDK retries a throttle and a lost reply alike and throws only the last attempt's error, so a
 * throttle thrown after retries does not by itself say that no attempt was made: this per-attempt note does.
 * Added once per client (before its first call: `cacheMiddleware` resolves a command's stack once), inside the
 * retry loop (`finalizeRequest`, low priority, after the SDK's retry middleware).
 */
export function watchAttempts(client: DynamoDBClient): DynamoDBClient {
  if (watched.has(client)) return client;
  watched.add(client);
  client.middlewareStack.add(
    (next, _context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (!isRefusal(error) && typeof args.input === 'object' && args.input !== null) uncertain.add(args.input);
        throw error;
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'driveWatchAttempts', override: true },
  );
  return client;
}

/**
 * Marks `error`, thrown by sending `input` through a client `watchAttempts` watches, `WRITE_REFUSED` when every
 * attempt was refused outright, so that no attempt of the write can have been made. Returns `error`.
 */
export function markRefusal(error: unknown, input: object): unknown {
  if (isRefusal(error) && !uncertain.has(input)) (error as Record<symbol, unknown>)[WRITE_REFUSED] = true;
  return error;
}

function isRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { $fault?: unknown }).$fault === 'client';
}

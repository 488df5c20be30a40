import { DynamoTrashStore } from '../aws/dynamo-trash';
import { setting } from '../config';
import type { Caller } from '../core/access';
import type { TrashPolicy } from '../core/trash';
import { dynamodb } from './dynamodb';
import './clean-up-report';

/** The trash's rows, members and due entries, in the nodes table. */
export const trash = new DynamoTrashStore(dynamodb, setting('nodesTable'));

/**
 * The trash's clock: the machine's. Tests move time on by calling the sweep core with a later `now` through the
 * same adapters (test/support/local-host.ts `sweepTrashAt`), not by moving this clock.
 */
export const trashClock = (): number => Date.now();

/** What a request by `caller` does with what it removes: trash it for `DRIVE_TRASH_DAYS` days (0: delete). */
export function trashPolicy(caller?: Pick<Caller, 'keyId'>): TrashPolicy {
  return { days: setting('trashDays'), ...(caller ? { by: caller.keyId } : {}), now: trashClock };
}

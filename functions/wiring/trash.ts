import { DynamoTrashStore } from '../aws/dynamo-trash';
import { setting } from '../config';
import type { Caller } from '../core/access';
import type { TrashPolicy } from '../core/trash';
import { dynamodb } from './dynamodb';
import './clean-up-report';

/** The trash's rows, members and due entries, in the nodes table. */
export const trash = new DynamoTrashStore(dynamodb, setting('nodesTable'));

/** How far the trash's clock is moved on (the local host's tests-only hook; 0 in Lambda). */
let clockOffsetMs = 0;

/** The trash's clock: the machine's, moved on by what a test asked the local host for. */
export const trashClock = (): number => Date.now() + clockOffsetMs;

/** Tests only, through the local host: moves the trash's clock on by `ms` (purge times pass without waiting). */
export function advanceTrashClock(ms: number): void {
  clockOffsetMs += ms;
}

/** What a request by `caller` does with what it removes: trash it for `DRIVE_TRASH_DAYS` days (0: delete). */
export function trashPolicy(caller?: Pick<Caller, 'keyId'>): TrashPolicy {
  return { days: setting('trashDays'), ...(caller ? { by: caller.keyId } : {}), now: trashClock };
}

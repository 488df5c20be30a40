import { readChanges } from '../core/changes/change-log';
import { encodeCursor } from '../core/changes/feed';
import type { ChangeSource } from '../core/change-source';
import { changeView } from '../http/views';
import { log } from '../telemetry/log';
import { changeLog } from './change-log';

/**
 * The drive's log as the webhooks read it (functions/core/change-source.ts): the change feed's own reader
 * (`readChanges` over the `changes` table, contiguous, a change in flight ending the read), its changes
 * rendered as GET /drive/changes renders them (`changeView`), and its cursors.
 */
export const changeSource: ChangeSource = {
  head: (drive) => changeLog.newest(drive),
  async read(drive, after, limit) {
    const found = await readChanges(changeLog, drive, after, limit);
    if (found.expired) {
      // The dispatcher fell further behind than the log keeps (it was down for days): the changes after `after`
      // are gone. It goes on from the oldest change held rather than stop there for good.
      const [oldest] = await changeLog.read(drive, after, 1);
      log('ERROR', 'webhook changes expired before they were dispatched; skipped to the oldest change kept', { drive, after, next: oldest?.position });
      return { changes: [], position: oldest ? oldest.position - 1 : after };
    }
    return { changes: found.changes.map(changeView), position: found.position };
  },
  cursor: (drive, subtree, position, now) => encodeCursor({ drive, subtree, position, at: Math.floor(now.getTime() / 1000) }),
};

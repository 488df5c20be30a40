import { setting } from './config';
import { decodeCursor, encodeCursor, latestCursor, readFeed } from './core/changes/feed';
import { ROOT, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { queryInput } from './http/request-input';
import { changeView } from './http/views';
import { ChangesLatestQuery, ChangesQuery } from './openapi/request-schemas';
import { changeLog } from './wiring/change-log';
import { guard } from './wiring/guard';

const retentionSeconds = setting('changesRetentionDays') * 24 * 60 * 60;
const clock = { now: () => Date.now(), sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
/** A long poll answers this long before the request's deadline (the function's or the gateway's, whichever first). */
const DEADLINE_MARGIN_MS = 2000;

/**
 * GET /drive/changes/latest?path= → a cursor at "now" for the folder; GET /drive/changes?cursor=&limit=&timeout=
 * → the changes after a cursor, waiting up to `timeout` seconds for one (docs/change-feed-design.md).
 */
export const handler = jsonHandler({ permission: 'changes', guard, stores: { changeLog } }, async (event, { caller, stores, deadline }) => {
  if (event.resource === '/drive/changes/latest') {
    const query = queryInput(event, ChangesLatestQuery);
    const path = parsePath(query.path ?? ROOT, 'path', { allowTrailingSlash: true, existing: true });
    return { cursor: encodeCursor(await latestCursor(stores.changeLog, caller, path, clock)) };
  }
  const query = queryInput(event, ChangesQuery);
  const page = await readFeed(stores.changeLog, caller, decodeCursor(query.cursor), {
    limit: query.limit ?? 100,
    timeoutMs: (query.timeout ?? 0) * 1000,
    deadline: deadline - DEADLINE_MARGIN_MS,
    retentionSeconds,
    clock,
  });
  return { changes: page.changes.map(changeView), next_cursor: encodeCursor(page.next), has_more: page.hasMore };
});

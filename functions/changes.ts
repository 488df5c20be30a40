import { setting } from './config';
import { decodeCursor, encodeCursor, latestCursor, readFeed } from './core/changes/feed';
import { decodeRecentPage, encodeRecentPage, recentChanges } from './core/changes/recent';
import { invalid } from './core/errors';
import { ROOT, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { queryInput } from './http/request-input';
import { changeView } from './http/views';
import { ChangesLatestQuery, ChangesQuery, ChangesRecentQuery } from './openapi/request-schemas';
import { changeLog } from './wiring/change-log';
import { guard } from './wiring/guard';

const retentionSeconds = setting('changesRetentionDays') * 24 * 60 * 60;
const clock = { now: () => Date.now(), sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
/** A long poll answers this long before the request's deadline (the function's or the gateway's, whichever first). */
const DEADLINE_MARGIN_MS = 2000;

/**
 * GET /drive/changes/latest?path= → a cursor at "now" for the folder; GET /drive/changes?cursor=&limit=&timeout=
 * → the changes after a cursor, waiting up to `timeout` seconds for one (docs/change-feed-design.md);
 * GET /drive/changes/recent?path=&before=&limit= → the folder's most recent changes, newest first.
 */
export const handler = jsonHandler({ permission: 'changes', guard, stores: { changeLog } }, async (event, { caller, stores, deadline }) => {
  if (event.resource === '/drive/changes/latest') {
    const query = queryInput(event, ChangesLatestQuery);
    const path = parsePath(query.path ?? ROOT, 'path', { allowTrailingSlash: true, existing: true });
    return { cursor: encodeCursor(await latestCursor(stores.changeLog, caller, path, clock)) };
  }
  if (event.resource === '/drive/changes/recent') {
    const query = queryInput(event, ChangesRecentQuery);
    const path = query.path === undefined ? undefined : parsePath(query.path, 'path', { allowTrailingSlash: true, existing: true });
    const page = query.before === undefined ? undefined : decodeRecentPage(query.before);
    if (page && path !== undefined && path !== page.subtree) throw invalid(`before is a page of ${page.subtree}, not of ${path}: give before alone`);
    const recent = await recentChanges(stores.changeLog, caller, page ? { page } : { subtree: path ?? ROOT }, { limit: query.limit ?? 20, now: clock.now() });
    return { changes: recent.changes.map(changeView), cursor: encodeCursor(recent.cursor), next_before: recent.next ? encodeRecentPage(recent.next) : null };
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

import { setting } from './config';
import { type LoggedChange } from './core/changes/change-log';
import { decodeCursor, encodeCursor, latestCursor, readFeed } from './core/changes/feed';
import { ROOT, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { queryInput } from './http/request-input';
import { fileEntryView, folderEntryView } from './http/views';
import { ChangesLatestQuery, ChangesQuery } from './openapi/request-schemas';
import type { Wire } from './openapi/schemas';
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

/** A change as the feed sends it: the file as GET /drive/list gives it (with `etag`), or the folder. */
export function changeView(change: LoggedChange): Wire<'Change'> {
  return {
    id: String(change.position),
    type: change.type,
    path: change.path,
    at: change.at,
    ...(change.from !== undefined ? { from: change.from } : {}),
    ...(change.node.kind === 'file' ? { file: fileEntryView(change.node, { etag: true }) } : { folder: folderEntryView(change.node) }),
  };
}

import { type DriveClient, json } from './api-client';

// The change feed (issue 27) as the tests follow it: a cursor from GET /drive/changes/latest, then long polls of
// GET /drive/changes until what a test waits for came, bounded by a count of requests, never by the clock.

export interface ChangeJson {
  id: string;
  type: string;
  path: string;
  from?: string;
  at: string;
  file?: { id: string; path: string; etag?: string };
  folder?: { id: string; path: string };
}

export interface ChangePageJson {
  data: { changes: ChangeJson[]; next_cursor: string; has_more: boolean };
}

/** A cursor at the feed's end for `path`'s subtree: changes after it are the ones a follower gets. */
export async function latestCursor(client: DriveClient, path = '/'): Promise<string> {
  const res = await json<{ data: { cursor: string } }>(client.request('GET', `/drive/changes/latest?${new URLSearchParams({ path })}`));
  expect(res.status).toBe(200);
  return res.body.data.cursor;
}

/**
 * Long-polls from `cursor`, `limit` changes a page, until `done` says the changes so far are all it waits for
 * (at most `requests` requests), then checks nothing more waits: no change is given twice or left over.
 */
export async function followFeed(
  client: DriveClient,
  cursor: string,
  done: (changes: readonly ChangeJson[]) => boolean,
  { requests = 60, limit = 1000 } = {},
): Promise<{ changes: ChangeJson[]; cursor: string }> {
  const changes: ChangeJson[] = [];
  for (let i = 0; i < requests && !done(changes); i++) {
    const res = await json<ChangePageJson>(client.request('GET', `/drive/changes?${new URLSearchParams({ cursor, limit: String(limit), timeout: '25' })}`));
    expect(res.status).toBe(200);
    expect(res.body.data.changes.length).toBeLessThanOrEqual(limit);
    changes.push(...res.body.data.changes);
    cursor = res.body.data.next_cursor;
  }
  const after = await json<ChangePageJson>(client.request('GET', `/drive/changes?${new URLSearchParams({ cursor, timeout: '0' })}`));
  expect(after.body.data.changes).toEqual([]);
  return { changes, cursor };
}

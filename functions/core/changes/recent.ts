import { type Caller, confine } from '../access';
import { invalid } from '../errors';
import { type ChangeLog, COMMIT_VISIBLE_MS, type LoggedChange } from './change-log';
import { type FeedCursor, inSubtree } from './feed';

/**
 * Where a page of a folder's recent activity ends: the drive, the folder, the position the next (older) page
 * reads below, and when the change there was logged (to tell a hole just below it that stays from one that is
 * committing). Opaque to clients; a different shape from a feed cursor, so neither is taken for the other.
 */
export interface RecentPage {
  drive: string;
  subtree: string;
  before: number;
  loggedAt: number;
}

/** The page token as clients hold it: base64url of its JSON (checked on every request, so not signed). */
export function encodeRecentPage(page: RecentPage): string {
  return Buffer.from(JSON.stringify({ v: 1, k: 'recent', d: page.drive, p: page.subtree, b: page.before, l: page.loggedAt })).toString('base64url');
}

/** The page `text` holds, or a 422 for one no answer of GET /drive/changes/recent gave. */
export function decodeRecentPage(text: string): RecentPage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const { v, k, d, p, b, l } = (parsed ?? {}) as Record<string, unknown>;
  if (v !== 1 || k !== 'recent' || typeof d !== 'string' || typeof p !== 'string' || !p.startsWith('/') || !Number.isSafeInteger(b) || (b as number) < 1 || !Number.isSafeInteger(l)) {
    throw invalid('before is not a page this route gave; take one from the `next_before` of GET /drive/changes/recent');
  }
  return { drive: d, subtree: p, before: b as number, loggedAt: l as number };
}

/**
 * The most log items one request reads, in at most `RECENT_QUERIES` queries: the first reads `limit` (all a
 * reader of `/` needs), the second, only when that page is not full and the log goes on, the rest of these.
 */
export const RECENT_SCAN = 1000;
export const RECENT_QUERIES = 2;

export interface RecentActivity {
  /** Newest first, as a reader of the folder sees them (a move in a creation, out a deletion). */
  changes: LoggedChange[];
  /** A feed cursor just after the newest change this page could hold: GET /drive/changes with it gives every later one. */
  cursor: FeedCursor;
  /** Where the next, older, page starts; undefined when the log holds no older change. */
  next?: RecentPage;
}

/**
 * The most recent changes of `subtree` (or of the page's folder, below its position), newest first, at most
 * `limit`, in at most `RECENT_QUERIES` DynamoDB calls (`Query`) over at most `RECENT_SCAN` items, whatever the
 * log holds. A page may hold fewer than `limit` (even none) while `next` says older ones may follow: a folder
 * whose changes are sparse among the drive's is read on page by page.
 *
 * A hole in the log just below a change logged under `COMMIT_VISIBLE_MS` ago is a transaction caught
 * committing (DynamoDB's read-committed `Query`): the page ends above it, so the next page, read after the
 * commit, gives it. A hole below an older change is the TTL's, and is passed.
 */
export async function recentChanges(
  log: ChangeLog,
  caller: Caller,
  from: { subtree: string } | { page: RecentPage },
  options: { limit: number; now: number },
): Promise<RecentActivity> {
  const { limit, now } = options;
  let subtree: string;
  /** The change just above the next one to read (given or passed): the next read, and page, start below it. */
  let above: { position: number; loggedAt: number } | undefined;
  if ('page' in from) {
    if (from.page.drive !== caller.drive) throw invalid('before is not a page of this key\'s drive; take one from GET /drive/changes/recent');
    subtree = from.page.subtree;
    confine(caller, subtree, 'before');
    above = { position: from.page.before, loggedAt: from.page.loggedAt };
  } else {
    subtree = from.subtree;
    confine(caller, subtree, 'path');
  }
  /** The newest position this page could hold: the feed cursor follows on after it. */
  let top = above === undefined ? undefined : above.position - 1;
  const changes: LoggedChange[] = [];
  let scanned = 0;
  let exhausted = false;
  let held = false;
  for (let query = 0; query < RECENT_QUERIES && !exhausted && !held && changes.length < limit && scanned < RECENT_SCAN; query++) {
    const size = query === 0 ? Math.min(limit, RECENT_SCAN) : RECENT_SCAN - scanned;
    const found = await log.readBefore(caller.drive, above?.position, size);
    scanned += size;
    let read = 0;
    for (const change of found.changes) {
      top ??= change.position;
      if (above !== undefined && change.position < above.position - 1 && above.loggedAt >= now - COMMIT_VISIBLE_MS) {
        held = true;
        break;
      }
      read++;
      above = { position: change.position, loggedAt: change.loggedAt };
      const scoped = inSubtree(change, subtree);
      if (scoped) changes.push(scoped);
      if (changes.length === limit) break;
    }
    exhausted = read === found.changes.length && !found.more;
  }
  const cursor: FeedCursor = { drive: caller.drive, subtree, position: top ?? 0, at: Math.floor(now / 1000) };
  if (exhausted || above === undefined || above.position <= 1) return { changes, cursor };
  return { changes, cursor, next: { drive: caller.drive, subtree, before: above.position, loggedAt: above.loggedAt } };
}

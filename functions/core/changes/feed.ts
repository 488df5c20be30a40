import { type Caller, confine } from '../access';
import { cursorExpired, invalid } from '../errors';
import { ROOT } from '../paths';
import { type ChangeLog, type LoggedChange, readChanges } from './change-log';

/** What a feed cursor holds: the drive, the subtree followed, the last position seen and when it was given (unix seconds). */
export interface FeedCursor {
  drive: string;
  subtree: string;
  position: number;
  at: number;
}

/** The cursor as clients hold it: opaque, base64url of its JSON (checked on every request, so not signed). */
export function encodeCursor(cursor: FeedCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, d: cursor.drive, p: cursor.subtree, s: cursor.position, t: cursor.at })).toString('base64url');
}

/** The cursor `text` holds, or a 422 for one no answer of the feed gave. */
export function decodeCursor(text: string): FeedCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const { v, d, p, s, t } = (parsed ?? {}) as Record<string, unknown>;
  if (v !== 1 || typeof d !== 'string' || typeof p !== 'string' || !p.startsWith('/') || !Number.isSafeInteger(s) || (s as number) < 0 || !Number.isSafeInteger(t)) {
    throw invalid('cursor is not a cursor this feed gave; take one from GET /drive/changes/latest');
  }
  return { drive: d, subtree: p, position: s as number, at: t as number };
}

/** What the feed's reads wait on: the clock, a pause, and the time the request must answer by. */
export interface FeedClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** How often a long poll reads the log again, and how long it lingers after finding changes, for more. */
export const POLL_MS = 250;
/** The most log items one request reads (a subtree's follower may pass many outside it). */
const MAX_READ = 4000;

export interface FeedPage {
  changes: LoggedChange[];
  next: FeedCursor;
  hasMore: boolean;
}

/** A cursor at "now" for `subtree` of the caller's drive: the log's last position. */
export async function latestCursor(log: ChangeLog, caller: Caller, subtree: string, clock: FeedClock): Promise<FeedCursor> {
  confine(caller, subtree, 'path');
  const at = Math.floor(clock.now() / 1000);
  return { drive: caller.drive, subtree, position: await log.newest(caller.drive), at };
}

/**
 * The changes after `cursor` in its subtree, at most `limit`; with none to give, waits up to `timeoutMs`
 * (bounded by `deadline`, epoch ms) for one, reading the log every `POLL_MS` (docs/change-feed-design.md,
 * "One request"). A cursor older than `retentionSeconds`, or whose next change the log no longer holds, is
 * `410 cursor_expired`.
 */
export async function readFeed(
  log: ChangeLog,
  caller: Caller,
  cursor: FeedCursor,
  options: { limit: number; timeoutMs: number; deadline: number; retentionSeconds: number; clock: FeedClock },
): Promise<FeedPage> {
  const { clock, limit } = options;
  // A cursor outlives keys: its drive and subtree are checked against the key on every request.
  if (cursor.drive !== caller.drive) throw invalid('cursor is not a cursor of this key\'s drive; take one from GET /drive/changes/latest');
  confine(caller, cursor.subtree, 'cursor');
  const expired = () => cursorExpired(`the cursor is older than the ${Math.round(options.retentionSeconds / 86400)} days of changes kept; list the folder again and take a new cursor from GET /drive/changes/latest`);
  if (clock.now() / 1000 - cursor.at > options.retentionSeconds) throw expired();
  const waitUntil = Math.min(clock.now() + options.timeoutMs, options.deadline);
  const changes: LoggedChange[] = [];
  let position = cursor.position;
  let readAt = clock.now();
  let lingered = false;
  for (let read = 0; ; ) {
    readAt = clock.now();
    const found = await readChanges(log, cursor.drive, position, Math.min(limit * 2, 1000), readAt);
    if (found.expired) throw expired();
    let full = false;
    for (const change of found.changes) {
      read++;
      position = change.position;
      const scoped = inSubtree(change, cursor.subtree);
      if (scoped) changes.push(scoped);
      if (changes.length === limit || read >= MAX_READ) {
        full = true;
        break;
      }
    }
    const next = { ...cursor, position, at: Math.floor(readAt / 1000) };
    if (full) return { changes, next, hasMore: true };
    // Caught up with the log (this read found less than it asked for, or nothing).
    const caughtUp = found.changes.length < Math.min(limit * 2, 1000);
    if (!caughtUp) continue;
    if (changes.length > 0 && (lingered || clock.now() + POLL_MS > waitUntil)) return { changes, next, hasMore: false };
    if (changes.length === 0 && clock.now() + POLL_MS > waitUntil) return { changes, next, hasMore: false };
    // A change found: wait once more for those right behind it (a burst answered in one page, not many).
    if (changes.length > 0) lingered = true;
    await clock.sleep(POLL_MS);
  }
}

/**
 * The change as a follower of `subtree` sees it, or undefined if it is none of its business: a move in from
 * outside is a creation, a move out a deletion at its old path (a confined follower learns no path outside).
 */
export function inSubtree(change: LoggedChange, subtree: string): LoggedChange | undefined {
  const within = (path: string | undefined) => path !== undefined && (subtree === ROOT || path === subtree || path.startsWith(`${subtree}/`));
  const to = within(change.path);
  const from = within(change.from);
  if (change.from === undefined) return to ? change : undefined;
  if (to && from) return change;
  const { from: old, ...rest } = change;
  const kind = change.node.kind;
  if (to) return { ...rest, type: kind === 'file' ? 'file.created' : 'folder.created' };
  if (from) return { ...rest, type: kind === 'file' ? 'file.deleted' : 'folder.deleted', path: old!, node: { ...change.node, path: old! } };
  return undefined;
}

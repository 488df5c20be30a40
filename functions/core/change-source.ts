/**
 * The change feed as the webhooks see it (issue 27): a narrow port onto the drive's log of changes
 * (docs/change-feed-design.md, "Sequencing"), so that the dispatcher follows the log as any client does
 * without knowing how it is stored. The feed's own module implements it over the `changes` table; tests use
 * `MemoryChangeSource` (test/support/webhook-ports.ts).
 */

import { CHANGE_TYPES, type ChangeType } from './changes/change-log';

/** The seven kinds of change, as the contract names them: the feed's (functions/core/changes/change-log.ts). */
export { CHANGE_TYPES, type ChangeType };

/**
 * One change as the contract renders it: `id` is its position in the drive's log (as a string), `at` when the
 * write happened; a move carries `from`; `file` or `folder` is the entry as it stands after the change (absent
 * on a delete if the log keeps none).
 */
export interface Change {
  id: string;
  type: ChangeType;
  path: string;
  at: string;
  from?: string;
  file?: Record<string, unknown>;
  folder?: Record<string, unknown>;
}

/** What one read of the log gives: its changes in log order, and the last position read. */
export interface ChangePage {
  changes: Change[];
  /** The last position read (`after` when nothing was): the next read starts after it. */
  position: number;
}

/** The drive's log of changes, read forward from a position. */
export interface ChangeSource {
  /**
   * Up to `limit` changes after position `after`, in the log's order: only a contiguous prefix (a change
   * is never followed by one read past a gap), so that a reader that advances to `position` skips nothing.
   */
  read(drive: string, after: number, limit: number): Promise<ChangePage>;
  /** The last position the drive's log holds (0 for an empty log): a webhook made now starts after it. */
  head(drive: string): Promise<number>;
  /** The feed's cursor for a follower of `subtree` that has seen everything up to `position`, given at `now`. */
  cursor(drive: string, subtree: string, position: number, now: Date): string;
}

/** Whether `path` is `subtree` or lies below it. */
export function within(subtree: string, path: string): boolean {
  return subtree === '/' || path === subtree || path.startsWith(`${subtree}/`);
}

/**
 * The change as a follower of `subtree` sees it, or undefined if it lies outside: a move into the subtree
 * from outside is a creation at `path`, a move out a deletion at `from` whose entry stands at `from` too (so
 * that the follower learns no path outside the subtree and its state stays right), exactly as the feed
 * renders them (functions/core/changes/feed.ts, `inSubtree`; docs/change-feed-design.md, "Scope").
 */
export function inScope(change: Change, subtree: string): Change | undefined {
  const here = within(subtree, change.path);
  const from = change.from;
  if (from === undefined) return here ? change : undefined;
  const there = within(subtree, from);
  if (here && there) return change;
  const kind = change.type.startsWith('file.') ? 'file' : 'folder';
  const { from: _from, ...rest } = change;
  if (here) return { ...rest, type: `${kind}.created` };
  if (there) {
    const { file, folder, ...bare } = rest;
    const at = (entry: Record<string, unknown>) => ({ ...entry, ...('name' in entry ? { name: from.slice(from.lastIndexOf('/') + 1) } : {}), ...('path' in entry ? { path: from } : {}) });
    return { ...bare, type: `${kind}.deleted`, path: from, ...(file ? { file: at(file) } : {}), ...(folder ? { folder: at(folder) } : {}) };
  }
  return undefined;
}

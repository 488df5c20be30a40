import { invalid } from './errors';
import type { TrashRow, TrashStore } from './ports';
import { restorable } from './trash';

/** Rows one listing request reads at most (pages of `ROWS_PER_READ`), for its page and its usage totals. */
export const MAX_ROWS_READ = 10_000;
const ROWS_PER_READ = 1000;

/** What the trash holds in a scope: items (rows), the files they hold, their bytes. */
export interface TrashUsage {
  items: number;
  files: number;
  bytes: number;
}

/** One page of the trash. */
export interface TrashPage {
  rows: TrashRow[];
  /** The id of the last row the page holds, when more rows in scope may follow. */
  next?: string;
  usage: TrashUsage;
  /** Whether `usage` counts every row of the scope (false past `MAX_ROWS_READ` rows). */
  complete: boolean;
}

/** Whether `row` lies in the scope `under` (the key's prefix) and, with `path`, at or below it, or is a folder above it that held it. */
export function inScope(row: Pick<TrashRow, 'path' | 'type'>, under: string, path?: string): boolean {
  const below = (p: string, top: string) => top === '/' || p === top || p.startsWith(`${top}/`);
  if (!below(row.path, under)) return false;
  if (path === undefined) return true;
  return below(row.path, path) || (row.type === 'folder' && path.startsWith(`${row.path}/`));
}

/**
 * A page of the trash of `drive`, newest first (docs/trash-design.md, "Listing"): the rows before their
 * `purgeAt` at `now` in the key's scope `under` (and at or below `path`, or a folder above it), at most `limit`,
 * after the row `after`. `usage` sums every row of the scope the request read (all of them, up to
 * `MAX_ROWS_READ`): until the change feed keeps totals, the listing reads the rows to sum them.
 */
export async function listTrash(trash: TrashStore, drive: string, options: { under: string; path?: string; limit: number; after?: string; now: Date }): Promise<TrashPage> {
  const rows: TrashRow[] = [];
  const usage: TrashUsage = { items: 0, files: 0, bytes: 0 };
  let next: string | undefined;
  let read = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await trash.list(drive, ROWS_PER_READ, cursor);
    read += page.rows.length;
    for (const row of page.rows) {
      if (!restorable(row, options.now) || !inScope(row, options.under, options.path)) continue;
      usage.items++;
      usage.files += row.files;
      usage.bytes += row.bytes;
      // Newest first: the page goes on after the cursor's row (ids sort by time).
      if (options.after !== undefined && row.id >= options.after) continue;
      if (rows.length < options.limit) rows.push(row);
      else if (next === undefined) next = rows.at(-1)!.id;
    }
    cursor = page.last;
    if (cursor === undefined || read >= MAX_ROWS_READ) break;
  }
  return { rows, ...(next !== undefined ? { next } : {}), usage, complete: cursor === undefined };
}

/** An opaque cursor: the last row's id, with the scope it was given for (another scope's cursor is refused). */
export function encodeTrashCursor(id: string, scope: { under: string; path?: string }): string {
  return Buffer.from(JSON.stringify([id, scope.under, scope.path ?? null])).toString('base64url');
}

export function decodeTrashCursor(cursor: string, scope: { under: string; path?: string }): string {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const ok = Array.isArray(value) && value.length === 3 && typeof value[0] === 'string' && value[1] === scope.under && value[2] === (scope.path ?? null);
  if (!ok) throw invalid('cursor is not one this API gave for this listing; pass the next_cursor of the page before, as it was');
  return (value as [string])[0];
}

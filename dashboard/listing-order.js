// @ts-check
/**
 * The order of the rows a page of a folder shows. The API lists in byte order of names (the spec's order,
 * which its cursors page through); the page re-sorts only the rows it holds: folders first, then by the
 * chosen column, names in natural order (`file2` before `file10`, case ignored). Pure functions,
 * unit-tested in test/unit/dashboard/listing-order.test.ts.
 */

/** @typedef {'name' | 'size' | 'modified'} SortKey */
/** @typedef {{ key: SortKey, descending: boolean }} SortOrder */
/**
 * A row to order: a folder has neither size nor date.
 * @typedef {{ kind: 'file' | 'folder', name: string, path: string, size?: number, created_at?: string }} Sortable
 */

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/**
 * Compares names as people read them: digits by their value, case and accents ignored; names that only
 * differ so fall back to byte order, so the order is total and the same on every load.
 * @param {string} a
 * @param {string} b
 */
export function naturalCompare(a, b) {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * The rows in `order`: folders before files whichever way, each by the column; ties, and folders when the
 * column is size or date (which they lack), by name A to Z.
 * @template {Sortable} T
 * @param {readonly T[]} rows
 * @param {SortOrder} order
 * @returns {T[]}
 */
export function sortRows(rows, order) {
  const sign = order.descending ? -1 : 1;
  const byColumn = (/** @type {T} */ a, /** @type {T} */ b) => {
    if (a.kind === 'file' && b.kind === 'file') {
      if (order.key === 'size') return (a.size ?? 0) - (b.size ?? 0);
      if (order.key === 'modified') return Date.parse(a.created_at ?? '') - Date.parse(b.created_at ?? '');
    }
    return 0;
  };
  return [...rows].sort((a, b) => {
    if (a.kind !== b.kind) return a.kind === 'folder' ? -1 : 1;
    const column = byColumn(a, b);
    if (column !== 0) return sign * column;
    return (order.key === 'name' ? sign : 1) * naturalCompare(a.name, b.name);
  });
}

/**
 * The order after a click on `key`'s header: the other way round if it is the current column, else that
 * column in its usual first direction (names A to Z; sizes and dates largest and newest first).
 * @param {SortOrder} current
 * @param {SortKey} key
 * @returns {SortOrder}
 */
export function nextOrder(current, key) {
  if (current.key === key) return { key, descending: !current.descending };
  return { key, descending: key !== 'name' };
}

/** One difference between two versions of the OpenAPI document, at a JSON Pointer. */
export interface DocumentChange {
  kind: 'added' | 'removed' | 'changed';
  pointer: string;
}

/**
 * What `after` changes from `before`, JSON value by JSON value: a key only `after` has is added; one only
 * `before` has is removed; a value of another type or content (an array of another length or order, a string
 * reworded) is changed. Key order is no change: JSON gives it no meaning.
 */
export function documentChanges(before: unknown, after: unknown, pointer = ''): DocumentChange[] {
  if (isObject(before) && isObject(after)) {
    const changes: DocumentChange[] = [];
    for (const key of Object.keys(before)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!(key in after)) changes.push({ kind: 'removed', pointer: at });
      else changes.push(...documentChanges(before[key], after[key], at));
    }
    for (const key of Object.keys(after)) if (!(key in before)) changes.push({ kind: 'added', pointer: `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}` });
    return changes;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) return before.flatMap((value, i) => documentChanges(value, after[i], `${pointer}/${i}`));
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ kind: 'changed', pointer: pointer || '/' }];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One difference between two versions of the OpenAPI document, at a JSON Pointer. */
export interface DocumentChange {
  kind: 'added' | 'removed' | 'changed';
  pointer: string;
}

/**
 * What `after` changes from `before`, JSON value by JSON value: a key only `after` has is added; one only
 * `before` has is removed; a value of another type or content (an array of another length or order, a string
 * reworded) is changed, but for an `enum` that keeps its values in order and gains more: each new value is
 * added (the client types a code as its known ones or any string); a discriminated `oneOf` likewise. Key order is no change: JSON gives it no meaning. An operation's `parameters` are a
 * set keyed by `in` and `name` (OpenAPI 3.1 §4.8.10.1, whose order means nothing): one only `after` has is
 * added if a client may leave it out, and a change if it is `required` (a client that does not send it fails).
 */
export function documentChanges(before: unknown, after: unknown, pointer = ''): DocumentChange[] {
  if (pointer.endsWith('/parameters') && isParameterList(before) && isParameterList(after)) {
    return documentChanges(byLocation(before), byLocation(after), pointer).map((change) =>
      change.kind === 'added' && isRequiredAt(after, change.pointer.slice(pointer.length + 1)) ? { kind: 'changed', pointer: change.pointer } : change,
    );
  }
  if (isObject(before) && isObject(after)) {
    const changes: DocumentChange[] = [];
    for (const key of Object.keys(before)) {
      const at = `${pointer}/${segment(key)}`;
      if (!(key in after)) changes.push({ kind: 'removed', pointer: at });
      else if (key === 'oneOf' && isDiscriminatedAppend(before, after)) changes.push(...(after.oneOf as unknown[]).slice((before.oneOf as unknown[]).length).map((_, i) => ({ kind: 'added' as const, pointer: `${at}/${(before.oneOf as unknown[]).length + i}` })));
      else changes.push(...documentChanges(before[key], after[key], at));
    }
    for (const key of Object.keys(after)) if (!(key in before)) changes.push({ kind: 'added', pointer: `${pointer}/${segment(key)}` });
    return changes;
  }
  // An enum that keeps every value, in order, and gains some (an error code the API may now send) gains detail.
  if (pointer.endsWith('/enum') && Array.isArray(before) && Array.isArray(after) && after.length > before.length && isKeptInOrder(before, after)) {
    return after.filter((value) => !before.some((kept) => JSON.stringify(kept) === JSON.stringify(value))).map((value) => ({ kind: 'added' as const, pointer: `${pointer}/${segment(String(value))}` }));
  }
  // The tags likewise: a tag appended (a new family of routes) names operations; it changes none.
  if (pointer === '/tags' && Array.isArray(before) && Array.isArray(after) && after.length > before.length && isKeptInOrder(before, after.slice(0, before.length))) {
    return after.slice(before.length).map((tag) => ({ kind: 'added' as const, pointer: `${pointer}/${segment(String((tag as { name?: unknown }).name))}` }));
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) return before.flatMap((value, i) => documentChanges(value, after[i], `${pointer}/${i}`));
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ kind: 'changed', pointer: pointer || '/' }];
}

/**
 * Whether `after` keeps `before`'s discriminated `oneOf` in order and appends members (a job type the API may
 * now answer with): each is an addition, as an enum's new value is, since a client switching on the
 * discriminator meets the new value only from a request of the new kind. The discriminator's mapping gains
 * keys only (checked as any object is).
 */
function isDiscriminatedAppend(before: Record<string, unknown>, after: Record<string, unknown>): boolean {
  const [was, is] = [before.oneOf, after.oneOf];
  return isObject(before.discriminator) && isObject(after.discriminator) && Array.isArray(was) && Array.isArray(is) && is.length > was.length && JSON.stringify(is.slice(0, was.length)) === JSON.stringify(was);
}

/** Whether every value of `before` is in `after`, in the same order. */
function isKeptInOrder(before: unknown[], after: unknown[]): boolean {
  let at = 0;
  for (const value of after) if (at < before.length && JSON.stringify(value) === JSON.stringify(before[at])) at++;
  return at === before.length;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Parameter = { in: string; name: string; required?: unknown };

function isParameterList(value: unknown): value is Parameter[] {
  return Array.isArray(value) && value.every((item) => isObject(item) && typeof item.in === 'string' && typeof item.name === 'string');
}

/** The parameters by `<in>:<name>`, the pointer segment a change names. */
function byLocation(parameters: Parameter[]): Record<string, unknown> {
  return Object.fromEntries(parameters.map((parameter) => [`${parameter.in}:${parameter.name}`, parameter]));
}

/** Whether the parameter at `at` (`<in>:<name>`, as a pointer segment) of `parameters` is one a request must carry. */
function isRequiredAt(parameters: Parameter[], at: string): boolean {
  return parameters.some((parameter) => segment(`${parameter.in}:${parameter.name}`) === at && parameter.required === true);
}

/** `key` as a JSON Pointer segment. */
function segment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

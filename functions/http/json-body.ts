import { badRequest } from '../core/errors';

/**
 * The body parsed as a JSON object with no fields but `allowed`; `example` shows the shape in errors. `T` is
 * the body's wire type (functions/openapi/schemas.ts), so `allowed` names only its fields; their values are
 * still unchecked, for the handler to check with its own messages.
 */
export function jsonObject<T extends object>(body: Buffer, allowed: readonly (keyof T & string)[], example: string): { [K in keyof T]?: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest(`body must be JSON like ${example}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`body must be a JSON object like ${example}`);
  const names: readonly string[] = allowed;
  const unknown = Object.keys(value).filter((key) => !names.includes(key));
  if (unknown.length > 0) throw badRequest(`body has unknown ${unknown.length === 1 ? 'field' : 'fields'} ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
  return value as { [K in keyof T]?: unknown };
}

/** `object[field]` if it is a string, undefined if absent or null; any other type is a bad request. */
export function optionalString(object: Record<string, unknown>, field: string, param = field): string | undefined {
  const value = object[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${param} must be a string`);
  return value;
}

import { ERROR_STATUS, type ErrorCode } from '../core/errors';

/** A JSON Schema (2020-12, as OpenAPI 3.1 has it), loosely typed: the validator in the tests checks its shape. */
export type Schema = { [keyword: string]: unknown };

/** A `$ref` to the component schema `name`. */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/**
 * An object of Drive's own: every property listed is required unless named in `optional`, and nothing else
 * may appear (so a field the code adds and the document lacks is caught).
 */
export function object(properties: Record<string, Schema>, optional: readonly string[] = [], description?: string): Schema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    additionalProperties: false,
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    properties,
  };
}

export const string = (description?: string, extra: Schema = {}): Schema => ({ type: 'string', ...(description ? { description } : {}), ...extra });
export const integer = (description?: string, extra: Schema = {}): Schema => ({ type: 'integer', ...(description ? { description } : {}), ...extra });
export const timestamp = (description: string): Schema => string(description, { format: 'date-time' });
export const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: 'null' }] });

/** The spec's success envelope, `{"data": …}`. */
export const envelope = (data: Schema): Schema => object({ data });

/** The status each error code is sent with, and the code of each status: both from `ERROR_STATUS`. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The error code an answer of `status` carries: its own in `ERROR_STATUS`; a gateway's 502 and 504 say `internal_error`. */
export function codeOfStatus(status: number): ErrorCode {
  const code = ERROR_CODES.find((candidate) => ERROR_STATUS[candidate] === status);
  if (code) return code;
  if (status === 502 || status === 504) return 'internal_error';
  throw new Error(`no error code is sent with status ${status}`);
}

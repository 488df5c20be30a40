import type { Static, TArray, TBoolean, TInteger, TObject, TOptional, TProperties, TSchema, TString, TUnsafe } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../core/errors';

export type { Static, TObject, TSchema };

/** A JSON Schema (2020-12, as OpenAPI 3.1 has it) where its static type does not matter: a parameter's, a header's. */
export type Schema = { [keyword: string]: unknown };

// The builders write plain JSON Schema objects shaped as TypeBox's own (its `Kind` and `Optional` marks are
// registered symbols, `Symbol.for`), so TypeBox gives each its static type and none of its runtime is
// loaded: every handler imports these schemas to validate its request, and TypeBox's modules would add
// about 20 ms to each cold start. Where TypeBox would write another form (`anyOf` of `const`s for an enum,
// `anyOf` for a nullable, a `type` beside a `const`), the schema is as the document has always written it.
const KIND = Symbol.for('TypeBox.Kind');
const OPTIONAL = Symbol.for('TypeBox.Optional');
/** On a `$ref` built by `ref`, the schema it points at: read by the validator, never written to the document. */
export const REFERS_TO = Symbol('refers to');

/** `keywords` with their description first, if any: how every builder takes one. */
const described = (description: string | undefined, keywords: Schema) => ({ ...(description ? { description } : {}), ...keywords });

function unsafe<T>(keywords: Schema): TUnsafe<T> {
  return { ...keywords, [KIND]: 'Unsafe' } as unknown as TUnsafe<T>;
}

/** Component schemas by name, in the order they were declared: `components.schemas` of the document. */
const COMPONENTS = new Map<TSchema, string>();

/** Declares `schema` as the component `name`; `ref(schema)` then points at it. */
export function component<T extends TSchema>(name: string, schema: T): T {
  COMPONENTS.set(schema, name);
  return schema;
}

/** Every component schema, by name, in the order declared. */
export function components(): Record<string, TSchema> {
  return Object.fromEntries([...COMPONENTS].map(([schema, name]) => [name, schema]));
}

/** A `$ref` to the component `schema`, typed as it; `declared` names a component declared later (by a module that imports this one's). */
export function ref<T extends TSchema>(schema: T, declared?: string) {
  const name = declared ?? COMPONENTS.get(schema);
  if (name === undefined) throw new Error('ref() of a schema that is not a component');
  return { ...unsafe<Static<T>>({ $ref: `#/components/schemas/${name}` }), [REFERS_TO]: schema };
}

/**
 * An object of Drive's own: every property is required unless wrapped in `optional`, and nothing else may
 * appear (so a field the code adds and the document lacks is caught).
 */
export function object<P extends TProperties>(properties: P, description?: string): TObject<P> {
  return { ...openObject(properties), ...described(description, {}), additionalProperties: false };
}

/** An object that lets fields it does not list through. */
export function openObject<P extends TProperties>(properties: P): TObject<P> {
  const required = Object.keys(properties).filter((name) => !(OPTIONAL in properties[name]));
  return { [KIND]: 'Object', type: 'object', ...(required.length > 0 ? { required } : {}), properties } as unknown as TObject<P>;
}

/**
 * An object of any names, each holding a value of `values` (`additionalProperties`): a map, typed
 * `Record<string, …>`. Its empty `properties` is the open object's it replaced: the document only gains.
 */
export const map = <T extends TSchema>(values: T, description?: string) =>
  unsafe<Record<string, Static<T>>>({ type: 'object', ...described(description, {}), additionalProperties: values, properties: {} });

/** `schema` as a property its object may lack. */
export const optional = <T extends TSchema>(schema: T) => ({ ...schema, [OPTIONAL]: 'Optional' }) as TOptional<T>;

export const string = (description?: string, extra: Schema = {}) => ({ ...described(description, extra), [KIND]: 'String', type: 'string' }) as unknown as TString;
export const integer = (description?: string, extra: Schema = {}) => ({ ...described(description, extra), [KIND]: 'Integer', type: 'integer' }) as unknown as TInteger;
export const boolean = (description?: string) => ({ ...described(description, {}), [KIND]: 'Boolean', type: 'boolean' }) as unknown as TBoolean;
export const timestamp = (description: string) => string(description, { format: 'date-time' });
export const array = <T extends TSchema>(items: T, extra: Schema = {}) => ({ ...extra, [KIND]: 'Array', type: 'array', items }) as unknown as TArray<T>;

/** Exactly `value` (`{"const": value}`). */
export const constant = <const V extends string | boolean>(value: V) => unsafe<V>({ const: value });

/** One of the strings `values` (`{"type": "string", "enum": […]}`). */
export const enumOf = <const V extends string>(values: readonly V[], description?: string) => unsafe<V>({ type: 'string', enum: [...values], ...described(description, {}) });

/** `schema` or null (`oneOf`, as the document has always written it). */
export const nullable = <T extends TSchema>(schema: T) => unsafe<Static<T> | null>({ oneOf: [schema, { type: 'null' }] });

/**
 * An optional field that may also be sent as null, taken as absent (as the handlers always have). Marked
 * `x-null-means-absent` rather than made a `oneOf` with null: the 1.0.0 document said `type` here, and the
 * document only gains.
 */
export const NULL_MEANS_ABSENT = 'x-null-means-absent';
export const nullMeansAbsent = <T extends TSchema>(schema: T) => ({ ...schema, [NULL_MEANS_ABSENT]: true }) as unknown as TUnsafe<Static<T> | null>;

/** One of `schemas` (`oneOf`), with `extra` keywords such as a discriminator. */
export const oneOf = <T extends TSchema[]>(schemas: [...T], extra: Schema = {}) => unsafe<Static<T[number]>>({ oneOf: schemas, ...extra });

/** The spec's success envelope, `{"data": …}`. */
export const envelope = <T extends TSchema>(data: T) => object({ data });

/** The status each error code is sent with, and the code of each status: both from `ERROR_STATUS`. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The error code an answer of `status` carries: its own in `ERROR_STATUS`; a gateway's 502 and 504, and an issuer's 503, say `internal_error`. */
export function codeOfStatus(status: number): ErrorCode {
  const code = ERROR_CODES.find((candidate) => ERROR_STATUS[candidate] === status);
  if (code) return code;
  if (status === 502 || status === 503 || status === 504) return 'internal_error';
  throw new Error(`no error code is sent with status ${status}`);
}

// The order of a schema's keywords in the document: the order it was always written in, whatever order
// the builders above put them in (JSON Schema gives order no meaning; a reader of the diff of
// docs/openapi.json does). Keywords in neither list keep their place between the two.
const FIRST = ['$ref', 'type', 'const', 'enum', 'oneOf', 'anyOf', 'allOf', 'discriminator', 'description'];
const LAST = ['additionalProperties', 'required', 'properties', 'items'];

function rank(keyword: string): number {
  if (FIRST.includes(keyword)) return FIRST.indexOf(keyword) - FIRST.length;
  if (LAST.includes(keyword)) return 1 + LAST.indexOf(keyword);
  return 0;
}

/** `schema` as plain JSON (TypeBox's symbols dropped), its keywords in the document's order, at every depth. */
export function plainSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plainSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  // A stable sort: keywords of one rank keep the order they were given in.
  const keywords = Object.entries(schema).sort(([a], [b]) => rank(a) - rank(b));
  return Object.fromEntries(keywords.map(([keyword, value]) => [keyword, keyword === 'properties' ? propertiesOf(value) : plainSchema(value)]));
}

/** The schemas of `properties`, in the order given: their names are the API's fields, not keywords to sort. */
function propertiesOf(properties: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(properties as Record<string, unknown>).map(([name, schema]) => [name, plainSchema(schema)]));
}

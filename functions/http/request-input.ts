import type { APIGatewayProxyEvent } from 'aws-lambda';
import { DriveError, badRequest, invalid } from '../core/errors';
import type { Schema, Static, TObject, TSchema } from '../openapi/schema-kit';
import { type Problem, problemOf } from '../openapi/validate';
import { queryParam, queryValues } from './event';

export type { Problem };

// A request's JSON body, query and multipart form's JSON part, checked against the schemas the OpenAPI
// document publishes for its route (functions/openapi/schemas.ts) and typed by them. What a schema cannot
// say (a path's form, a key's folder, a size against the drive's limits) the handler checks on the typed values.

/**
 * A route's own words for a problem, by the problem's `field` (`parts[].etag`; '' for the body itself) and
 * kind: a message, sent with the code the kind has (a malformed request, or an invalid value), or the error
 * itself where the route has always used another code.
 */
export type Messages = Record<string, Partial<Record<Problem['kind'], (problem: Problem) => string | DriveError>>>;

/** The body as a JSON value of `schema`; `example` shows the shape in the errors of a body that is not one. */
export function jsonInput<T extends TSchema>(body: Buffer, schema: T, example: string, messages: Messages = {}): Static<T> {
  return parsedInput(body.toString('utf8'), schema, '', `body must be JSON like ${example}`, messages, (found) => bodyMessage(found, example));
}

/**
 * A multipart form's text part `name` as a JSON value of `schema` (the part's `contentSchema`); `notJson` is
 * the message for text that is not JSON. Problems are named from the part (`metadata[0].path`).
 */
export function formFieldInput<T extends TSchema>(name: string, text: string, schema: T, notJson: string, messages: Messages = {}): Static<T> {
  return parsedInput(text, schema, name, notJson, messages, shapeMessage);
}

/** `text` parsed as JSON and checked against `schema` as the value at `at`: a malformed one is a 400, one out of bounds a 422. */
function parsedInput<T extends TSchema>(text: string, schema: T, at: string, notJson: string, messages: Messages, fallback: (problem: Problem) => string): Static<T> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(notJson);
  }
  const problem = problemOf(schema, value, at);
  if (problem) throw errorOf(problem, messages, fallback, (kind) => (kind === 'value' ? invalid : badRequest));
  return value as Static<T>;
}

/**
 * The query parameters `schema` lists, each given at most once unless an array, a whole number read from
 * its digits; parameters it does not list are ignored. Every problem is an invalid value (422).
 */
export function queryInput<T extends TObject>(event: APIGatewayProxyEvent, schema: T, messages: Messages = {}): Static<T> {
  const input: Record<string, unknown> = {};
  const sent: Record<string, string> = {};
  for (const [name, property] of Object.entries(schema.properties as Record<string, Schema>)) {
    const value = property.type === 'array' ? queryValues(event, name) : queryParam(event, name);
    if (value === undefined) continue;
    input[name] = typeof value === 'string' && property.type === 'integer' ? wholeNumber(value, property) : value;
    if (typeof value === 'string') sent[name] = value;
  }
  const problem = problemOf(schema, input);
  // A number's message quotes what was sent, not the number read from it.
  if (problem) throw errorOf({ ...problem, value: sent[problem.at] ?? problem.value }, messages, queryMessage, () => invalid);
  return input as Static<T>;
}

/** `text` as a number if it is digits, no more of them than the schema's maximum has; otherwise as sent, which its type then refuses. */
function wholeNumber(text: string, schema: Schema): number | string {
  const digits = String(typeof schema.maximum === 'number' ? schema.maximum : Number.MAX_SAFE_INTEGER).length;
  return new RegExp(`^[0-9]{1,${digits}}$`).test(text) ? Number(text) : text;
}

function errorOf(problem: Problem, messages: Messages, fallback: (problem: Problem) => string, code: (kind: Problem['kind']) => (message: string) => DriveError): DriveError {
  const own = messages[problem.field]?.[problem.kind];
  const message = own ? own(problem) : fallback(problem);
  return message instanceof DriveError ? message : code(problem.kind)(message);
}

function bodyMessage(problem: Problem, example: string): string {
  if (problem.kind === 'required') return `${problem.at} is required in the body`;
  if (problem.kind === 'type' && problem.at === '') return `body must be a JSON object like ${example}`;
  return shapeMessage(problem);
}

/** A problem's message where the route has none of its own (a body's root is named `body`). */
function shapeMessage(problem: Problem): string {
  const { kind, schema } = problem;
  const at = problem.at || 'body';
  if (kind === 'required') return `${at} is required`;
  if (kind === 'type') return `${at} must be ${typeWord(schema.type)}`;
  if (kind === 'unknown') {
    const unknown = problem.unknown ?? [];
    const allowed = Object.keys(schema.properties ?? {});
    return `${at} has unknown ${unknown.length === 1 ? 'field' : 'fields'} ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`;
  }
  return valueMessage(problem);
}

function queryMessage(problem: Problem): string {
  return problem.kind === 'required' ? `${problem.at} is required` : valueMessage(problem);
}

/** What a value outside its schema's bounds must be, and what was sent. */
function valueMessage({ at, keyword, schema, value }: Problem): string {
  if (schema.type === 'integer') {
    const min = typeof schema.minimum === 'number' ? schema.minimum : Number.MIN_SAFE_INTEGER;
    const max = typeof schema.maximum === 'number' ? schema.maximum : Number.MAX_SAFE_INTEGER;
    return `${at} must be a whole number from ${min} to ${max.toLocaleString('en')} (got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 20) : value)})`;
  }
  if (keyword === 'enum') return `${at} must be ${(schema.enum as unknown[]).map((option) => JSON.stringify(option)).join(' or ')} (got ${JSON.stringify(value)})`;
  return `${at} must meet ${keyword} ${JSON.stringify(schema[keyword])} (got ${JSON.stringify(value)?.slice(0, 40)})`;
}

function typeWord(type: unknown): string {
  const words: Record<string, string> = { string: 'a string', integer: 'a number', number: 'a number', boolean: 'true or false', array: 'an array', object: 'an object', null: 'null' };
  return words[String(type)] ?? String(type);
}

import { NULL_MEANS_ABSENT, REFERS_TO, type Schema } from './schema-kit';

/**
 * The first rule a value breaks of its JSON Schema, walked in a fixed order: an object's type, its unknown
 * fields, then each property in the schema's order; an array's type, its length, then each item. `kind`
 * sorts the rules as the API's errors do: a missing, mistyped or unknown field is a malformed request, a
 * well-formed value outside what is allowed (`value`) an invalid one.
 */
export interface Problem {
  kind: 'required' | 'type' | 'unknown' | 'value';
  /** The keyword broken: `required`, `type` (a fraction where a whole number goes is `value`), `additionalProperties`, `enum`, `minimum`… */
  keyword: string;
  /** Where, as a client names it: `parts[2].etag`; '' for the value itself. */
  at: string;
  /** `at` with every index as `[]` (`parts[].etag`): what a route's own messages are keyed by. */
  field: string;
  /** The value at `at` (undefined or null for a missing field). */
  value: unknown;
  /** The schema at `at`. */
  schema: Schema;
  /** The fields an object has that its schema does not list, for `unknown`. */
  unknown?: string[];
}

// What the walk checks; the other keywords a request schema may hold are annotations. A keyword in neither
// list is a schema this walk would wrongly pass, so it is refused at the first value checked against it.
const CHECKED = ['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', '$ref', NULL_MEANS_ABSENT, 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems'];
const ANNOTATIONS = ['description', 'examples', 'format', 'contentMediaType', 'title', 'default'];

/** The first rule `value` breaks of `schema`, or undefined if it breaks none. */
export function problemOf(schema: Schema, value: unknown, at = '', field = at): Problem | undefined {
  const target = (schema as { [REFERS_TO]?: Schema })[REFERS_TO];
  if (target) return problemOf(target, value, at, field);
  if (schema.$ref !== undefined) throw new Error(`the request validator cannot follow ${String(schema.$ref)}: a $ref not made by ref()`);
  for (const keyword of Object.keys(schema)) {
    if (!CHECKED.includes(keyword) && !ANNOTATIONS.includes(keyword)) throw new Error(`the request validator does not check ${keyword} (at ${field || 'the root'})`);
  }
  const problem = (kind: Problem['kind'], keyword: string, extra: Partial<Problem> = {}): Problem => ({ kind, keyword, at, field, value, schema, ...extra });
  if (schema.type !== undefined && !hasType(value, schema.type)) {
    return problem(schema.type === 'integer' && typeof value === 'number' ? 'value' : 'type', 'type');
  }
  if ('const' in schema && value !== schema.const) return problem('value', 'const');
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return problem('value', 'enum');
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return problem('value', 'minimum');
    if (typeof schema.maximum === 'number' && value > schema.maximum) return problem('value', 'maximum');
  }
  if (typeof value === 'string') {
    // JSON Schema counts characters (code points), not UTF-16 units as `length` does.
    const length = typeof schema.minLength === 'number' || typeof schema.maxLength === 'number' ? [...value].length : 0;
    if (typeof schema.minLength === 'number' && length < schema.minLength) return problem('value', 'minLength');
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) return problem('value', 'maxLength');
    if (typeof schema.pattern === 'string' && !patternOf(schema.pattern).test(value)) return problem('value', 'pattern');
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return problem('value', 'minItems');
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return problem('value', 'maxItems');
    const items = schema.items as Schema | undefined;
    for (let i = 0; items && i < value.length; i++) {
      const found = problemOf(items, value[i], `${at}[${i}]`, `${field}[]`);
      if (found) return found;
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return objectProblem(schema, value as Record<string, unknown>, at, field, problem);
  return undefined;
}

function objectProblem(schema: Schema, value: Record<string, unknown>, at: string, field: string, problem: (kind: Problem['kind'], keyword: string, extra?: Partial<Problem>) => Problem): Problem | undefined {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  // A map's values (`additionalProperties` a schema) are left to the route: the one map, a trust rule's claims,
  // has answered a value that is not a string with a 422 of its own since it shipped (functions/http/trust-request.ts),
  // and after the shape checks of every later field; checked here, it would come first, as a 400.
  if (schema.additionalProperties === false) {
    const unknown = Object.keys(value).filter((name) => !Object.hasOwn(properties, name));
    if (unknown.length > 0) return problem('unknown', 'additionalProperties', { unknown });
  }
  const required = (schema.required ?? []) as string[];
  for (const [name, property] of Object.entries(properties)) {
    const sent = Object.hasOwn(value, name) ? value[name] : undefined;
    const child = sent === null && property[NULL_MEANS_ABSENT] === true ? undefined : sent;
    const where = at === '' ? name : `${at}.${name}`;
    const pattern = field === '' ? name : `${field}.${name}`;
    // A required field sent as null is missing, not mistyped.
    if (required.includes(name) && (child === undefined || child === null)) {
      return { kind: 'required', keyword: 'required', at: where, field: pattern, value: child, schema: property };
    }
    if (child === undefined) continue;
    const found = problemOf(property, child, where, pattern);
    if (found) return found;
  }
  return undefined;
}

function hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'null':
      return value === null;
    case 'string':
    case 'boolean':
      return typeof value === type;
    default:
      throw new Error(`the request validator does not check type ${JSON.stringify(type)}`);
  }
}

const PATTERNS = new Map<string, RegExp>();

/** `pattern` compiled as JSON Schema has it: an ECMA-262 regular expression in Unicode mode, not anchored. */
function patternOf(pattern: string): RegExp {
  let regex = PATTERNS.get(pattern);
  if (!regex) PATTERNS.set(pattern, (regex = new RegExp(pattern, 'u')));
  return regex;
}

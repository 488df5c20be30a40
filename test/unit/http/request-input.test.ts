import type { APIGatewayProxyEvent } from 'aws-lambda';
import { badRequest } from '../../../functions/core/errors';
import { formFieldInput, jsonInput, queryInput } from '../../../functions/http/request-input';
import { array, boolean, enumOf, integer, nullMeansAbsent, object, optional, string } from '../../../functions/openapi/schema-kit';

const EXAMPLE = '{"path": "/a", "size": 1}';
const Body = object({
  path: string(),
  size: optional(integer(undefined, { minimum: 1, maximum: 9 })),
  overwrite: optional(boolean()),
  tags: optional(array(string(), { maxItems: 2 })),
  note: optional(nullMeansAbsent(string(undefined, { maxLength: 3 }))),
  kind: optional(enumOf(['a', 'b'])),
});
const body = (text: string) => Buffer.from(text);

/** The error `call` throws, as code and message. */
function failure(call: () => unknown): { code: string; message: string } {
  try {
    call();
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return { code, message };
  }
  throw new Error('no error was thrown');
}

describe('Function: jsonInput', () => {
  const input = (text: string) => failure(() => jsonInput(body(text), Body, EXAMPLE));

  it('returns the body, typed by its schema, when it breaks no rule', () => {
    expect(jsonInput(body('{"path": "/a", "note": null, "tags": ["x"]}'), Body, EXAMPLE)).toEqual({ path: '/a', note: null, tags: ['x'] });
  });

  it('words a body that is not JSON, or not an object, with the example', () => {
    expect(input('{"path"')).toEqual({ code: 'bad_request', message: `body must be JSON like ${EXAMPLE}` });
    expect(input('')).toEqual({ code: 'bad_request', message: `body must be JSON like ${EXAMPLE}` });
    expect(input('[1]')).toEqual({ code: 'bad_request', message: `body must be a JSON object like ${EXAMPLE}` });
  });

  it('names unknown fields, one or several, and the allowed ones', () => {
    expect(input('{"path": "/a", "x": 1}')).toEqual({ code: 'bad_request', message: 'body has unknown field x; allowed: path, size, overwrite, tags, note, kind' });
    expect(input('{"x": 1, "y": 2}')).toEqual({ code: 'bad_request', message: 'body has unknown fields x, y; allowed: path, size, overwrite, tags, note, kind' });
  });

  it('says a missing or null field is required, and a mistyped one what it must be', () => {
    expect(input('{}')).toEqual({ code: 'bad_request', message: 'path is required in the body' });
    expect(input('{"path": null}')).toEqual({ code: 'bad_request', message: 'path is required in the body' });
    expect(input('{"path": 1}')).toEqual({ code: 'bad_request', message: 'path must be a string' });
    expect(input('{"path": "/a", "size": "1"}')).toEqual({ code: 'bad_request', message: 'size must be a number' });
    expect(input('{"path": "/a", "overwrite": null}')).toEqual({ code: 'bad_request', message: 'overwrite must be true or false' });
    expect(input('{"path": "/a", "tags": "x"}')).toEqual({ code: 'bad_request', message: 'tags must be an array' });
    expect(input('{"path": "/a", "tags": [1]}')).toEqual({ code: 'bad_request', message: 'tags[0] must be a string' });
  });

  it('makes a value outside the bounds a validation error that says what was sent', () => {
    expect(input('{"path": "/a", "size": 10}')).toEqual({ code: 'validation_error', message: 'size must be a whole number from 1 to 9 (got 10)' });
    expect(input('{"path": "/a", "size": 1.5}')).toEqual({ code: 'validation_error', message: 'size must be a whole number from 1 to 9 (got 1.5)' });
    expect(input('{"path": "/a", "kind": "c"}')).toEqual({ code: 'validation_error', message: 'kind must be "a" or "b" (got "c")' });
    expect(input('{"path": "/a", "note": "long"}')).toEqual({ code: 'validation_error', message: 'note must meet maxLength 3 (got "long")' });
    expect(input('{"path": "/a", "tags": ["x", "y", "z"]}')).toEqual({ code: 'validation_error', message: 'tags must meet maxItems 2 (got ["x","y","z"])' });
  });

  it('takes a route\'s own words by field and kind: a message with the kind\'s code, or an error of its own', () => {
    const messages = {
      path: { required: () => 'give a path' },
      'tags[]': { type: ({ at }: { at: string }) => `${at} is no tag` },
      size: { value: () => badRequest('too big') },
    };
    const own = (text: string) => failure(() => jsonInput(body(text), Body, EXAMPLE, messages));
    expect(own('{}')).toEqual({ code: 'bad_request', message: 'give a path' });
    expect(own('{"path": "/a", "tags": ["x", 2]}')).toEqual({ code: 'bad_request', message: 'tags[1] is no tag' });
    expect(own('{"path": "/a", "size": 0}')).toEqual({ code: 'bad_request', message: 'too big' });
    // Words for one kind leave the others' as they were.
    expect(own('{"path": 1}')).toEqual({ code: 'bad_request', message: 'path must be a string' });
  });
});

describe('Function: formFieldInput', () => {
  const Entries = array(object({ path: optional(nullMeansAbsent(string())), size: optional(integer(undefined, { minimum: 1, maximum: 9 })) }), { maxItems: 2 });
  const NOT_JSON = 'meta is not JSON';
  const input = (text: string, messages = {}) => failure(() => formFieldInput('meta', text, Entries, NOT_JSON, messages));

  it('returns the part\'s JSON, typed by its schema, when it breaks no rule', () => {
    expect(formFieldInput('meta', '[{"path": "/a"}, {"path": null, "size": 2}]', Entries, NOT_JSON)).toEqual([{ path: '/a' }, { path: null, size: 2 }]);
  });

  it('names each problem from the part, and sorts it into a code as a body\'s', () => {
    expect(input('[{"path": ')).toEqual({ code: 'bad_request', message: NOT_JSON });
    expect(input('{}')).toEqual({ code: 'bad_request', message: 'meta must be an array' });
    expect(input('[{}, 5]')).toEqual({ code: 'bad_request', message: 'meta[1] must be an object' });
    expect(input('[{"path": 5}]')).toEqual({ code: 'bad_request', message: 'meta[0].path must be a string' });
    expect(input('[{"x": 5}]')).toEqual({ code: 'bad_request', message: 'meta[0] has unknown field x; allowed: path, size' });
    expect(input('[{"size": 0}]')).toEqual({ code: 'validation_error', message: 'meta[0].size must be a whole number from 1 to 9 (got 0)' });
    expect(input('[{}, {}, {}]')).toEqual({ code: 'validation_error', message: 'meta must meet maxItems 2 (got [{},{},{}])' });
  });

  it('takes a route\'s own words by field, keyed from the part\'s name', () => {
    const messages = { 'meta[]': { unknown: ({ at, unknown = [] }: { at: string; unknown?: string[] }) => `${at}.${unknown[0]} is unknown` } };
    expect(input('[{"path": "/a"}, {"y": 1, "x": 2}]', messages)).toEqual({ code: 'bad_request', message: 'meta[1].y is unknown' });
  });
});

describe('Function: queryInput', () => {
  const Query = object({
    path: string('The folder.', { minLength: 1 }),
    recursive: optional(enumOf(['true', 'false'])),
    limit: optional(integer(undefined, { minimum: 1, maximum: 1000 })),
    from: optional(integer(undefined, { minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    each: optional(array(string(), { maxItems: 2 })),
  });
  const event = (query: Record<string, string[]>) =>
    ({
      queryStringParameters: Object.fromEntries(Object.entries(query).map(([name, values]) => [name, values.at(-1)])),
      multiValueQueryStringParameters: query,
    }) as unknown as APIGatewayProxyEvent;
  const input = (query: Record<string, string[]>) => failure(() => queryInput(event(query), Query));

  it('reads the parameters it lists, whole numbers as numbers and repeatable ones as lists, and ignores the rest', () => {
    expect(queryInput(event({ path: ['/a'], limit: ['0050'], each: ['x', 'y'], other: ['z'] }), Query)).toEqual({ path: '/a', limit: 50, each: ['x', 'y'] });
  });

  it('makes every problem a validation error', () => {
    expect(input({})).toEqual({ code: 'validation_error', message: 'path is required' });
    expect(input({ path: ['/a', '/b'] })).toEqual({ code: 'validation_error', message: 'path is given 2 times; give it once' });
    expect(input({ path: ['/a'], recursive: ['yes'] })).toEqual({ code: 'validation_error', message: 'recursive must be "true" or "false" (got "yes")' });
    expect(input({ path: ['/a'], each: ['x', 'y', 'z'] })).toEqual({ code: 'validation_error', message: 'each must meet maxItems 2 (got ["x","y","z"])' });
  });

  it('words a whole number that is not one, or out of bounds, alike, quoting what was sent', () => {
    const limit = (sent: string) => input({ path: ['/a'], limit: [sent] }).message;
    expect(limit('0')).toBe('limit must be a whole number from 1 to 1,000 (got "0")');
    expect(limit('1001')).toBe('limit must be a whole number from 1 to 1,000 (got "1001")');
    expect(limit('1e3')).toBe('limit must be a whole number from 1 to 1,000 (got "1e3")');
    expect(limit('-1')).toBe('limit must be a whole number from 1 to 1,000 (got "-1")');
    // No more digits than the bound has: a long run of zeros is no whole number of this query.
    expect(limit('00001')).toBe('limit must be a whole number from 1 to 1,000 (got "00001")');
    expect(input({ path: ['/a'], from: ['x'.repeat(30)] }).message).toBe(`from must be a whole number from 1 to 9,007,199,254,740,991 (got "${'x'.repeat(20)}")`);
  });
});

import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { MAX_FILES_PER_DELETE } from '../../../functions/core/delete-files';
import { MAX_PART_URLS_PAGE } from '../../../functions/core/large-upload';
import { MAX_LINK_SECONDS } from '../../../functions/core/links';
import { MAX_PARTS } from '../../../functions/core/multipart-rules';
import { MAX_LINK_PAGE } from '../../../functions/http/link-query';
import { NULL_MEANS_ABSENT, REFERS_TO, type Schema, array, components, integer, nullMeansAbsent, object, optional, plainSchema, ref, string } from '../../../functions/openapi/schema-kit';
import * as R from '../../../functions/openapi/request-schemas';
// Declares the document's components, which the request schemas refer to.
import * as S from '../../../functions/openapi/schemas';
import { problemOf } from '../../../functions/openapi/validate';

/** Every schema a handler validates a request against: the JSON bodies, the queries and the upload form's JSON part. */
const REQUESTS: Record<string, Schema> = { ...Object.fromEntries(Object.entries(R).filter(([name]) => /(Request|Query)$/.test(name))), UploadMetadata: R.UploadMetadata };

describe('Function: problemOf', () => {
  const Part = object({ number: integer(undefined, { minimum: 1, maximum: 10 }), etag: string(undefined, { minLength: 1, maxLength: 3 }) });
  const Body = object({
    name: string(undefined, { pattern: '^[a-z]+$' }),
    role: optional(nullMeansAbsent(ref(S.Role))),
    parts: optional(array(Part, { minItems: 1, maxItems: 2 })),
  });

  it('passes a value that breaks no rule, and a field sent as null where null means absent', () => {
    expect(problemOf(Body, { name: 'abc', role: 'admin', parts: [{ number: 1, etag: 'x' }] })).toBeUndefined();
    expect(problemOf(Body, { name: 'abc', role: null })).toBeUndefined();
  });

  it('reports a missing field, and a required one sent as null, as required', () => {
    expect(problemOf(Body, {})).toMatchObject({ kind: 'required', keyword: 'required', at: 'name', field: 'name' });
    expect(problemOf(Body, { name: null })).toMatchObject({ kind: 'required', at: 'name', value: null });
  });

  it('reports a value of the wrong JSON type, and null where null means nothing, as type', () => {
    expect(problemOf(Body, [])).toMatchObject({ kind: 'type', at: '', field: '' });
    expect(problemOf(Body, { name: 5 })).toMatchObject({ kind: 'type', keyword: 'type', at: 'name', value: 5 });
    expect(problemOf(Body, { name: 'a', parts: [{ number: null, etag: 'x' }] })).toMatchObject({ kind: 'required', at: 'parts[0].number' });
    expect(problemOf(Body, { name: 'a', parts: [{ number: '1', etag: 'x' }] })).toMatchObject({ kind: 'type', at: 'parts[0].number', field: 'parts[].number' });
  });

  it('reports every field an object does not list, before any of its fields', () => {
    expect(problemOf(Body, { name: 5, x: 1, y: 2 })).toMatchObject({ kind: 'unknown', keyword: 'additionalProperties', at: '', unknown: ['x', 'y'] });
    expect(problemOf(Body, { name: 'a', parts: [{ number: 1, etag: 'x', size: 1 }] })).toMatchObject({ kind: 'unknown', at: 'parts[0]', field: 'parts[]', unknown: ['size'] });
    // A client's "__proto__" is a field like any other.
    expect(problemOf(Body, JSON.parse('{"name": "a", "__proto__": 1}'))).toMatchObject({ kind: 'unknown', unknown: ['__proto__'] });
  });

  it('reports a well-formed value outside the bounds as value, naming the keyword', () => {
    const value = (body: unknown) => problemOf(Body, body);
    expect(value({ name: 'A' })).toMatchObject({ kind: 'value', keyword: 'pattern' });
    expect(value({ name: 'a', role: 'owner' })).toMatchObject({ kind: 'value', keyword: 'enum', at: 'role', value: 'owner' });
    expect(value({ name: 'a', parts: [] })).toMatchObject({ kind: 'value', keyword: 'minItems', at: 'parts' });
    expect(value({ name: 'a', parts: [{ number: 1, etag: 'x' }, { number: 2, etag: 'y' }, { number: 3, etag: 'z' }] })).toMatchObject({ keyword: 'maxItems' });
    expect(value({ name: 'a', parts: [{ number: 0, etag: 'x' }] })).toMatchObject({ keyword: 'minimum', at: 'parts[0].number' });
    expect(value({ name: 'a', parts: [{ number: 11, etag: 'x' }] })).toMatchObject({ keyword: 'maximum' });
    // A fraction where a whole number goes is a number out of bounds, not a mistyped field.
    expect(value({ name: 'a', parts: [{ number: 1.5, etag: 'x' }] })).toMatchObject({ kind: 'value', keyword: 'type' });
    expect(value({ name: 'a', parts: [{ number: 1, etag: '' }] })).toMatchObject({ keyword: 'minLength', at: 'parts[0].etag' });
    expect(value({ name: 'a', parts: [{ number: 1, etag: 'abcd' }] })).toMatchObject({ keyword: 'maxLength' });
  });

  it('counts a string\'s characters as JSON Schema does, in code points', () => {
    expect(problemOf(Body, { name: 'a', parts: [{ number: 1, etag: '😀😀😀' }] })).toBeUndefined();
  });

  it('checks an array\'s length before its items, and the items in order', () => {
    expect(problemOf(Body, { name: 'a', parts: [5, 6, 7] })).toMatchObject({ keyword: 'maxItems' });
    expect(problemOf(Body, { name: 'a', parts: [{ number: 1, etag: 'x' }, 6] })).toMatchObject({ kind: 'type', at: 'parts[1]' });
  });

  it('refuses a schema with a keyword it does not check, rather than pass what it cannot see', () => {
    expect(() => problemOf({ type: 'string', multipleOf: 2 }, 'x')).toThrow(/does not check multipleOf/);
    expect(() => problemOf({ $ref: '#/components/schemas/Role' }, 'x')).toThrow(/cannot follow/);
  });

  it('agrees with Ajv on which values each request schema takes', () => {
    const ajv = new Ajv2020({ strict: false });
    // The components too: a field of one (UploadTarget's) may be null where it means absent.
    ajv.addSchema({ $id: 'drive', components: { schemas: ajvSchema(plainSchema(components())) } });
    for (const [name, schema] of Object.entries(REQUESTS)) {
      const check = ajv.compile({ ...(ajvSchema(plainSchema(schema)) as object), $id: `request-${name}` });
      fc.assert(
        fc.property(valueOf(schema), (value) => {
          expect({ name, value, valid: problemOf(schema, value) === undefined }).toEqual({ name, value, valid: check(value) });
        }),
        { numRuns: 300, seed: 23 },
      );
    }
  });

  it('holds the same bounds as the handlers\' own constants', () => {
    expect(S.DeleteFilesRequest.properties.paths.maxItems).toBe(MAX_FILES_PER_DELETE);
    expect(R.DeleteFilesQuery.properties.path.maxItems).toBe(MAX_FILES_PER_DELETE);
    expect(S.CompleteUploadRequest.properties.parts.maxItems).toBe(MAX_PARTS);
    expect(S.CreateLinkRequest.properties.expires_in).toMatchObject({ maximum: MAX_LINK_SECONDS });
    expect(R.PartUrlsQuery.properties.limit.maximum).toBe(MAX_PART_URLS_PAGE);
    expect(R.LinksQuery.properties.limit.maximum).toBe(MAX_LINK_PAGE);
    expect(R.RevokeLinksQuery.properties.limit.maximum).toBe(MAX_LINK_PAGE);
  });
});

/** `schema` as Ajv reads it: its $refs to the document's components, and null allowed where it means absent. */
function ajvSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(ajvSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const entries = Object.entries(schema).map(([keyword, value]) => [keyword, keyword === '$ref' ? `drive${String(value)}` : ajvSchema(value)]);
  const plain = Object.fromEntries(entries.filter(([keyword]) => keyword !== NULL_MEANS_ABSENT)) as Schema;
  return (schema as Schema)[NULL_MEANS_ABSENT] ? { anyOf: [plain, { type: 'null' }] } : plain;
}

/** Values near `schema`: mostly its shape, with fields missing, extra, null or of any JSON type, and values at and past its bounds. */
function valueOf(schema: Schema): fc.Arbitrary<unknown> {
  const target = (schema as { [REFERS_TO]?: Schema })[REFERS_TO];
  if (target) return valueOf(target);
  const near: fc.Arbitrary<unknown>[] = [fc.jsonValue({ maxDepth: 2 })];
  if (schema.type === 'object') {
    const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
    const record = fc.record(Object.fromEntries(properties.map(([name, property]) => [name, fc.oneof(valueOf(property), fc.constant(null))])), { requiredKeys: [] });
    near.push(record, fc.tuple(record, fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 })).map(([known, extra]) => ({ ...extra, ...known })));
  }
  if (schema.type === 'array') near.push(fc.array(valueOf(schema.items as Schema), { maxLength: 4 }));
  if (schema.type === 'integer') {
    const bounds = [schema.minimum, schema.maximum].filter((bound): bound is number => typeof bound === 'number');
    near.push(fc.integer({ min: -3, max: 1_100 }), fc.constantFrom(...bounds.flatMap((bound) => [bound - 1, bound, bound + 1]), 1.5, 0));
  }
  if (schema.type === 'string') {
    const options = Array.isArray(schema.enum) ? (schema.enum as string[]) : [];
    near.push(fc.string({ maxLength: 6 }), fc.string({ unit: 'grapheme', maxLength: 4 }), fc.constantFrom('', 'a', 'application/zip', 'text/plain; charset="x"', '0123456789abcdef', 'x'.repeat(101), ...options));
  }
  if (schema.type === 'boolean') near.push(fc.boolean());
  return fc.oneof(...near);
}

import { compileErrors, validate } from '@readme/openapi-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROLES, ROLE_PERMISSIONS } from '../../../functions/core/access';
import { ERROR_STATUS } from '../../../functions/core/errors';
import { ROUTE_SPECS } from '../../../functions/http/routes';
import { documentChanges } from '../../../functions/openapi/document-changes';
import { handler } from '../../../functions/openapi';
import { openApiDocument, openApiDocumentText } from '../../../functions/openapi/document';
import { CONTRACT_ROUTES, DASHBOARD_ROUTES, LINK_ROUTES, ROUTES, TOKEN_ROUTES } from '../../../lib/routes';
import type { APIGatewayProxyEvent } from 'aws-lambda';

/** What the validator takes: the document as parsed JSON (a string would be read as a file path). */
type OpenApiInput = Exclude<Parameters<typeof validate>[0], string>;
const ROOT = join(__dirname, '..', '..', '..');
type Operation = { responses: Record<string, unknown>; security: unknown[] };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { enum?: string[] }> } };
type ErrorResponse = { content: { 'application/json': { schema: { allOf: [unknown, { properties: { error: { properties: { code: { const: string } } } } }] } } } };
const doc = openApiDocument() as Doc;

describe('Module: functions/openapi/document (the API contract)', () => {
  it('is a valid OpenAPI 3.1 document, as a well-kept validator reads it', async () => {
    // Prepare: the validator dereferences what it is given, so it gets a copy.
    const copy = JSON.parse(openApiDocumentText()) as OpenApiInput;
    // Act
    const result = await validate(copy);
    // Assess
    expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
  });

  it('is refused by the same validator when broken, so the check above can fail', async () => {
    const broken = JSON.parse(openApiDocumentText()) as { paths: Record<string, Record<string, { responses: unknown }>> };
    broken.paths['/drive/list'].get.responses = 'none';
    expect((await validate(broken as unknown as OpenApiInput)).valid).toBe(false);
  });

  it('has an operation for every route, and a route for every operation', () => {
    const routes = [...ROUTES, ...LINK_ROUTES, ...TOKEN_ROUTES, ...CONTRACT_ROUTES, ...DASHBOARD_ROUTES].map((route) => `${route.method} ${route.path}`).sort();
    const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)).sort();
    expect(operations).toEqual(routes);
  });

  it('takes its error codes from ERROR_STATUS, and gives each error status the code ERROR_STATUS sends it with', () => {
    expect(doc.components.schemas.ErrorCode.enum).toEqual(Object.keys(ERROR_STATUS));
    const responses = (openApiDocument() as { components: { responses: Record<string, ErrorResponse> } }).components.responses;
    const codeOf = (status: number) => responses[`Error${status}`].content['application/json'].schema.allOf[1].properties.error.properties.code.const;
    for (const [code, status] of Object.entries(ERROR_STATUS)) expect({ status, code: codeOf(status) }).toEqual({ status, code });
    // The gateway's failures carry the API's internal_error.
    expect([codeOf(502), codeOf(504)]).toEqual(['internal_error', 'internal_error']);
  });

  it('asks a key of every API route and of none of the others', () => {
    for (const route of ROUTES) expect({ route: route.path, security: doc.paths[route.path][route.method.toLowerCase()].security }).toEqual({ route: route.path, security: [{ apiKey: [] }] });
    for (const route of [...LINK_ROUTES, ...CONTRACT_ROUTES, ...DASHBOARD_ROUTES]) expect({ route: route.path, security: doc.paths[route.path][route.method.toLowerCase()].security }).toEqual({ route: route.path, security: [] });
  });

  it('lists the gateway\'s own answers (413, 429, 500, 502, 504) on every operation, and 401 and 403 on every keyed one', () => {
    for (const route of [...ROUTES, ...LINK_ROUTES, ...CONTRACT_ROUTES, ...DASHBOARD_ROUTES]) {
      const statuses = Object.keys(doc.paths[route.path][route.method.toLowerCase()].responses);
      expect({ route: `${route.method} ${route.path}`, statuses }).toEqual({ route: `${route.method} ${route.path}`, statuses: expect.arrayContaining(['413', '429', '500', '502', '504']) });
      if ('permission' in route) expect(statuses).toEqual(expect.arrayContaining(['401', '403']));
    }
  });

  it('gives every JSON answer and body an example that its own schema accepts', () => {
    // Prepare: Ajv as the contract checker runs it (lib/local/contract.ts).
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const document = JSON.parse(openApiDocumentText()) as { paths: Record<string, Record<string, { requestBody?: Body; responses: Record<string, Body | { $ref: string }> }>>; components: { responses: Record<string, Body> } };
    type Body = { content?: Record<string, { schema: unknown; example?: unknown }> };
    ajv.addSchema(document, 'openapi');
    const pointer = (...keys: string[]) => `openapi#/${keys.map((key) => key.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
    const checked: string[] = [];
    const problems: unknown[] = [];
    const check = (at: string[], body: Body | undefined) => {
      const json = body?.content?.['application/json'];
      if (!json || json.example === undefined) return;
      const valid = ajv.compile({ $ref: pointer(...at, 'content', 'application/json', 'schema') });
      if (!valid(json.example)) problems.push({ at: at.join(' '), errors: valid.errors });
      checked.push(at.join(' '));
    };
    // Act
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        check(['paths', path, method, 'requestBody'], operation.requestBody);
        for (const [status, answer] of Object.entries(operation.responses)) if (!('$ref' in answer)) check(['paths', path, method, 'responses', status], answer);
      }
    }
    for (const [name, answer] of Object.entries(document.components.responses)) check(['components', 'responses', name], answer);
    // Assess: every JSON success answer of every keyed route, and every error, has one.
    expect(problems).toEqual([]);
    const jsonAnswers = ROUTE_SPECS.flatMap((spec) => Object.entries(spec.answers).filter(([, answer]) => answer.content?.['application/json']).map(([status]) => `paths ${spec.path} ${spec.method.toLowerCase()} responses ${status}`));
    expect(checked).toEqual(expect.arrayContaining(jsonAnswers));
    expect(checked.filter((at) => at.startsWith('components'))).toHaveLength(Object.keys(document.components.responses).length);
  });

  it('names on each keyed operation the roles that may call it, from ROLE_PERMISSIONS', () => {
    for (const route of ROUTES) {
      const roles = ROLES.filter((role) => ROLE_PERMISSIONS[role].includes(route.permission));
      expect({ route: `${route.method} ${route.path}`, roles: (doc.paths[route.path][route.method.toLowerCase()] as unknown as { 'x-roles': string[] })['x-roles'] }).toEqual({ route: `${route.method} ${route.path}`, roles });
    }
  });

  it('only adds to the document of API 1.0.0 as first published (openapi-1.0.0.json beside this test)', () => {
    // A client generated from that document keeps working while nothing in it is removed or changed; prose
    // (descriptions, summaries) and examples may be reworded.
    const baseline: unknown = JSON.parse(readFileSync(join(__dirname, 'openapi-1.0.0.json'), 'utf8'));
    const changes = documentChanges(baseline, openApiDocument()).filter((change) => change.kind !== 'added' && !/\/(description|summary|examples?)(\/|$)/.test(change.pointer));
    expect(changes).toEqual([]);
  });

  it('is what docs/openapi.json holds (npm run openapi writes it)', () => {
    expect(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')).toBe(openApiDocumentText());
  });
});

describe('Function: documentChanges (bin/openapi-diff.ts)', () => {
  it('sees an added key as an addition, and a removed key, a reworded string or a reordered list as a change a client may trip on', () => {
    const before = { paths: { '/a': { get: { summary: 'A', tags: ['x', 'y'] } } }, keep: 1 };
    const after = { keep: 1, paths: { '/a': { get: { summary: 'A', description: 'new', tags: ['y', 'x'] } }, '/b': {} } };
    expect(documentChanges(before, after)).toEqual([
      { kind: 'changed', pointer: '/paths/~1a/get/tags/0' },
      { kind: 'changed', pointer: '/paths/~1a/get/tags/1' },
      { kind: 'added', pointer: '/paths/~1a/get/description' },
      { kind: 'added', pointer: '/paths/~1b' },
    ]);
    expect(documentChanges(after, before).filter((change) => change.kind === 'removed')).toEqual([
      { kind: 'removed', pointer: '/paths/~1a/get/description' },
      { kind: 'removed', pointer: '/paths/~1b' },
    ]);
  });

  it('sees a tag appended to the document\'s tags as an addition, and tags reordered or removed as a change', () => {
    const before = { tags: [{ name: 'files' }, { name: 'keys' }] };
    expect(documentChanges(before, { tags: [{ name: 'files' }, { name: 'keys' }, { name: 'webhooks' }] })).toEqual([{ kind: 'added', pointer: '/tags/webhooks' }]);
    expect(documentChanges(before, { tags: [{ name: 'keys' }, { name: 'files' }, { name: 'webhooks' }] })).toEqual([{ kind: 'changed', pointer: '/tags' }]);
    expect(documentChanges(before, { tags: [{ name: 'files' }] })).toEqual([{ kind: 'changed', pointer: '/tags' }]);
  });

  it('sees a member appended to a discriminated oneOf as an addition, and one reordered, removed or undiscriminated as a change', () => {
    const a = { $ref: '#/components/schemas/A' };
    const b = { $ref: '#/components/schemas/B' };
    const c = { $ref: '#/components/schemas/C' };
    const job = (members: unknown[], mapping: Record<string, string>, discriminated = true) => ({ components: { schemas: { Job: { oneOf: members, ...(discriminated ? { discriminator: { propertyName: 'type', mapping } } : {}) } } } });
    const before = job([a, b], { a: a.$ref, b: b.$ref });
    expect(documentChanges(before, job([a, b, c], { a: a.$ref, b: b.$ref, c: c.$ref }))).toEqual([
      { kind: 'added', pointer: '/components/schemas/Job/oneOf/2' },
      { kind: 'added', pointer: '/components/schemas/Job/discriminator/mapping/c' },
    ]);
    expect(documentChanges(before, job([b, a, c], { a: a.$ref, b: b.$ref, c: c.$ref }))).toContainEqual({ kind: 'changed', pointer: '/components/schemas/Job/oneOf' });
    expect(documentChanges(before, job([a], { a: a.$ref }))).toContainEqual({ kind: 'changed', pointer: '/components/schemas/Job/oneOf' });
    expect(documentChanges(job([a, b], {}, false), job([a, b, c], {}, false))).toEqual([{ kind: 'changed', pointer: '/components/schemas/Job/oneOf' }]);
  });

  it('reads an operation\'s parameters as a set by location and name: an optional one is an addition, a required one or a removal a change', () => {
    const path = { in: 'query', name: 'path', required: false, schema: { type: 'string' } };
    const range = { in: 'header', name: 'Range', required: false, schema: { type: 'string' } };
    const before = { paths: { '/a': { get: { parameters: [path, range] } } } };
    const optional = { paths: { '/a': { get: { parameters: [range, path, { in: 'query', name: 'redirect', required: false, schema: { type: 'string' } }] } } } };
    expect(documentChanges(before, optional)).toEqual([{ kind: 'added', pointer: '/paths/~1a/get/parameters/query:redirect' }]);
    const required = { paths: { '/a': { get: { parameters: [path, range, { in: 'query', name: 'token', required: true, schema: { type: 'string' } }] } } } };
    expect(documentChanges(before, required)).toEqual([{ kind: 'changed', pointer: '/paths/~1a/get/parameters/query:token' }]);
    expect(documentChanges(before, { paths: { '/a': { get: { parameters: [path] } } } })).toEqual([{ kind: 'removed', pointer: '/paths/~1a/get/parameters/header:Range' }]);
    expect(documentChanges(before, { paths: { '/a': { get: { parameters: [path, { ...range, schema: { type: 'integer' } }] } } } })).toEqual([
      { kind: 'changed', pointer: '/paths/~1a/get/parameters/header:Range/schema/type' },
    ]);
  });
});

describe('Function: GET /openapi.json', () => {
  beforeEach(() => jest.spyOn(console, 'log').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  const event = (headers: Record<string, string> = {}) =>
    ({ resource: '/openapi.json', path: '/openapi.json', httpMethod: 'GET', headers, multiValueHeaders: {}, pathParameters: null, requestContext: { domainName: 'api.example.com', path: '/v1/openapi.json', requestId: 'r-1' } }) as unknown as APIGatewayProxyEvent;

  it('serves the document with no key, its servers naming the API as called, cacheable for five minutes', async () => {
    const answer = await handler(event());
    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toMatchObject({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'public, max-age=300', 'X-Request-Id': 'r-1' });
    const served = JSON.parse(answer.body) as { servers: { url: string }[]; paths: object };
    expect(served.servers).toEqual([{ url: 'https://api.example.com/v1', description: 'this API' }]);
    expect(served.paths).toEqual(doc.paths);
  });

  it('answers 304 without the body to a client that holds the current version', async () => {
    const first = await handler(event());
    const again = await handler(event({ 'If-None-Match': String(first.headers!.ETag) }));
    expect(again).toMatchObject({ statusCode: 304, body: '' });
    expect(again.headers!.ETag).toBe(first.headers!.ETag);
  });
});

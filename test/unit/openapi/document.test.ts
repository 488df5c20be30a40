import { compileErrors, validate } from '@readme/openapi-parser';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_STATUS } from '../../../functions/core/errors';
import { handler } from '../../../functions/openapi';
import { openApiDocument, openApiDocumentText } from '../../../functions/openapi/document';
import { CONTRACT_ROUTES, DASHBOARD_ROUTES, LINK_ROUTES, ROUTES } from '../../../lib/routes';
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
    const routes = [...ROUTES, ...LINK_ROUTES, ...CONTRACT_ROUTES, ...DASHBOARD_ROUTES].map((route) => `${route.method} ${route.path}`).sort();
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

  it('is what docs/openapi.json holds (npm run openapi writes it)', () => {
    expect(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')).toBe(openApiDocumentText());
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

import { ERROR_STATUS } from '../core/errors';
import { ROUTE_SPECS, type RouteSpec } from '../http/routes';
import { apiHeaders } from './operation-parts';
import { type Schema, codeOfStatus, components, plainSchema, ref } from './schema-kit';
import { ErrorBody } from './schemas';

/**
 * Drive's OpenAPI 3.1 document, built from the route objects (functions/http/routes.ts) and the wire schemas
 * (functions/openapi/schemas.ts): served at GET /openapi.json and written to docs/openapi.json by
 * `npm run openapi`. Every answer the integration tests receive is checked against it (lib/local/contract.ts).
 */

const header = (description: string, schema: Schema = { type: 'string' }, required = false) => ({ description, required, schema });

const HEADERS: Record<string, unknown> = {
  RequestId: header('The id of this request, as the logs name it.'),
  RateLimitLimit: header('Requests a minute this key may make to this endpoint.', { type: 'integer' }),
  RateLimitRemaining: header('Requests left in the bucket.', { type: 'integer' }),
  RateLimitReset: header('Seconds until the bucket is full again.', { type: 'integer' }),
  RetryAfter: header('Seconds to wait before retrying.', { type: 'integer' }, true),
  Location: header('Where to read the job.', { type: 'string', format: 'uri' }, true),
  DirectLocation: header('A presigned S3 URL of the bytes (the body\'s `url`), valid for 300 seconds.', { type: 'string', format: 'uri' }, true),
  ETag: header('The strong validator of the bytes.', { type: 'string' }, true),
  LastModified: header('When the bytes were stored.'),
  CacheControl: header('How caches may keep the answer.'),
  ContentRange: header('`bytes first-last/size` of a partial answer; `bytes */size` with a 416.', { type: 'string' }, true),
  ContentDisposition: header('`attachment` (or `inline`) with the file\'s name.'),
  IdempotentReplayed: header(
    '`true` on an answer sent again: the first request with this `Idempotency-Key` (and the same method, path, query and body) answered it, and nothing was done again. Absent on an answer of the request itself.',
    { type: 'string', enum: ['true'] },
  ),
  IdempotencyRetryAfter: header('With reason `idempotency_in_progress`: seconds to wait before retrying with the same `Idempotency-Key`.', { type: 'integer' }),
};

/** The request header of the routes marked `idempotent` (issue 26; docs/api.md, "Retries and Idempotency-Key"). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Names this attempt, 1 to 255 printable ASCII characters (a random UUID will do); a retry sends the same. Within 24 hours the same key (of the same API key) with the same method, path, query and body answers what the first request answered, status and body, with `Idempotent-Replayed: true`, and does nothing again; with another request it is a 422 (reason `idempotency_key_reused`); while the first still runs, a 409 (reason `idempotency_in_progress`) with `Retry-After`. An answer of 5xx, 429, 409 or one that says to retry is not kept: a retry runs anew. Keys are scoped to the API key and its reach (drive, role, folder); a kept answer is sealed under the caller\'s own secret.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};
const replayedHeader = { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } };

/** What API Gateway (and the local host, which plays it) may answer for any route: body too large, throttled, the integration failed or ran late. */
const GATEWAY_STATUSES = [413, 429, 500, 502, 504];
/** What the key check adds on every keyed route. */
const KEY_STATUSES = [401, 403];

const ERROR_TEXT: Record<number, string> = {
  400: 'The request is malformed: a missing or mistyped field, a body that is not what the route takes.',
  401: 'No API key, a malformed `Authorization` header, or a key no live record holds.',
  403: 'The key\'s role or folder does not allow the call.',
  404: 'Nothing at that path or id (or one this key may not see).',
  409: 'The request conflicts with what is stored (a path taken, a folder not empty, work in progress).',
  412: 'A condition the request set (`if_match`, `if_none_match`, the `If-Match` header) does not hold; the message names the paths, and nothing was changed.',
  413: 'The body (or a file\'s declared size) is larger than accepted.',
  416: 'The byte range starts past the end of the file.',
  410: 'The change feed cursor is older than the changes kept (`cursor_expired`): list again and take a new cursor.',
  422: 'A field is well-formed but its value is not allowed.',
  429: 'A rate limit (the key\'s per endpoint, or the gateway\'s) is exceeded, or (a folder delete, move or copy) the drive already has its most jobs in the background; `Retry-After` says when to try again.',
  500: 'An error of Drive\'s own; the request may be retried.',
  502: 'The gateway\'s: the function failed or gave no usable answer.',
  503: 'A service the request needs did not answer in time or at all (a token issuer the exchange asks for its keys); retry later.',
  504: 'The gateway\'s: the function did not answer in time.',
};

/** An example message of each error status, as the API words them. */
const ERROR_EXAMPLE: Record<number, string> = {
  400: 'body must be JSON like {"path": "/reports/2024"}',
  401: 'missing Authorization header; send "Authorization: Bearer <API key>"',
  403: 'path /payroll/march.pdf is outside /reports, the only folder this key may reach',
  404: 'no file at /reports/q3.pdf',
  409: 'folder /reports is not empty; pass recursive=true to delete it and everything in it',
  412: 'the condition failed for /reports/q3.pdf (if_match "9e107d9d372bb6826bd81d3542a419d6": no file with that ETag is there); nothing of this upload is stored',
  413: 'size 107374182400 is larger than 53687091200 bytes, the largest file this drive accepts',
  416: 'Range "bytes=50000-" selects no byte of this file of 48213 bytes',
  410: 'the cursor is older than the 7 days of changes kept; list the folder again and take a new cursor from GET /drive/changes/latest',
  422: 'path "/" is the root folder, which cannot be deleted',
  429: 'rate limit of 300 requests per minute for list exceeded; retry in 2 seconds',
  500: 'internal error; the request may be retried',
  502: 'internal error; the request may be retried',
  503: 'the token\'s issuer did not answer (its discovery document timed out after 3 s); retry later',
  504: 'internal error; the request may be retried',
};

/** Response components: one per error status, each saying which code it carries, with an example. */
function errorResponses(): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const status of [...new Set([...Object.values(ERROR_STATUS), 502, 503, 504])].sort((a, b) => a - b)) {
    const code = codeOfStatus(status);
    const schema: Schema = { allOf: [plainSchema(ref(ErrorBody)), { properties: { error: { properties: { code: { const: code } } } } }] };
    responses[`Error${status}`] = {
      description: `${ERROR_TEXT[status]} Code \`${code}\`.`,
      headers: {
        ...(status === 429 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}),
        ...(status === 409 ? { 'Retry-After': { $ref: '#/components/headers/IdempotencyRetryAfter' } } : {}),
        ...apiHeaders,
        // A 4xx a handler of a route marked idempotent gave is kept and may be sent again; a 401 or a 429 never is.
        ...(status < 500 && status !== 401 && status !== 429 ? replayedHeader : {}),
      },
      content: { 'application/json': { schema, example: { error: { code, message: ERROR_EXAMPLE[status], request_id: 'c0ffee00-1234-4abc-9def-0123456789ab' } } } },
    };
  }
  return responses;
}

const errorRef = (status: number) => ({ $ref: `#/components/responses/Error${status}` });

function operationObject(spec: RouteSpec): Record<string, unknown> {
  const keyed = spec.permission !== undefined;
  // An idempotent route may also answer 400 (a malformed key), 409 (its first request running) and 422 (a key reused).
  const statuses = [...new Set([...spec.errors, ...(keyed ? KEY_STATUSES : []), ...GATEWAY_STATUSES, ...(spec.idempotent ? [400, 409, 422] : [])])].sort();
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(spec.answers)) responses[status] = spec.idempotent ? { ...answer, headers: { ...answer.headers, ...replayedHeader } } : answer;
  for (const status of statuses) responses[String(status)] = errorRef(status);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: spec.tags,
    security: keyed ? [{ apiKey: [] }] : [],
    ...(keyed ? { 'x-roles': spec.roles } : {}),
    ...(spec.parameters || spec.idempotent ? { parameters: [...(spec.parameters ?? []), ...(spec.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : [])] } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
  };
}

/** The document's version: the API's, which changes only by additions (spec section 9). */
export const API_VERSION = '1.0.0';

/** The OpenAPI document, with `servers` as given (the local host by default). */
export function openApiDocument(servers: { url: string; description?: string }[] = [{ url: 'http://127.0.0.1:3000', description: 'npm start' }]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of ROUTE_SPECS) paths[spec.path] = { ...paths[spec.path], [spec.method.toLowerCase()]: operationObject(spec) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Drive',
      version: API_VERSION,
      description:
        'A file store: upload, download, list, and organise files and folders, with large uploads straight to S3, share links and API keys with roles. ' +
        'Every answer of the API is JSON in a `data` envelope, or `{"error": {"code", "message"}}` with the status its code has. ' +
        'A path or method no route has is a 404 `not_found`, from the gateway. See docs/api-contract.md in the repository.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers,
    tags: ['files', 'folders', 'jobs', 'large uploads', 'keys', 'links', 'dashboard', 'contract'].map((name) => ({ name })),
    paths,
    components: {
      schemas: plainSchema(components()),
      responses: errorResponses(),
      headers: HEADERS,
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API key>`.' } },
    },
  };
}

/** The document as docs/openapi.json holds it: two-space JSON and a final newline. */
export function openApiDocumentText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

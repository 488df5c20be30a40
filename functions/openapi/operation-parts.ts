import type { Schema, Static, TObject, TSchema } from './schema-kit';
import { envelope, plainSchema, ref } from './schema-kit';
import { DirectDownload, JobAnswer } from './schemas';

/** The parts an operation of the OpenAPI document is made of: parameters, bodies and answers. */

/** A parameter object (query, path or header). */
export type Parameter = { name: string; in: 'query' | 'path' | 'header'; required: boolean; description: string; schema: Schema; [keyword: string]: unknown };

/** A response object, as the document holds it. */
export type Answer = { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown; example?: unknown }> };

export const query = (name: string, description: string, schema: Schema = { type: 'string' }, extra: Record<string, unknown> = {}): Parameter => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  ...extra,
});
/**
 * The query parameters of a query schema (functions/openapi/schemas.ts), one per property, each with the
 * property's description unless `descriptions` words it for this route.
 */
export function queryParameters(schema: TObject, descriptions: Record<string, string> = {}): Parameter[] {
  const required = (schema.required ?? []) as string[];
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, property]) => {
    const { description, ...rest } = plainSchema(property) as Schema;
    const extra = { ...(required.includes(name) ? { required: true } : {}), ...(rest.type === 'array' ? { explode: true, style: 'form' } : {}) };
    return query(name, descriptions[name] ?? String(description), rest, extra);
  });
}
export const pathParam = (name: string, description: string): Parameter => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });
export const requestHeader = (name: string, description: string): Parameter => ({ name, in: 'header', required: false, description, schema: { type: 'string' } });

/** A JSON request body of `schema`, with an example a client may send. */
export const jsonBody = <T extends TSchema>(schema: T, example: Static<T>, required = true) => ({ required, content: { 'application/json': { schema: plainSchema(schema), example } } });

/** Headers every answer of a keyed API operation may carry. */
export const apiHeaders = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
export const limitHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
};

/** A success answer of the API: `{"data": …}` of `data`, with `example` as its data. */
export function ok<T extends TSchema>(description: string, data: T, example: Static<T>, headers: Record<string, unknown> = {}): Answer {
  return { description, headers: { ...apiHeaders, ...limitHeaders, ...headers }, content: { 'application/json': { schema: plainSchema(envelope(data)), example: { data: example } } } };
}

/** The 202 of a delete, move or copy too big for one request, with `example` as its job. */
export function jobAccepted(what: string, example: Static<typeof JobAnswer>): Answer {
  return {
    description: `${what} is too big for one request: it goes on as a job; \`Location\` and \`job.url\` read it.`,
    headers: { Location: { $ref: '#/components/headers/Location' }, ...apiHeaders, ...limitHeaders },
    content: { 'application/json': { schema: plainSchema(envelope(ref(JobAnswer))), example: { data: example } } },
  };
}

export const DOWNLOAD_HEADERS = [
  requestHeader('Range', 'One byte range, `bytes=first-last`, `bytes=first-` or `bytes=-suffix`; several ranges are answered whole.'),
  requestHeader('If-Range', 'An ETag or date: the range is honoured only if the file is still that version.'),
  requestHeader('If-None-Match', 'ETags the client holds: a match is a 304 without the bytes.'),
  requestHeader('If-Modified-Since', 'A date: no change since is a 304 (ignored with If-None-Match).'),
];

const bytes = { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } };
export const validatorHeaders = {
  ETag: { $ref: '#/components/headers/ETag' },
  'Last-Modified': { $ref: '#/components/headers/LastModified' },
  'Cache-Control': { $ref: '#/components/headers/CacheControl' },
};

/** The answers of a download (GET or HEAD, of a file or through a share link). */
export function downloadAnswers(head: boolean, limited: boolean): Record<number, Answer> {
  const common = { ...validatorHeaders, ...apiHeaders, ...(limited ? limitHeaders : {}) };
  const file = { ...common, 'Content-Disposition': { $ref: '#/components/headers/ContentDisposition' } };
  const answers: Record<number, Answer> = {
    200: { description: head ? 'The file\'s headers, without its bytes.' : 'The file\'s bytes, with its own Content-Type.', headers: file, ...(head ? {} : { content: bytes }) },
    304: { description: 'The client\'s copy is current (If-None-Match or If-Modified-Since).', headers: common },
  };
  if (!head) answers[206] = { description: 'The range asked for.', headers: { ...file, 'Content-Range': { $ref: '#/components/headers/ContentRange' } }, content: bytes };
  return answers;
}

/** The `307` of a download with `redirect=true`: `Location` reads the bytes from S3; the body (not for HEAD) says what and until when. */
export function directDownloadAnswer(head: boolean, example: Static<typeof DirectDownload>): Answer {
  const headers = { Location: { $ref: '#/components/headers/DirectLocation' }, 'Cache-Control': { $ref: '#/components/headers/CacheControl' }, ...apiHeaders, ...limitHeaders };
  const description = 'With `redirect=true`: the file\'s bytes are at `Location`, a presigned S3 URL for 300 seconds that answers GET (and Range) as the plain download does, with its Content-Type and Content-Disposition. The key\'s role, folder and rate limit were checked before it was signed; send no API key to it.';
  if (head) return { description, headers };
  return { description, headers, content: { 'application/json': { schema: plainSchema(envelope(ref(DirectDownload))), example: { data: example } } } };
}

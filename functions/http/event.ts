import type { APIGatewayProxyEvent } from 'aws-lambda';
import { setting } from '../config';
import { invalid, notFound } from '../core/errors';

/** A header's value, whatever its case; API Gateway passes names as the client sent them. */
export function headerOf(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (key.toLowerCase() === wanted && values && values.length > 0) return values.join(', ');
  }
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}

/** A query parameter given at most once, or undefined; repeating it is a validation error. */
export function queryParam(event: APIGatewayProxyEvent, name: string): string | undefined {
  const values = own(event.multiValueQueryStringParameters, name);
  if (values && values.length > 1) throw invalid(`${name} is given ${values.length} times; give it once`);
  return values?.[0] ?? own(event.queryStringParameters, name) ?? undefined;
}

/** Every value of a query parameter that may repeat, in order, or undefined if it is not given. */
export function queryValues(event: APIGatewayProxyEvent, name: string): string[] | undefined {
  const single = own(event.queryStringParameters, name);
  return own(event.multiValueQueryStringParameters, name) ?? (single === undefined ? undefined : [single]);
}

/** `map[name]` if the map has it as its own: a client's names never reach a prototype (`constructor`, `__proto__`). */
function own<T>(map: Record<string, T> | null | undefined, name: string): T | undefined {
  return map && Object.hasOwn(map, name) ? map[name] : undefined;
}

/** A boolean query parameter: `true` or `false`, default false. */
export function booleanParam(event: APIGatewayProxyEvent, name: string): boolean {
  const value = queryParam(event, name);
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw invalid(`${name} must be "true" or "false" (got ${JSON.stringify(value)})`);
}

/** Each event's body as decoded, while the event lives: the same bytes are not decoded twice. */
const decodedBodies = new WeakMap<APIGatewayProxyEvent, { from: string; base64: boolean; bytes: Buffer }>();

/**
 * The request body as bytes, decoded by API Gateway's base64 flag (binary media types arrive encoded). Decoded
 * once per event: a request with an Idempotency-Key reads its body for the fingerprint and again for the
 * operation (an upload's 1 MiB is 1.4 MB of base64, about 0.3 ms of CPU and a megabyte to collect each time).
 * Callers only read the bytes.
 */
export function bodyOf(event: APIGatewayProxyEvent): Buffer {
  if (!event.body) return Buffer.alloc(0);
  const base64 = Boolean(event.isBase64Encoded);
  const held = decodedBodies.get(event);
  if (held && held.from === event.body && held.base64 === base64) return held.bytes;
  const bytes = Buffer.from(event.body, base64 ? 'base64' : 'utf8');
  decodedBodies.set(event, { from: event.body, base64, bytes });
  return bytes;
}

const HOST_NAME = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/;

/**
 * The absolute address of this API as the client called it: the domain API Gateway served the request on
 * (its own, or the custom domain), never the client's `Host` or `X-Forwarded-*` headers, and the stage or
 * custom-domain base path that API Gateway put before the resource path.
 */
export function baseUrlOf(event: APIGatewayProxyEvent): string {
  const host = event.requestContext?.domainName ?? '';
  if (!HOST_NAME.test(host)) throw new Error(`requestContext.domainName ${JSON.stringify(host.slice(0, 100))} is not a host name`);
  // `resource` is the route as declared ("/drive/upload", "/drive/uploads/{upload_id}/complete");
  // `requestContext.path` is what the client called, with the stage ("/prod/drive/upload") or a custom
  // domain's base path in front of it.
  const resource = event.resource.replace(/\{(\w+)\+?\}/g, (_, name: string) => own(event.pathParameters, name) ?? '');
  const called = event.requestContext?.path ?? resource;
  const prefix = called.endsWith(resource) ? called.slice(0, called.length - resource.length) : '';
  // https in AWS; the local host, which serves plain HTTP, says so in `DRIVE_API_SCHEME`.
  const scheme = setting('apiScheme');
  return `${scheme}://${host}${prefix}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The `{upload_id}` of the route; anything but an id this API issued cannot name a session. */
export function uploadIdOf(event: APIGatewayProxyEvent): string {
  const id = event.pathParameters?.upload_id ?? '';
  if (!UUID.test(id)) throw notFound(`no upload session ${JSON.stringify(id.slice(0, 80))}`);
  return id;
}

/** The `{job_id}` of the route; anything but an id this API issued cannot name a job. */
export function jobIdOf(event: APIGatewayProxyEvent): string {
  const id = event.pathParameters?.job_id ?? '';
  if (!UUID.test(id)) throw notFound(`no job ${JSON.stringify(id.slice(0, 80))}`);
  return id;
}

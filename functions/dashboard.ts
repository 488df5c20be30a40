import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { setting } from './config';
import { headerOf } from './http/event';
import { REQUEST_ID_HEADER, bodyBytes, logRequest, requestIdOf } from './http/request-log';
import type { Headers } from './http/respond';
import { readStaticFile, staticFileResponse, staticSiteDir } from './http/static-files';

/** The dashboard's files: `dashboard/` of the project locally, a copy inside the bundle in Lambda. */
const dir = staticSiteDir(setting('dashboardDir'));
const PLAIN_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;
const headers = securityHeaders(originOf(setting('partUploadOrigin')));

/**
 * GET / and GET /{file}: the web dashboard, a static page that signs in with a key of any role, kept in the tab's
 * session storage and calls the API beside it. No key is asked for here: the files hold no data.
 */
export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const startedAt = Date.now();
  const requestId = requestIdOf(event);
  const answer = await respond(event, { ...headers, [REQUEST_ID_HEADER]: requestId }, requestId);
  logRequest(event, { status: answer.statusCode, startedAt, bytesOut: bodyBytes(answer.body, answer.isBase64Encoded) });
  return answer;
};

async function respond(event: APIGatewayProxyEvent, headers: Headers, requestId: string): Promise<APIGatewayProxyResult> {
  const name = event.pathParameters?.file;
  // `.../v1` and `.../v1/` both reach `/`; the page's relative URLs (app.js, drive/list) need the slash.
  // Only plain segments are sent back in Location, so it can never name another host.
  const requested = event.requestContext.path;
  if (name === undefined && PLAIN_PATH.test(requested)) return { statusCode: 308, headers: { ...headers, Location: `${requested}/` }, body: '' };
  const file = name ?? 'index.html';
  return staticFileResponse(await readStaticFile(dir, file), file, headerOf(event, 'if-none-match'), headers, requestId);
}

/**
 * What every dashboard response carries. The policy allows only the dashboard's own files and calls to
 * this API and to the bucket's part-upload URLs (large files go straight to S3); no inline script or style,
 * no string-to-code sinks (Trusted Types), no forms that submit (a key typed before the script ran must not
 * travel in a URL), and no framing.
 */
function securityHeaders(partUploadOrigin: string): Headers {
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self' ${partUploadOrigin}`,
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': policy,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  };
}

/** The origin of `url`, checked at cold start: a policy with a malformed source would block every upload. */
function originOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`DRIVE_PART_UPLOAD_ORIGIN must be an http(s) origin like https://bucket.s3.us-east-1.amazonaws.com (got ${JSON.stringify(url)})`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error(`DRIVE_PART_UPLOAD_ORIGIN must be http or https (got ${parsed.protocol})`);
  return parsed.origin;
}

import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { corsHeaders } from './http/cors';
import { baseUrlOf, headerOf } from './http/event';
import { REQUEST_ID_HEADER, logRequest, requestIdOf } from './http/request-log';
import { openApiDocument } from './openapi/document';

/**
 * GET /openapi.json, with no key: the API's OpenAPI 3.1 document, its `servers` naming the API that served it
 * (the stage or custom domain as called). Browsers and tools may keep it five minutes and then ask again; the
 * ETag makes asking a 304.
 */
export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const startedAt = Date.now();
  const body = JSON.stringify(openApiDocument([{ url: baseUrlOf(event), description: 'this API' }]));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const headers = { ...corsHeaders(event), [REQUEST_ID_HEADER]: requestIdOf(event), ETag: etag, 'Cache-Control': 'public, max-age=300' };
  const current = headerOf(event, 'if-none-match')?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag) ?? false;
  const answer = current ? { statusCode: 304, headers, body: '' } : { statusCode: 200, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' }, body };
  logRequest(event, { status: answer.statusCode, startedAt });
  return answer;
};

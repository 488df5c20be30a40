import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Caller } from '../core/access';

/** The header every answer carries: the request id API Gateway gave the request (Lambda logs it too). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** The request's id, as API Gateway (or the local host, the same way) gives it. */
export function requestIdOf(event: APIGatewayProxyEvent): string {
  return event.requestContext?.requestId ?? 'unknown';
}

/**
 * One JSON line per request on stdout (CloudWatch Logs in AWS, the host's output locally): its id, route,
 * method, drive and key id (never a secret: the id the key routes list it under), status and time taken.
 * A share link's token is never logged: the route's template is, not the path.
 */
export function logRequest(event: APIGatewayProxyEvent, outcome: { status: number; caller?: Caller; startedAt: number }): void {
  const line = {
    level: outcome.status >= 500 ? 'error' : 'info',
    message: 'request',
    request_id: requestIdOf(event),
    route: event.resource ?? null,
    method: event.httpMethod,
    status: outcome.status,
    latency_ms: Date.now() - outcome.startedAt,
    ...(outcome.caller ? { drive: outcome.caller.drive, key_id: outcome.caller.keyId } : {}),
  };
  console.log(JSON.stringify(line));
}

import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Caller } from '../core/access';
import { forceTrace } from '../telemetry/request-context';
import { type Level, enabled, writeLine } from '../telemetry/log';
import { embeddedMetrics } from '../telemetry/metrics';
import { currentRequest } from '../telemetry/request-context';
import { FORCE_TRACE_HEADER, lambdaTraceHeader, sendForcedSegment } from '../telemetry/trace';
import { headerOf } from './event';

/** The header every answer carries: the request id API Gateway gave the request (Lambda logs it too). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** The request's id, as API Gateway (or the local host, the same way) gives it. */
export function requestIdOf(event: APIGatewayProxyEvent): string {
  return event.requestContext?.requestId ?? 'unknown';
}

/** What the handler knows of a request once it answers. */
export interface RequestOutcome {
  status: number;
  caller?: Caller;
  startedAt: number;
  /** The answer's body in bytes, when known as it starts (a buffered body, a stream's Content-Length). */
  bytesOut?: number;
}

/**
 * One JSON line per request on stdout (CloudWatch Logs in AWS, the host's output locally): its id, route,
 * method, drive and key id (never a secret: the id the key routes list it under), status, time taken, bytes
 * in and out, the AWS calls it made by service and the objects its clean-up left, if any; and, in the same
 * line, its metrics in CloudWatch's embedded metric format. A share link's token is never logged: the
 * route's template is, not the path. A level above the line's own cuts it to what the metrics need.
 */
export function logRequest(event: APIGatewayProxyEvent, outcome: RequestOutcome): void {
  const context = currentRequest();
  const route = `${event.httpMethod} ${event.resource ?? '(no route)'}`;
  const bytesIn = bodyBytes(event.body, event.isBase64Encoded);
  const latency = Date.now() - outcome.startedAt;
  const metrics = embeddedMetrics(
    {
      requests: 1,
      serverErrors: outcome.status >= 500 ? 1 : 0,
      clientErrors: outcome.status >= 400 && outcome.status < 500 ? 1 : 0,
      rateLimited: outcome.status === 429 ? 1 : 0,
      latency,
      bytesIn,
      bytesOut: outcome.bytesOut,
    },
    route,
  );
  if (context?.forcedAt !== undefined && context.trace) {
    sendForcedSegment(context.trace, { name: route, method: event.httpMethod, route: event.resource ?? '(no route)', status: outcome.status, start: context.forcedAt, end: Date.now() });
  }
  const level: Level = outcome.status >= 500 ? 'ERROR' : 'INFO';
  const base = { timestamp: new Date().toISOString(), level, message: 'request', request_id: requestIdOf(event), status: outcome.status };
  if (!enabled(level)) return writeLine({ ...base, ...metrics });
  writeLine({
    ...base,
    route: event.resource ?? null,
    method: event.httpMethod,
    latency_ms: latency,
    ...(outcome.caller ? { drive: outcome.caller.drive, key_id: outcome.caller.keyId, ...(outcome.caller.trustId ? { trust_id: outcome.caller.trustId } : {}) } : {}),
    bytes_in: bytesIn,
    ...(outcome.bytesOut === undefined ? {} : { bytes_out: outcome.bytesOut }),
    aws_calls: context?.awsCalls ?? {},
    ...(context?.orphanedObjects ? { orphaned_objects: context.orphanedObjects } : {}),
    ...traceOf(event),
    ...(context?.forcedAt !== undefined ? { trace_forced: true } : {}),
    ...metrics,
  });
}

/** The bytes of a proxy event's or result's body: its length once decoded, without decoding it. */
export function bodyBytes(body: string | null | undefined, base64: boolean | undefined): number {
  if (!body) return 0;
  return Buffer.byteLength(body, base64 ? 'base64' : 'utf8');
}

/**
 * Traces the request whatever the sampling rule decided when it asks to (`X-Drive-Trace: 1`) and its key may:
 * an admin key's. Nobody else can make the drive pay for traces: not a share link's opener, not a key of
 * another role, not a request the guard refused (this runs once it has admitted the key).
 */
export function traceIfAsked(event: APIGatewayProxyEvent, caller: Caller): void {
  if (caller.role === 'admin' && headerOf(event, FORCE_TRACE_HEADER.toLowerCase())?.trim() === '1') forceTrace();
}

/** The trace header API Gateway passed on with the request (it adds one whenever the stage traces). */
export function traceHeaderOf(event: APIGatewayProxyEvent): string | undefined {
  return headerOf(event, 'x-amzn-trace-id');
}

/** The X-Ray trace this request is part of, to find it in the console. */
function traceOf(event: APIGatewayProxyEvent): { trace_id?: string } {
  const header = traceHeaderOf(event) ?? lambdaTraceHeader();
  const root = currentRequest()?.trace?.root ?? (header && /Root=([0-9a-f-]+)/i.exec(header)?.[1]);
  return root ? { trace_id: root } : {};
}

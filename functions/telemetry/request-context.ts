import { AsyncLocalStorage } from 'node:async_hooks';
import { type TraceContext, traceContextOf } from './trace';

/** What one invocation notes as it runs, for its log line: AWS calls by service, and objects it left behind. */
export interface RequestContext {
  requestId: string;
  awsCalls: Record<string, number>;
  orphanedObjects: number;
  /** The X-Ray trace it is part of, if any, and the subsegments it has sent to it. */
  trace?: TraceContext;
  subsegments: number;
}

// One store per process: a Lambda container runs one invocation at a time, the local host many at once, each
// in its own context, so the counts of one never land in another's line.
const storage = new AsyncLocalStorage<RequestContext>();

/**
 * Runs `work` with a fresh context for the request `requestId`; what it notes is in the context passed to it.
 * `traceHeader` is the request's `X-Amzn-Trace-Id`, used where Lambda sets no trace of its own.
 */
export function withRequestContext<T>(requestId: string, work: (context: RequestContext) => T, traceHeader?: string): T {
  const trace = traceContextOf() ?? traceContextOf(traceHeader);
  const context: RequestContext = { requestId, awsCalls: {}, orphanedObjects: 0, trace, subsegments: 0 };
  return storage.run(context, () => work(context));
}

/** The context of the invocation running now, if it has one (code outside a handler has none). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** Notes one call to `service` in the running invocation's context. */
export function noteAwsCall(service: string): void {
  const context = storage.getStore();
  if (context) context.awsCalls[service] = (context.awsCalls[service] ?? 0) + 1;
}

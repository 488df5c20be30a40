import { AsyncLocalStorage } from 'node:async_hooks';
import { type TraceContext, forcedTrace, traceContextOf } from './trace';

/** What one invocation notes as it runs, for its log line: AWS calls by service, and objects it left behind. */
export interface RequestContext {
  requestId: string;
  awsCalls: Record<string, number>;
  orphanedObjects: number;
  /** The X-Ray trace it is part of, if any, and the subsegments it has sent to it. */
  trace?: TraceContext;
  subsegments: number;
  /** Set when the request asked for a trace the sampling rule had not given it (`forceTrace`): when it began. */
  forcedAt?: number;
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

/**
 * Traces the running request though its sampling decision said no (an admin key's `X-Drive-Trace: 1`): its
 * calls become subsegments of a segment of its own, sent when it is answered (request-log.ts). A request
 * already sampled is left as it is.
 */
export function forceTrace(): void {
  const context = storage.getStore();
  if (!context || context.trace?.sampled) return;
  context.trace = forcedTrace(context.trace);
  context.forcedAt = Date.now();
}

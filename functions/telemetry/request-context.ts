import { AsyncLocalStorage } from 'node:async_hooks';
import { type Environment, runtimeVariable } from '../config';
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

/**
 * Whether this process runs one invocation at a time: a Lambda function's, unless its managed instances run
 * several at once (they set `AWS_LAMBDA_MAX_CONCURRENCY`), the test the runtime's own InvokeStore makes
 * (@aws/lambda-invoke-store). The local host, and tests, run many at once.
 */
export function runsOneAtATime(env?: Environment): boolean {
  return runtimeVariable('AWS_LAMBDA_FUNCTION_NAME', env) !== undefined && runtimeVariable('AWS_LAMBDA_MAX_CONCURRENCY', env) === undefined;
}

// The counts of one request must never land in another's line. Where many run at once, each runs in its own
// AsyncLocalStorage context. One at a time, the running one is the one last begun: a slot holds it, and no
// AsyncLocalStorage is made, whose async hook (Node 20) runs for every promise the process creates, the SDK's
// dozens a call included (0.18 ms of a 4 KiB download's CPU in a profile of test/bench/handler-cpu.ts). Chosen at
// the first request, from the environment as Lambda (or the local host) has set it by then.
let storage: AsyncLocalStorage<RequestContext> | undefined | null = null;
let slot: RequestContext | undefined;

/**
 * Runs `work` with a fresh context for the request `requestId`; what it notes is in the context passed to it.
 * `traceHeader` is the request's `X-Amzn-Trace-Id`, used where Lambda sets no trace of its own.
 */
export function withRequestContext<T>(requestId: string, work: (context: RequestContext) => T, traceHeader?: string): T {
  const trace = traceContextOf() ?? traceContextOf(traceHeader);
  const context: RequestContext = { requestId, awsCalls: {}, orphanedObjects: 0, trace, subsegments: 0 };
  if (storage === null) storage = runsOneAtATime() ? undefined : new AsyncLocalStorage<RequestContext>();
  if (storage) return storage.run(context, () => work(context));
  slot = context;
  const done = () => {
    if (slot === context) slot = undefined;
  };
  try {
    const result = work(context);
    if (result instanceof Promise) result.then(done, done);
    else done();
    return result;
  } catch (error) {
    done();
    throw error;
  }
}

/** The context of the invocation running now, if it has one (code outside a handler has none). */
export function currentRequest(): RequestContext | undefined {
  return storage ? storage.getStore() : slot;
}

/** Notes one call to `service` in the running invocation's context. */
export function noteAwsCall(service: string): void {
  const context = currentRequest();
  if (context) context.awsCalls[service] = (context.awsCalls[service] ?? 0) + 1;
}

/**
 * Traces the running request though its sampling decision said no (an admin key's `X-Drive-Trace: 1`): its
 * calls become subsegments of a segment of its own, sent when it is answered (request-log.ts). A request
 * already sampled is left as it is.
 */
export function forceTrace(): void {
  const context = currentRequest();
  if (!context || context.trace?.sampled) return;
  context.trace = forcedTrace(context.trace);
  context.forcedAt = Date.now();
}

import { randomBytes } from 'node:crypto';
import { type Socket, createSocket } from 'node:dgram';
import { runtimeVariable } from '../config';

/**
 * X-Ray subsegments for the AWS calls a function makes, sent to the X-Ray daemon as the X-Ray SDK sends them
 * (one UDP datagram a subsegment, after the daemon's header line), without the SDK's weight at cold start.
 * Lambda's active tracing records the function's own segment; these hang the calls below it, so a trace shows
 * which DynamoDB and S3 calls a request made, in which order, and how long each took. The local host runs a
 * daemon of its own that keeps what it receives (lib/local/trace-collector.ts).
 */

/** A trace header's parts (`Root=1-…;Parent=…;Sampled=1`): where this invocation's subsegments belong. */
export interface TraceContext {
  root: string;
  parent: string;
  sampled: boolean;
}

/** One AWS call, timed. */
export interface AwsCall {
  service: string;
  operation: string;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  status?: number;
  awsRequestId?: string;
  attempts?: number;
  /** The error's name, if the call failed. */
  error?: string;
}

/** Subsegments one invocation sends at most: a batch of 1,000 files makes thousands of calls; the first tell enough. */
export const MAX_SUBSEGMENTS = 200;

const ROOT = /^1-[0-9a-f]{8}-[0-9a-f]{24}$/;
const SEGMENT_ID = /^[0-9a-f]{16}$/;
const DAEMON_HEADER = '{"format":"json","version":1}\n';

/** Errors that are a service's throttling, whatever their status: the names the SDK's retry strategy treats as throttles (`THROTTLING_ERROR_CODES` of @smithy/core). */
const THROTTLES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'TooManyRequestsException',
  'TransactionInProgressException',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'EC2ThrottledException',
]);

/** The names X-Ray gives these services' nodes in its trace map. */
const SERVICE_NAMES: Record<string, string> = { dynamodb: 'DynamoDB', s3: 'S3', sqs: 'SQS' };

/**
 * The request header an admin key sends to have its request traced whatever the sampling rule decided
 * (`X-Drive-Trace: 1`): for debugging one request in AWS, where the stack samples about 1 % (docs/deploy.md).
 */
export const FORCE_TRACE_HEADER = 'X-Drive-Trace';

/** Lambda's `_X_AMZN_TRACE_ID`: the trace of this invocation, set by the runtime (undefined off Lambda). */
export function lambdaTraceHeader(): string | undefined {
  return runtimeVariable('_X_AMZN_TRACE_ID');
}

/**
 * This invocation's trace: Lambda's `_X_AMZN_TRACE_ID` (its Parent is the function's segment), else the
 * `X-Amzn-Trace-Id` header API Gateway passed (the local host's, whose Parent is the invocation's segment).
 * Anything malformed is no trace.
 */
export function traceContextOf(header: string | undefined = lambdaTraceHeader()): TraceContext | undefined {
  if (!header) return undefined;
  const fields = new Map(header.split(';').map((field) => {
    const at = field.indexOf('=');
    return [field.slice(0, at).trim(), field.slice(at + 1).trim()] as const;
  }));
  const root = fields.get('Root') ?? '';
  const parent = fields.get('Parent') ?? '';
  if (!ROOT.test(root) || !SEGMENT_ID.test(parent)) return undefined;
  return { root, parent, sampled: fields.get('Sampled') === '1' };
}

/**
 * A timer for one call: its start by the wall clock (as Lambda stamps the function's segment), its length by
 * the monotonic one, to the microsecond. (The monotonic clock alone drifts from the wall clock over a warm
 * container's hours and stops while Lambda freezes it.)
 */
export function stopwatch(): { start: number; stop(): number } {
  const start = Date.now();
  const started = performance.now();
  return { start, stop: () => start + (performance.now() - started) };
}

/** The daemon's address, `host:port` in `AWS_XRAY_DAEMON_ADDRESS` (Lambda sets it when tracing is active). */
function daemonAddress(): { host: string; port: number } | undefined {
  const match = /^([0-9.]+|localhost):(\d{1,5})$/.exec(runtimeVariable('AWS_XRAY_DAEMON_ADDRESS') ?? '');
  const port = Number(match?.[2]);
  return match && port >= 1 && port <= 65535 ? { host: match[1], port } : undefined;
}

/** A subsegment document for `call`, as the X-Ray SDK writes one for an AWS call. */
export function subsegmentOf(trace: TraceContext, call: AwsCall, region = runtimeVariable('AWS_REGION')): Record<string, unknown> {
  const status = call.status;
  return {
    name: SERVICE_NAMES[call.service] ?? call.service,
    id: randomBytes(8).toString('hex'),
    trace_id: trace.root,
    parent_id: trace.parent,
    type: 'subsegment',
    namespace: 'aws',
    start_time: call.start / 1000,
    end_time: call.end / 1000,
    aws: { operation: call.operation, region, request_id: call.awsRequestId, retries: call.attempts === undefined ? undefined : call.attempts - 1 },
    ...(status === undefined ? {} : { http: { response: { status } } }),
    // X-Ray's flags: a throttle (a 429, or an error the SDK names one: DynamoDB's come as 400, S3's SlowDown as
    // 503) is marked so and as an error, any other 4xx an error, a 5xx (or no answer) a fault.
    ...(call.error === undefined
      ? {}
      : status === 429 || THROTTLES.has(call.error)
        ? { throttle: true, error: true }
        : status !== undefined && status < 500
          ? { error: true }
          : { fault: true }),
  };
}

/**
 * A trace of this invocation's own, for a request the sampling rule left out (`X-Drive-Trace`): the request's
 * trace id where it has one (so that its log line's `trace_id` finds it), and a new segment, which
 * `sendForcedSegment` sends once the request is answered, for its calls' subsegments to hang below.
 */
export function forcedTrace(unsampled: TraceContext | undefined, now = Date.now()): TraceContext {
  const root = unsampled?.root ?? `1-${Math.floor(now / 1000).toString(16).padStart(8, '0')}-${randomBytes(12).toString('hex')}`;
  return { root, parent: randomBytes(8).toString('hex'), sampled: true };
}

/** What a forced trace's segment tells of its request. */
export interface ForcedRequest {
  /** The function's name (Lambda's `AWS_LAMBDA_FUNCTION_NAME`; the route's where there is none). */
  name: string;
  method: string;
  route: string;
  status: number;
  start: number;
  end: number;
}

/** The segment document of a forced trace: the invocation as Lambda's own segment would show it, annotated as forced. */
export function forcedSegmentOf(trace: TraceContext, request: ForcedRequest): Record<string, unknown> {
  return {
    name: runtimeVariable('AWS_LAMBDA_FUNCTION_NAME') ?? request.name,
    id: trace.parent,
    trace_id: trace.root,
    start_time: request.start / 1000,
    end_time: request.end / 1000,
    origin: 'AWS::Lambda::Function',
    http: { request: { method: request.method, url: request.route }, response: { status: request.status } },
    annotations: { forced: true },
    ...(request.status >= 500 ? { fault: true } : request.status >= 400 ? { error: true } : {}),
  };
}

/** Sends the segment of a forced trace, as `sendSubsegment` sends a call (best effort). */
export function sendForcedSegment(trace: TraceContext, request: ForcedRequest): void {
  send(trace, forcedSegmentOf(trace, request));
}

let sender: { socket: Socket; loopback: boolean } | undefined;

/** Whether `host` is this machine's loopback, where the local host's daemon listens. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host.startsWith('127.');
}

/** Sends `call` to the daemon as a subsegment of `trace`; never fails the request (tracing is best effort). */
export function sendSubsegment(trace: TraceContext, call: AwsCall): void {
  send(trace, subsegmentOf(trace, call));
}

function send(trace: TraceContext, document: Record<string, unknown>): void {
  const daemon = daemonAddress();
  if (!daemon || !trace.sampled) return;
  try {
    const loopback = isLoopback(daemon.host);
    if (!sender || sender.loopback !== loopback) {
      sender?.socket.close();
      const socket = createSocket('udp4');
      // A send that fails (no daemon listening) is dropped, as the X-Ray SDK drops it; the socket never keeps
      // the process alive.
      socket.on('error', () => undefined);
      socket.unref();
      // Unbound, the first send would bind the socket on every interface (0.0.0.0): a port open to the network
      // for as long as the process runs. To a daemon on this machine it binds loopback (sends wait for the
      // bind); Lambda's daemon (169.254.79.129) is not on loopback, and there it binds as the X-Ray SDK does.
      if (loopback) socket.bind(0, '127.0.0.1');
      sender = { socket, loopback };
    }
    sender.socket.send(DAEMON_HEADER + JSON.stringify(document), daemon.port, daemon.host, () => undefined);
  } catch {
    // Whatever tracing throws, the call it records has answered: its answer stands.
  }
}

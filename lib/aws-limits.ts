import type { HandlerName } from './routes';

/**
 * AWS's hard limits on a request's way through API Gateway and Lambda: the one table the CDK stack and the
 * local host both read, so that what passes locally passes in AWS and what fails in AWS fails locally.
 * README "Limits" lists them with what each answers.
 */
export const AWS_LIMITS = {
  /**
   * A synchronous Lambda invocation's payload, each way, as Lambda measures it: the event's JSON (headers,
   * context and the base64 body included) on the way in, the returned object's JSON on the way out.
   */
  lambdaPayloadBytes: 6_291_556,
  /** The largest request body API Gateway (REST) accepts. */
  apiGatewayBodyBytes: 10 * 1024 * 1024,
  /** API Gateway's integration timeout for a buffered response. */
  integrationTimeoutSeconds: 29,
  /** The most a response-streaming function may send (Lambda's streaming maximum). */
  streamedResponseBytes: 200 * 1024 * 1024,
  /** The longest a streamed response may run (API Gateway's and Lambda's 15 minutes). */
  streamedTimeoutSeconds: 15 * 60,
} as const;

/**
 * The upload body a client can count on: Lambda's payload less a third for base64 and room for the rest of
 * the event (API Gateway passes at most 10 KB of headers, twice: single- and multi-value).
 */
export const MAX_REQUEST_BODY_BYTES = 4_500_000;

/**
 * The API's X-Ray sampling when the stack's props set none: a reservoir of 1 request a second, then 1 % of
 * the rest (X-Ray's own default, 1 a second then 5 %, traces nearly every request of a quiet deployment).
 * docs/deploy.md's cost per million reads it (test/support/cost-model.ts).
 */
export const DEFAULT_TRACING = { sampleRate: 0.01, reservoirPerSecond: 1 } as const;

/**
 * Memory (MB) and timeout (seconds) per function: uploads parse up to 4.5 MB of multipart; downloads stream
 * for up to 15 minutes (past the first 10 MB API Gateway paces a stream at 2 MB/s).
 *
 * Lambda gives CPU in proportion to memory, one vCPU at 1,769 MB (AWS's Lambda guide, "memory and
 * computing power"). For work that is CPU-bound, more memory up to that point costs nothing per item: the
 * price per GB-second rises as the seconds fall. List and delete are sized from `npm run bench:scale`'s
 * CPU figures (README, "Performance at scale"), measured on the handlers' own code in the local host.
 */
const ONE_VCPU_MB = 1769;
export const FUNCTION_SIZING: Record<HandlerName, { memorySize: number; timeoutSeconds: number }> = {
  upload: { memorySize: 1024, timeoutSeconds: 29 },
  download: { memorySize: 512, timeoutSeconds: AWS_LIMITS.streamedTimeoutSeconds },
  // Streams its answer, for up to a stream's 15 minutes, holding a page per level. A page of 1,000 from one
  // folder took 23–36 ms of CPU, a recursive page (about 500 folders, a Query each) 365 ms, which 1,024 MB
  // (0.58 vCPU) keeps near 0.6 s; memory is not what binds (an unpaged 100,000-file answer grew the host by
  // under 30 MiB). An unpaged answer at the stream's 200 MB (about 1.3 million files) needs about 21 s of CPU.
  list: { memorySize: 1024, timeoutSeconds: AWS_LIMITS.streamedTimeoutSeconds },
  'create-folder': { memorySize: 256, timeoutSeconds: 29 },
  // Deletes for REQUEST_DELETE_BUDGET_MS (10 s), then hands the rest to the worker. A delete took 613 ms of
  // CPU per 1,000 files: at 512 MB (0.29 vCPU) that is about 470 files a second, under half of one
  // partition's 1,000 writes a second; a whole vCPU deletes about 1,600 a second (some 16,000 in the
  // request's 10 s) at the same cost per file.
  'delete-folder': { memorySize: ONE_VCPU_MB, timeoutSeconds: 29 },
  // One step of a delete job: STEP_DELETE_BUDGET_MS (4 minutes) of deleting, then the job goes on in a new
  // message. Sized as delete-folder, for the same CPU per file.
  'job-worker': { memorySize: ONE_VCPU_MB, timeoutSeconds: 300 },
  // At most 1,000 files a request: a batched read, a conditional delete each, one DeleteObjects per 1,000.
  'delete-files': { memorySize: 512, timeoutSeconds: 29 },
  // A file moves in one transaction; a folder moves for REQUEST_DELETE_BUDGET_MS (10 s), a transaction a
  // file, then the worker goes on: sized as delete-folder, whose work per file it mirrors.
  move: { memorySize: ONE_VCPU_MB, timeoutSeconds: 29 },
  // One CopyObject (or, above 5 GiB, parts copied eight at a time, all in S3) and an upload's record writes.
  copy: { memorySize: 512, timeoutSeconds: 29 },
  'get-job': { memorySize: 256, timeoutSeconds: 29 },
  // The trash: a listing reads up to 10,000 rows; a restore is one file's writer; a purge deletes a folder's
  // objects a page at a time, as a delete request does.
  'trash-list': { memorySize: 512, timeoutSeconds: 29 },
  'trash-restore': { memorySize: 512, timeoutSeconds: 29 },
  'trash-purge': { memorySize: 512, timeoutSeconds: 29 },
  'trash-empty': { memorySize: 512, timeoutSeconds: 29 },
  // Answers from the guard's read of the key.
  whoami: { memorySize: 256, timeoutSeconds: 29 },
  // Signs the first 100 part URLs.
  'start-upload': { memorySize: 512, timeoutSeconds: 29 },
  // Signs at most 1,000 part URLs a request.
  'upload-parts': { memorySize: 512, timeoutSeconds: 29 },
  'complete-upload': { memorySize: 512, timeoutSeconds: 29 },
  'abort-upload': { memorySize: 256, timeoutSeconds: 29 },
  'list-keys': { memorySize: 256, timeoutSeconds: 29 },
  'create-key': { memorySize: 256, timeoutSeconds: 29 },
  'revoke-key': { memorySize: 256, timeoutSeconds: 29 },
  // One item of rules each (the drive's trust rules); revoking a rule revokes its keys, a Query and an update each.
  'create-trust': { memorySize: 256, timeoutSeconds: 29 },
  'list-trust': { memorySize: 256, timeoutSeconds: 29 },
  'revoke-trust': { memorySize: 256, timeoutSeconds: 29 },
  // Verifies a JWT (one signature) against keys it fetched once per issuer, each fetch at most 3 s.
  'exchange-token': { memorySize: 256, timeoutSeconds: 29 },
  'create-link': { memorySize: 256, timeoutSeconds: 29 },
  // A page of at most 100 links and one batched read of their files.
  'list-links': { memorySize: 256, timeoutSeconds: 29 },
  'revoke-link': { memorySize: 256, timeoutSeconds: 29 },
  // Streams a file as download does, for up to a stream's 15 minutes.
  'open-link': { memorySize: 512, timeoutSeconds: AWS_LIMITS.streamedTimeoutSeconds },
  // Webhooks: one item each, or a Query of a drive's; registering resolves the URL's host once.
  'create-webhook': { memorySize: 256, timeoutSeconds: 29 },
  'list-webhooks': { memorySize: 256, timeoutSeconds: 29 },
  'delete-webhook': { memorySize: 256, timeoutSeconds: 29 },
  'list-deliveries': { memorySize: 256, timeoutSeconds: 29 },
  // One delivery a message: a POST the receiver has 10 s to answer, and the webhook's item read.
  'webhook-worker': { memorySize: 256, timeoutSeconds: 30 },
  // Reads up to 10 pages of 100 changes a drive and queues their deliveries.
  'webhook-dispatcher': { memorySize: 256, timeoutSeconds: 60 },
  // Answers from files held in memory.
  dashboard: { memorySize: 256, timeoutSeconds: 10 },
  // Renders a document of about 60 KB from constants.
  openapi: { memorySize: 256, timeoutSeconds: 10 },
  // Reads the journal of uploads in flight and deletes what interrupted ones left.
  sweep: { memorySize: 256, timeoutSeconds: 300 },
  // The change feed: a Query every 250 ms while a long poll waits (up to 25 s, under the gateway's 29 s).
  changes: { memorySize: 256, timeoutSeconds: 29 },
  // A batch of at most 100 stream records: a state read, a mark read and a transaction a drive in it.
  sequencer: { memorySize: 256, timeoutSeconds: 60 },
  // A slice of up to 100,000 objects in memory beside every folder record, and one full scan of the nodes
  // table (four segments at a time) a run, within Lambda's 15 minutes; memory buys the CPU that parses the scan.
  'consistency-check': { memorySize: 1024, timeoutSeconds: 900 },
};

/**
 * API Gateway's own answers, in the spec's JSON shape: the stack installs them as gateway responses, and the
 * local host sends them where API Gateway would. `status` undefined keeps API Gateway's own (502, 504…).
 */
export const GATEWAY_ERRORS = {
  tooLarge: { status: 413, code: 'payload_too_large', message: `request body is larger than API Gateway and Lambda accept; one upload carries at most 4.5 MB` },
  throttled: { status: 429, code: 'rate_limited', message: 'the API is busy; retry in 1 second' },
  noRoute: { status: 404, code: 'not_found', message: 'no such route' },
  serverError: { status: undefined, code: 'internal_error', message: 'internal error; the request may be retried' },
} as const;

/**
 * What API Gateway answers itself (a failed integration's 502, a 504, a 413…), naming the request as the
 * functions' errors do: the stack renders it with `$context.requestId` as `requestId`, the host with its own.
 */
export function gatewayErrorBody(error: keyof typeof GATEWAY_ERRORS, requestId: string): string {
  const { code, message } = GATEWAY_ERRORS[error];
  return JSON.stringify({ error: { code, message, request_id: requestId } });
}

/** The header API Gateway puts on every answer, its own included: the request's id (the functions' X-Request-Id). */
export const GATEWAY_REQUEST_ID_HEADER = 'x-amzn-RequestId';

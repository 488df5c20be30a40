import { DEFAULT_TRACING, FUNCTION_SIZING } from '../../lib/aws-limits';
import type { HandlerName } from '../../lib/routes';
import { type PinnedRequest, pinned, totalCalls } from './aws-call-budget';

/**
 * What a million requests cost in AWS, line by line, from the pinned calls of each request
 * (./aws-call-budget.ts), the functions' memory (lib/aws-limits.ts), the stack's sampling rule and list
 * prices: docs/deploy.md's table, which test/unit/cost-table.test.ts holds to `costTable()`.
 */

/** On-demand list prices of us-east-1, in dollars, and when they were read. */
export const PRICES = {
  asOf: 'mid-2025',
  apiGatewayPerMillion: 3.5, // REST API, first 333 million requests a month
  lambdaRequestsPerMillion: 0.2,
  lambdaArmGbSecond: 0.0000133334, // Arm, first 7.5 billion GB-s a month
  dynamodbWruPerMillion: 0.625, // on demand, since 2024-11-01
  dynamodbRruPerMillion: 0.125,
  s3PutClassPerThousand: 0.005, // PUT, COPY, POST (DeleteObjects, CompleteMultipartUpload), LIST
  s3GetClassPerThousand: 0.0004, // GET, HEAD
  sqsPerMillion: 0.4,
  logsIngestedPerGb: 0.5, // CloudWatch Logs, standard class
  metricMonth: 0.3, // a custom metric a month, first 10,000
  xrayTracesPerMillion: 5, // traces recorded
  transferOutPerGb: 0.09, // to the internet, first 10 TB a month
} as const;

/**
 * The function's time per request, estimated (nothing deployed was measured): its own work, each AWS call on
 * the request's critical path one after another (in-region DynamoDB and S3 answer small calls in 5-20 ms), and
 * each MiB of body it moves. Lambda bills by the millisecond.
 */
export const DURATION = { baseMs: 10, perSequentialCallMs: 10, perMibMs: 40 } as const;

/** The bytes of a request's one log line at most, as CloudWatch Logs counts them (test/integration/aws-call-budget.test.ts checks it). */
export const LOG_LINE_BYTES = 1000;

/** The metrics each request line carries (functions/telemetry/metrics.ts), each by Service and by Service + Route. */
const REQUEST_METRICS = 7;

/** S3 commands billed at the PUT class and at the GET class; the others (DELETE, abort) are free. */
const S3_PUT_CLASS = new Set(['PutObject', 'CopyObject', 'CreateMultipartUpload', 'UploadPart', 'CompleteMultipartUpload', 'ListParts', 'ListObjectsV2', 'DeleteObjects']);
const S3_GET_CLASS = new Set(['GetObject', 'HeadObject']);

/** A row of the table: a pinned request, the function that serves it, and the bytes it moves. */
interface CostRow {
  label: string;
  request: string;
  handler: HandlerName;
  mib: number;
  /** Bytes sent to the client (data transfer out), besides the answer's headers. */
  bytesOut: number;
}

export const COST_ROWS: readonly CostRow[] = [
  { label: 'upload 4 KiB', request: 'upload 4 KiB into an existing folder', handler: 'upload', mib: 0, bytesOut: 0 },
  { label: 'upload 1 MiB', request: 'upload 1 MiB into an existing folder', handler: 'upload', mib: 1, bytesOut: 0 },
  { label: 'upload 4 KiB, folder written into in the last 30 s', request: 'upload 4 KiB into a folder written into in the last 30 s', handler: 'upload', mib: 0, bytesOut: 0 },
  { label: 'upload 4 KiB with an Idempotency-Key', request: 'upload 4 KiB with an Idempotency-Key', handler: 'upload', mib: 0, bytesOut: 0 },
  { label: 'download 4 KiB', request: 'download 4 KiB', handler: 'download', mib: 0, bytesOut: 4096 },
  { label: 'download 1 MiB', request: 'download 1 MiB', handler: 'download', mib: 1, bytesOut: 1024 * 1024 },
  { label: 'list a page of 10 files', request: 'list a folder of 10 files', handler: 'list', mib: 0, bytesOut: 0 },
  { label: 'list a page of 400 files', request: 'list a folder of 400 files', handler: 'list', mib: 0, bytesOut: 0 },
];

/** One request's use of each priced thing, and its cost per million requests by line item. */
export interface CostLine {
  row: CostRow;
  pin: PinnedRequest;
  memoryMb: number;
  ms: number;
  gbSeconds: number;
  s3PutClass: number;
  s3GetClass: number;
  perMillion: { apiGateway: number; lambdaRequests: number; lambdaDuration: number; dynamodb: number; s3: number; sqs: number; logs: number; xray: number; total: number };
  /** Data transfer out per million, apart: it is the same whatever the service. */
  transferOutPerMillion: number;
}

export function costLine(row: CostRow): CostLine {
  const pin = pinned(row.request);
  const memoryMb = FUNCTION_SIZING[row.handler].memorySize;
  const ms = Math.ceil(DURATION.baseMs + DURATION.perSequentialCallMs * pin.sequential + DURATION.perMibMs * row.mib);
  const gbSeconds = (memoryMb / 1024) * (ms / 1000);
  const count = (commands: Set<string>) => Object.entries(pin.s3).reduce((sum, [command, n]) => sum + (commands.has(command) ? n : 0), 0);
  const s3PutClass = count(S3_PUT_CLASS);
  const s3GetClass = count(S3_GET_CLASS);
  const million = 1_000_000;
  const items = {
    apiGateway: PRICES.apiGatewayPerMillion,
    lambdaRequests: PRICES.lambdaRequestsPerMillion,
    lambdaDuration: gbSeconds * million * PRICES.lambdaArmGbSecond,
    dynamodb: pin.rru * PRICES.dynamodbRruPerMillion + pin.wru * PRICES.dynamodbWruPerMillion,
    s3: s3PutClass * PRICES.s3PutClassPerThousand * 1000 + s3GetClass * PRICES.s3GetClassPerThousand * 1000,
    sqs: totalCalls({ dynamodb: {}, s3: {}, sqs: pin.sqs }) * PRICES.sqsPerMillion,
    logs: ((LOG_LINE_BYTES * million) / 1e9) * PRICES.logsIngestedPerGb,
    xray: DEFAULT_TRACING.sampleRate * PRICES.xrayTracesPerMillion,
  };
  const total = Object.values(items).reduce((a, b) => a + b, 0);
  return { row, pin, memoryMb, ms, gbSeconds, s3PutClass, s3GetClass, perMillion: { ...items, total }, transferOutPerMillion: ((row.bytesOut * million) / 1024 ** 3) * PRICES.transferOutPerGb };
}

const usd = (value: number) => `$${value.toFixed(2)}`;
/** A price as AWS lists it: cents always shown, and every digit it has. */
const price = (value: number) => `$${value < 0.01 ? String(value) : value.toFixed(Math.max(2, (String(value).split('.')[1] ?? '').length))}`;
const units = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** docs/deploy.md's cost section between its markers: what each request uses, then its cost per million. */
export function costTable(): string {
  const lines = COST_ROWS.map(costLine);
  const s3Of = (line: CostLine) => [line.s3PutClass ? `${line.s3PutClass} PUT-class` : '', line.s3GetClass ? `${line.s3GetClass} GET-class` : ''].filter(Boolean).join(', ') || 'none';
  const callsOf = (pin: PinnedRequest) =>
    [...Object.entries(pin.dynamodb), ...Object.entries(pin.s3), ...Object.entries(pin.sqs)].map(([command, n]) => `${n} ${command}`).join(', ');
  const out = [
    `What one request uses (warm container; the calls are test/support/aws-call-budget.ts's, the time is estimated as ${DURATION.baseMs} ms + ${DURATION.perSequentialCallMs} ms per sequential call + ${DURATION.perMibMs} ms per MiB of body):`,
    '',
    '| request | AWS calls (sequential) | by command | DynamoDB | S3 requests | Lambda |',
    '|---|---:|---|---|---|---|',
    ...lines.map((line) => `| ${line.row.label} | ${totalCalls(line.pin)} (${line.pin.sequential}) | ${callsOf(line.pin)} | ${units(line.pin.rru)} RRU, ${units(line.pin.wru)} WRU | ${s3Of(line)} | ${line.memoryMb.toLocaleString('en-US')} MB × ${line.ms} ms = ${line.gbSeconds.toFixed(3)} GB-s |`),
    '',
    `Per million requests, at the us-east-1 list prices of ${PRICES.asOf} (API Gateway REST ${price(PRICES.apiGatewayPerMillion)} per million; Lambda ${price(PRICES.lambdaRequestsPerMillion)} per million requests and ${price(PRICES.lambdaArmGbSecond)} per GB-s on Arm; DynamoDB on demand ${price(PRICES.dynamodbWruPerMillion)} per million WRU and ${price(PRICES.dynamodbRruPerMillion)} per million RRU; S3 ${price(PRICES.s3PutClassPerThousand)} per 1,000 PUT-class and ${price(PRICES.s3GetClassPerThousand)} per 1,000 GET-class requests; CloudWatch Logs ${price(PRICES.logsIngestedPerGb)} per GB ingested, one line of at most ${LOG_LINE_BYTES.toLocaleString('en-US')} bytes a request; X-Ray ${price(PRICES.xrayTracesPerMillion)} per million traces, ${DEFAULT_TRACING.sampleRate * 100} % of requests past the reservoir; the bytes of files sent, apart, at ${price(PRICES.transferOutPerGb)} per GB out to the internet):`,
    '',
    '| request | API Gateway | Lambda requests | Lambda duration | DynamoDB | S3 | CloudWatch Logs | X-Ray | total | file bytes out |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...lines.map((line) => {
      const p = line.perMillion;
      return `| ${line.row.label} | ${usd(p.apiGateway)} | ${usd(p.lambdaRequests)} | ${usd(p.lambdaDuration)} | ${usd(p.dynamodb)} | ${usd(p.s3)} | ${usd(p.logs)} | ${usd(p.xray)} | **${usd(p.total)}** | ${line.row.bytesOut ? usd(line.transferOutPerMillion) : '–'} |`;
    }),
    '',
    `Besides these: the reservoir traces up to ${DEFAULT_TRACING.reservoirPerSecond} request a second whatever the rate (at most ${(DEFAULT_TRACING.reservoirPerSecond * 86400 * 30).toLocaleString('en-US')} traces, ${usd(DEFAULT_TRACING.reservoirPerSecond * 86400 * 30 * PRICES.xrayTracesPerMillion / 1e6)}, a 30-day month; X-Ray's first 100,000 a month are free), and the metrics in the log line cost nothing per request but ${price(PRICES.metricMonth)} a month per metric: ${REQUEST_METRICS} for the service, and ${REQUEST_METRICS} more for each route that is called (${usd(REQUEST_METRICS * 2 * PRICES.metricMonth)} a month for a deployment that only uploads).`,
  ];
  return out.join('\n');
}

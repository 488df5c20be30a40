import type { Context } from 'aws-lambda';
import { AwsConsistencySource } from './aws/consistency-source';
import { dynamodb, nodes } from './aws/dynamodb';
import { requireEnv } from './aws/env';
import { objects, s3 } from './aws/s3';
import { type SliceReport, checkSlice } from './core/consistency-check';
import { logLine, metricsLine } from './core/consistency-report';

/** `DRIVE_FSCK_REPAIR=true` (cdk context `fsckRepair`) lets the check repair; anything else only reports. */
const repair = process.env.DRIVE_FSCK_REPAIR === 'true';
const graceMinutes = wholeNumberEnv('DRIVE_FSCK_GRACE_MINUTES', 60);
const sliceObjects = Math.max(1, wholeNumberEnv('DRIVE_FSCK_SLICE_OBJECTS', 100_000));
const bucket = requireEnv('DRIVE_BUCKET');
const source = new AwsConsistencySource(dynamodb, s3, { nodesTable: requireEnv('DRIVE_NODES_TABLE'), uploadsTable: requireEnv('DRIVE_UPLOADS_TABLE'), bucket });

/** Time kept back from the function's timeout for confirming, repairing and writing the cursor's last page. */
const MARGIN_MS = 30_000;
/** When no Lambda context says how long is left (a direct call): the 15 minutes of the function less the margin. */
const DEFAULT_BUDGET_MS = 15 * 60_000 - MARGIN_MS;

/**
 * Run on a schedule (EventBridge in AWS, a timer on the local host): checks the next slice of the bucket
 * against the records (functions/core/consistency-check.ts), logs what it found as one JSON line and its
 * counts as CloudWatch metrics (embedded metric format), and repairs only when `DRIVE_FSCK_REPAIR` says so.
 */
export const handler = async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SliceReport> => {
  const started = Date.now();
  const budget = context ? context.getRemainingTimeInMillis() - MARGIN_MS : DEFAULT_BUDGET_MS;
  const report = await checkSlice({ source, cursors: source, nodes, objects }, { sliceObjects, deadline: started + budget, graceMs: graceMinutes * 60_000, repair });
  console.log(JSON.stringify(logLine(report, Date.now() - started, repair)));
  console.log(JSON.stringify(metricsLine(report, Date.now() - started, bucket, new Date())));
  return report;
};

/** A whole number (0 or more) from the environment variable `name`, or `fallback`; anything else fails at cold start. */
function wholeNumberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number (got ${JSON.stringify(raw)})`);
  return value;
}

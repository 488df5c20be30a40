import type { Context } from 'aws-lambda';
import { AwsConsistencySource } from './aws/consistency-source';
import { setting } from './config';
import { MIN_DELETING_GRACE_MINUTES, type SliceReport, checkSlice } from './core/consistency-check';
import { logLine, metricsLine } from './core/consistency-report';
import { dynamodb } from './wiring/dynamodb';
import { nodes } from './wiring/nodes';
import { bucket, objects, s3 } from './wiring/objects';

/**
 * `DRIVE_FSCK_REPAIR` (cdk context `fsckRepair`): unset or `orphans` deletes confirmed orphans past the grace
 * period (the default), `true` also recreates missing parents, `off` only reports.
 */
const repair = setting('fsckRepair');
const graceMinutes = setting('fsckGraceMinutes');
const sliceObjects = setting('fsckSliceObjects');
// The local host (its emulators' endpoint set) runs the check with no grace period in tests; in AWS none is below the floor.
if (repair !== 'off' && graceMinutes < MIN_DELETING_GRACE_MINUTES && !setting('dynamodbEndpoint')) {
  throw new Error(`DRIVE_FSCK_GRACE_MINUTES must be at least ${MIN_DELETING_GRACE_MINUTES} while DRIVE_FSCK_REPAIR deletes orphans (got ${graceMinutes})`);
}
const source = new AwsConsistencySource(dynamodb, s3, { nodesTable: setting('nodesTable'), uploadsTable: setting('uploadsTable'), bucket });

/** Time kept back from the function's timeout for confirming, repairing and writing the cursor's last page. */
const MARGIN_MS = 30_000;
/** When no Lambda context says how long is left (a direct call): the 15 minutes of the function less the margin. */
const DEFAULT_BUDGET_MS = 15 * 60_000 - MARGIN_MS;

/**
 * Run on a schedule (EventBridge in AWS, a timer on the local host): checks the next slice of the bucket
 * against the records (functions/core/consistency-check.ts), logs what it found as one JSON line and its
 * counts as CloudWatch metrics (embedded metric format), and repairs what `DRIVE_FSCK_REPAIR` allows (by
 * default, deletes orphaned objects older than the grace period).
 */
export const handler = async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SliceReport> => {
  const started = Date.now();
  const budget = context ? context.getRemainingTimeInMillis() - MARGIN_MS : DEFAULT_BUDGET_MS;
  const report = await checkSlice({ source, cursors: source, candidates: source, nodes, objects }, { sliceObjects, deadline: started + budget, graceMs: graceMinutes * 60_000, repair });
  console.log(JSON.stringify(logLine(report, Date.now() - started, repair)));
  console.log(JSON.stringify(metricsLine(report, Date.now() - started, bucket, new Date())));
  return report;
};

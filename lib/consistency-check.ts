import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { CHECK_CANDIDATE_PREFIX, CHECK_CURSOR_ID } from '../functions/aws/consistency-source';
import { MIN_DELETING_GRACE_MINUTES, type RepairMode } from '../functions/core/consistency-check';
import { environmentOf } from '../functions/config';
import { FUNCTION_SIZING } from './aws-limits';
import { DriveFunction, type LogLevel } from './drive-function';
import { SCHEDULED } from './routes';

export interface ConsistencyCheckProps {
  nodes: ITable;
  uploads: ITable;
  bucket: IBucket;
  /** The stack's function environment (table and bucket names). */
  environment: Record<string, string>;
  logRetention: RetentionDays;
  /** The lowest level the function logs, as the stack's other functions. @default 'INFO' */
  logLevel?: LogLevel;
  /** Lambda's platform lines (START, REPORT) besides the function's own. @default false */
  platformLogs?: boolean;
  /** How often a slice is checked: a whole number of hours, 1 to 72. @default 24 */
  everyHours?: number;
  /**
   * What the check repairs (DRIVE_FSCK_REPAIR): `orphans` deletes confirmed orphaned objects older than the grace
   * period (the role may delete objects); `all` also recreates missing parent folders (and may write the nodes
   * table); `off` only reports (the role only reads). @default 'orphans'
   */
  repair?: RepairMode;
  /**
   * How old an unreferenced object must be, and how long ago an earlier run must have confirmed it, before the
   * check deletes it (DRIVE_FSCK_GRACE_MINUTES, cdk context `fsckGraceMinutes`): at least
   * `MIN_DELETING_GRACE_MINUTES` unless repair is `off`. @default the function's (60)
   */
  graceMinutes?: number;
}

/**
 * RepairedObjects (orphans deleted) in one period at or above which the RepairedObjectsHigh alarm fires: a killed
 * upload leaves one object, so this many in a period means many killed uploads or deletions that are wrong.
 * Below the per-run cap (MAX_DELETIONS_PER_RUN, 1,000), which stops a run from deleting at all.
 */
export const REPAIRED_OBJECTS_ALARM_THRESHOLD = 100;

const CHECK = SCHEDULED.find((fn) => fn.handler === 'consistency-check')!;

/**
 * fsck on a schedule (functions/consistency-check.ts): the function, the EventBridge rule that runs it, a
 * role that reads the bucket and the nodes table, writes its own cursor item, deletes orphaned objects (unless
 * repair is `off`) and recreates folders (repair `all`), and three alarms: findings it could not repair, many
 * orphans deleted in one period, and a check that stopped running.
 */
export class ConsistencyCheck extends Construct {
  readonly function: DriveFunction;
  readonly rule: Rule;
  readonly alarms: Alarm[];

  constructor(scope: Construct, id: string, props: ConsistencyCheckProps) {
    super(scope, id);
    const everyHours = props.everyHours ?? CHECK.everyMinutes / 60;
    // Two periods without a run alarm; CloudWatch evaluates at most seven days of hour-long periods.
    if (!Number.isInteger(everyHours) || everyHours < 1 || everyHours > 72) throw new Error(`fsckEveryHours must be a whole number of hours from 1 to 72 (got ${everyHours})`);
    const stack = Stack.of(this);
    const { nodes, uploads, bucket } = props;
    const repair = props.repair ?? 'orphans';
    const grace = props.graceMinutes;
    if (grace !== undefined && (!Number.isInteger(grace) || grace < 0)) throw new Error(`fsckGraceMinutes must be a whole number of minutes (got ${grace})`);
    if (repair !== 'off' && grace !== undefined && grace < MIN_DELETING_GRACE_MINUTES) {
      throw new Error(`fsckGraceMinutes must be at least ${MIN_DELETING_GRACE_MINUTES} while fsckRepair deletes orphans (got ${grace}); set fsckRepair=off to report only`);
    }

    // The function's ids sit on the stack, beside the other functions' (ConsistencyCheckFunction…).
    this.function = new DriveFunction(stack, 'ConsistencyCheckFunction', {
      entry: CHECK.entry,
      memorySize: FUNCTION_SIZING['consistency-check'].memorySize,
      timeout: Duration.seconds(FUNCTION_SIZING['consistency-check'].timeoutSeconds),
      logRetention: props.logRetention,
      logRemovalPolicy: RemovalPolicy.DESTROY,
      logLevel: props.logLevel,
      platformLogs: props.platformLogs,
      environment: {
        ...props.environment,
        ...environmentOf({ fsckRepair: repair === 'all' ? 'true' : repair, fsckGraceMinutes: grace === undefined ? undefined : String(grace) }),
      },
    });
    // Reads: the nodes scan and the confirming reads, the sessions and journal (Scan), the listing and
    // HeadObject (GetObject; ListBucket makes a missing object NotFound rather than AccessDenied).
    this.function.allowTable(nodes, 'Scan', 'GetItem', 'BatchGetItem').allowTable(uploads, 'Scan').allowBucket(bucket, 'ListBucket').allowObjects(bucket, 'GetObject');
    // Its one write to a table but repair's: the cursor item, and no other item of the uploads table.
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        resources: [uploads.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [CHECK_CURSOR_ID] } },
      }),
    );
    // Deleting repair notes orphan candidates between runs (one item each, found by its Scan) and forgets them:
    // those items only.
    if (repair !== 'off') {
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: ['dynamodb:BatchWriteItem'],
          resources: [uploads.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${CHECK_CANDIDATE_PREFIX}*`] } },
        }),
      );
    }
    // Deleting orphans, by default: what a one-file upload killed between its bytes and its record leaves
    // (docs/hot-path-design.md). DeleteObjects is DeleteObject per key; the bucket's objects only.
    if (repair !== 'off') this.function.allowObjects(bucket, 'DeleteObject');
    if (repair === 'all') {
      // Recreating missing folders as ensureFolders does: read (BatchGetItem), create (UpdateItem), and on a
      // conflict remove its unused ones (Query, DeleteItem).
      this.function.allowTable(nodes, 'UpdateItem', 'Query', 'DeleteItem');
    }
    Validations.of(this.function.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(bucket.node.defaultChild as never)}.Arn>/*]`,
      reason: 'The check reads (and, unless repair is off, deletes orphaned) objects named by file id; the statement is limited to this bucket and to the actions it calls.',
    });

    this.rule = new Rule(stack, 'ConsistencyCheckFunctionSchedule', {
      schedule: Schedule.rate(Duration.hours(everyHours)),
      targets: [new LambdaFunction(this.function, { retryAttempts: 0 })],
    });

    const period = Duration.hours(everyHours);
    const metric = (metricName: string, statistic: string) => new Metric({ namespace: 'Drive', metricName, dimensionsMap: { Bucket: bucket.bucketName }, period, statistic });
    this.alarms = [
      new Alarm(stack, 'ConsistencyFindings', {
        metric: metric('ConsistencyFindings', 'Maximum'),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: 'The scheduled consistency check found what it could not repair: records without bytes, orphaned objects it did not delete, or a broken tree; its log line names them (docs/consistency-check.md)',
      }),
      new Alarm(stack, 'RepairedObjectsHigh', {
        metric: metric('RepairedObjects', 'Sum'),
        threshold: REPAIRED_OBJECTS_ALARM_THRESHOLD,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: `The scheduled consistency check deleted ${REPAIRED_OBJECTS_ALARM_THRESHOLD} or more orphaned objects in one period (${everyHours} h): many killed uploads, or records it could not see; its log lines name them (docs/consistency-check.md, "Brakes")`,
      }),
      new Alarm(stack, 'ConsistencyCheckNotRunning', {
        metric: metric('ConsistencyCheckRuns', 'Sum'),
        threshold: 1,
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
        comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.BREACHING,
        alarmDescription: `The scheduled consistency check finished no run in two of its periods (${everyHours} h each): it fails, times out or is not scheduled`,
      }),
    ];
  }
}

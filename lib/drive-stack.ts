import { createHash } from 'node:crypto';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  Cors,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestValidator,
  ResponseTransferMode,
  ResponseType,
  RestApi,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ACCESS_PARTITION_KEY, ACCESS_TTL_ATTRIBUTE, CHANGES_PARTITION_KEY, CHANGES_SORT_KEY, CHANGES_TTL_ATTRIBUTE, KEYS_BY_DRIVE_INDEX, LINKS_BY_DRIVE_INDEX, NODES_PARTITION_KEY, NODES_SORT_KEY, UPLOADS_PARTITION_KEY, UPLOADS_TTL_ATTRIBUTE } from '../functions/aws/schema';
import { environmentOf } from '../functions/config';
import { CORS_REQUEST_HEADERS } from '../functions/http/cors';
import { DEFAULT_TRACING, FUNCTION_SIZING, type GATEWAY_ERRORS, gatewayErrorBody } from './aws-limits';
import { AlarmTopic } from './alarm-topic';
import { ConsistencyCheck } from './consistency-check';
import type { RepairMode } from '../functions/core/consistency-check';
import { DriveDashboard, type DriveMetricsScope, driveMetric } from './drive-dashboard';
import { DriveFunction, type LogLevel } from './drive-function';
import { BINARY_MEDIA_TYPES, CONTRACT_ROUTES, DASHBOARD_ROUTES, type HandlerName, LINK_ROUTES, QUEUE_WORKERS, ROUTES, SCHEDULED, SEQUENCER, TOKEN_ROUTES, type ScheduledFunction } from './routes';

export interface DriveStackProps extends StackProps {
  /** API Gateway stage, the first segment of every URL. @default 'v1' */
  stageName?: string;
  /** How long function and access logs are kept. @default one month */
  logRetention?: RetentionDays;
  /** What `cdk destroy` does to the bucket and tables (files and records). @default RETAIN */
  dataRemovalPolicy?: RemovalPolicy;
  /** DynamoDB deletion protection on both tables. @default true */
  deletionProtection?: boolean;
  /** Keep earlier versions of every object in S3 (an undo for deletes, billed as storage). @default false */
  bucketVersioning?: boolean;
  /** How many days the change feed keeps changes (`DRIVE_CHANGES_RETENTION_DAYS`). @default 7 */
  changesRetentionDays?: number;
  /** Days a deleted or replaced file stays in the drive's trash (cdk context `trashDays`; `0` deletes at once). @default 7 */
  trashDays?: number;
  /**
   * Origins allowed to call the API from a browser (CORS, preflight included), and to PUT large-upload parts
   * to the bucket; `['*']` for any. The dashboard, served by the API itself, needs none. @default none
   */
  corsOrigins?: string[];
  /** Stage-wide throttling, a coarse backstop above the per-key buckets. @default 200 requests/s, bursts of 400 */
  throttle?: { rateLimit: number; burstLimit: number };
  /** Large uploads: the largest file accepted and how long a session's part URLs last. @default 5 TiB, 1 hour */
  largeUploads?: { maxFileBytes?: number; expiry?: Duration };
  /** Serve the API on a custom domain with an ACM certificate in the stack's region. */
  domain?: { domainName: string; certificateArn: string; basePath?: string };
  /** The scheduled consistency check (docs/consistency-check.md): its period, and what it repairs. @default every 24 hours, deleting orphaned objects past the grace period */
  consistencyCheck?: { everyHours?: number; repair?: RepairMode; graceMinutes?: number };
  /** The lowest level the functions log (Lambda's application log level, which the code reads too). @default 'INFO' */
  logLevel?: LogLevel;
  /** An address that every alarm is e-mailed to, through the alarm topic. @default none (subscribe to the topic yourself) */
  alarmEmail?: string;
  /** The CloudWatch namespace of the functions' own metrics. @default 'Drive' */
  metricsNamespace?: string;
  /**
   * X-Ray sampling of the API's requests, by a sampling rule on its stage: `reservoirPerSecond` requests a
   * second are traced, then `sampleRate` (0 to 1) of the rest. An admin key's `X-Drive-Trace: 1` traces its
   * request whatever the rule decides. @default 1 a second, then 1 % (0.01)
   */
  tracing?: { sampleRate?: number; reservoirPerSecond?: number };
  /**
   * Log lines beyond each request's one line (docs/operations.md): API Gateway's access log line per request
   * (its own answers too: 404s, throttles, 413s), and Lambda's platform lines per invocation (`platform.start`,
   * `platform.report` with billed duration and memory used). @default neither
   */
  extraLogs?: { accessLogs?: boolean; platformLogs?: boolean };
}

/** The sampling rule's priority: rules are tried from 1 up, X-Ray's default rule last (10,000). */
export const SAMPLING_RULE_PRIORITY = 1000;

/** Memory and timeout per function, from the limits table the local host reads too. */
const SIZING = (handler: HandlerName) => ({
  memorySize: FUNCTION_SIZING[handler].memorySize,
  timeout: Duration.seconds(FUNCTION_SIZING[handler].timeoutSeconds),
});

/** Where the dashboard's files sit in the dashboard function's bundle (Lambda unpacks it in /var/task). */
const DASHBOARD_BUNDLE_DIR = 'dashboard';

const JSON_TYPE = 'application/json';
/** API Gateway's own request id, as a gateway response's template names it. */
const GATEWAY_REQUEST_ID = '$context.requestId';
const errorBody = (code: string, message: string) => `{"error":{"code":"${code}","message":${message},"request_id":"${GATEWAY_REQUEST_ID}"}}`;
// The host renders the same body with its own request id (lib/local/invoke.ts).
const fixedErrorBody = (error: keyof typeof GATEWAY_ERRORS) => gatewayErrorBody(error, GATEWAY_REQUEST_ID);

/** Drive in one stack: the REST API, one function per endpoint, the bucket, the two tables and the alarms. */
export class DriveStack extends Stack {
  readonly api: RestApi;
  readonly alarms: Alarm[] = [];
  /** Delete-job messages the worker failed five times; the alarm `JobsDeadLettered` watches it. */
  readonly deadLetters: Queue;
  /** Webhook deliveries (FIFO, one message group a webhook), and those the worker crashed on 100 times (`DeliveriesDeadLettered`). */
  readonly deliveries: Queue;
  readonly deliveryDeadLetters: Queue;
  readonly functions: Record<HandlerName, DriveFunction>;
  /** The topic every alarm of the stack notifies, alarms added after this constructor included (lib/alarm-topic.ts). */
  readonly alarmTopic: Topic;
  /** Where the functions' embedded metrics go: the namespace, and the stack's name as their `Service` dimension. */
  readonly metrics: DriveMetricsScope;

  constructor(scope: Construct, id: string, props: DriveStackProps = {}) {
    super(scope, id, props);
    const dataRemovalPolicy = props.dataRemovalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    const corsOrigins = props.corsOrigins ?? [];
    const logLevel = props.logLevel ?? 'INFO';
    const platformLogs = props.extraLogs?.platformLogs ?? false;
    this.metrics = { namespace: props.metricsNamespace ?? 'Drive', service: this.stackName };
    this.alarmTopic = new AlarmTopic(this, 'Alarms', { email: props.alarmEmail }).topic;

    const accessLogsBucket = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      // S3 keeps delivering logs after the stack is gone, so this bucket could never be emptied for a destroy.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const bucket = new Bucket(this, 'Files', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: props.bucketVersioning ?? false,
      serverAccessLogsBucket: accessLogsBucket,
      serverAccessLogsPrefix: 'files/',
      // Large uploads nobody completed or aborted: their parts go a day after they started.
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      // CORS for large-upload parts comes once the API's own origin is known (below).
      removalPolicy: dataRemovalPolicy,
    });

    const tableDefaults = {
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.deletionProtection ?? true,
      removalPolicy: dataRemovalPolicy,
    };
    const nodes = new Table(this, 'Nodes', {
      ...tableDefaults,
      partitionKey: { name: NODES_PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: NODES_SORT_KEY, type: AttributeType.STRING },
      // Every write of a record or folder, by anyone, once and in order per item: the change feed's source.
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    // The change feed's log (docs/change-feed-design.md): each drive's changes by position, its sequencer's state,
    // the marks of file moves; and the webhooks beside it (their count, dispatcher position, failed deliveries).
    const changes = new Table(this, 'Changes', {
      ...tableDefaults,
      partitionKey: { name: CHANGES_PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: CHANGES_SORT_KEY, type: AttributeType.STRING },
      timeToLiveAttribute: CHANGES_TTL_ATTRIBUTE,
    });
    const access = new Table(this, 'Access', {
      ...tableDefaults,
      partitionKey: { name: ACCESS_PARTITION_KEY, type: AttributeType.STRING },
      timeToLiveAttribute: ACCESS_TTL_ATTRIBUTE,
    });
    // GET /drive/keys and revoke query a drive's keys rather than scan every drive's.
    access.addGlobalSecondaryIndex({
      indexName: KEYS_BY_DRIVE_INDEX.name,
      partitionKey: { name: KEYS_BY_DRIVE_INDEX.partitionKey, type: AttributeType.STRING },
      sortKey: { name: KEYS_BY_DRIVE_INDEX.sortKey, type: AttributeType.STRING },
    });
    // GET /drive/links queries a drive's share links, in path order (a link itself is found by its key).
    access.addGlobalSecondaryIndex({
      indexName: LINKS_BY_DRIVE_INDEX.name,
      partitionKey: { name: LINKS_BY_DRIVE_INDEX.partitionKey, type: AttributeType.STRING },
      sortKey: { name: LINKS_BY_DRIVE_INDEX.sortKey, type: AttributeType.STRING },
    });

    const uploads = new Table(this, 'Uploads', {
      ...tableDefaults,
      partitionKey: { name: UPLOADS_PARTITION_KEY, type: AttributeType.STRING },
      timeToLiveAttribute: UPLOADS_TTL_ATTRIBUTE,
    });

    // Delete jobs: the queue feeding the worker, and where a message goes after the worker failed it five times.
    const worker = QUEUE_WORKERS[0];
    const deadLetters = new Queue(this, 'JobsDeadLetters', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    const jobsQueue = new Queue(this, 'Jobs', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // AWS's advice for a queue a function reads: hidden six times the function's timeout while a step runs.
      visibilityTimeout: Duration.seconds(6 * FUNCTION_SIZING[worker.handler].timeoutSeconds),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: worker.maxReceives },
    });
    this.deadLetters = deadLetters;

    // Webhook deliveries: FIFO, one message group a webhook (its deliveries one at a time, in the feed's order),
    // deduplicated by delivery id. A failed delivery is hidden for its backoff by the worker itself
    // (ChangeMessageVisibility) for 24 hours from when it was queued (SentTimestamp), so a group behind a dead
    // receiver is written off in turn; the queue keeps messages SQS's longest (14 days) so that none expires
    // unrecorded. The dead-letter queue only catches a worker that crashes on a message.
    const deliveryWorker = QUEUE_WORKERS.find((w) => w.handler === 'webhook-worker')!;
    this.deliveryDeadLetters = new Queue(this, 'DeliveriesDeadLetters', { fifo: true, encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    this.deliveries = new Queue(this, 'Deliveries', {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      visibilityTimeout: Duration.seconds(6 * FUNCTION_SIZING[deliveryWorker.handler].timeoutSeconds),
      deadLetterQueue: { queue: this.deliveryDeadLetters, maxReceiveCount: deliveryWorker.maxReceives },
    });

    // The functions' environment, named through the one table of settings (functions/config.ts).
    const metricsEnvironment = environmentOf({ metricsNamespace: this.metrics.namespace, metricsService: this.metrics.service });
    const environment = {
      ...environmentOf({
        nodesTable: nodes.tableName,
        accessTable: access.tableName,
        bucket: bucket.bucketName,
        uploadsTable: uploads.tableName,
        changesTable: changes.tableName,
        changesRetentionDays: props.changesRetentionDays === undefined ? undefined : String(props.changesRetentionDays),
        maxFileBytes: props.largeUploads?.maxFileBytes ? String(props.largeUploads.maxFileBytes) : undefined,
        uploadExpirySeconds: props.largeUploads?.expiry ? String(props.largeUploads.expiry.toSeconds()) : undefined,
        keyCacheSeconds: '30',
        corsOrigins: corsOrigins.length > 0 ? corsOrigins.join(',') : undefined,
        jobQueueUrl: jobsQueue.queueUrl,
        deliveryQueueUrl: this.deliveries.queueUrl,
        trashDays: props.trashDays === undefined ? undefined : String(props.trashDays),
      }),
      ...metricsEnvironment,
    };
    const make = (handler: HandlerName): DriveFunction => {
      const route = [...ROUTES, ...LINK_ROUTES, ...TOKEN_ROUTES].find((r) => r.handler === handler)!;
      const fn = new DriveFunction(this, fnId(handler), {
        entry: route.entry,
        ...SIZING(handler),
        logRetention,
        logRemovalPolicy: RemovalPolicy.DESTROY,
        environment,
        logLevel,
        platformLogs,
      });
      // Every API handler looks up keys (a share link's, its link) and takes rate-limit tokens.
      return fn.allowTable(access, 'GetItem', 'UpdateItem');
    };
    // The dashboard's page: static files copied into its bundle; no table, no bucket, no key.
    const dashboard = new DriveFunction(this, fnId('dashboard'), {
      entry: DASHBOARD_ROUTES[0].entry,
      ...SIZING('dashboard'),
      logRetention,
      logRemovalPolicy: RemovalPolicy.DESTROY,
      logLevel,
      platformLogs,
      environment: {
        ...metricsEnvironment,
        ...environmentOf({
          dashboardDir: `/var/task/${DASHBOARD_BUNDLE_DIR}`,
          // The page sends large-upload parts to the presigned URLs, which name the bucket's regional endpoint.
          partUploadOrigin: `https://${bucket.bucketName}.s3.${this.region}.${this.urlSuffix}`,
        }),
      },
      copyIntoBundle: { from: 'dashboard', to: DASHBOARD_BUNDLE_DIR },
    });
    const consistencyCheck = new ConsistencyCheck(this, 'ConsistencyCheck', { nodes, uploads, bucket, environment, logRetention, logLevel, platformLogs, ...props.consistencyCheck });
    this.alarms.push(...consistencyCheck.alarms);
    // The API's OpenAPI document, rendered from constants: no table, no bucket, no key.
    const openapi = new DriveFunction(this, fnId('openapi'), {
      entry: CONTRACT_ROUTES[0].entry,
      ...SIZING('openapi'),
      logRetention,
      logRemovalPolicy: RemovalPolicy.DESTROY,
      logLevel,
      platformLogs,
      environment: { ...metricsEnvironment },
    });
    // Exactly the calls each handler's code path makes (functions/core + functions/aws).
    this.functions = {
      // The write-ordering protocol (functions/core/ports.ts): folders and destinations read in batches, folders
      // made (UpdateItem), records written, folders read again; a failed request undoes its records (DeleteItem,
      // PutItem) and removes folders nobody used as an empty-folder delete does (a job noted and ended in the
      // uploads table: PutItem, UpdateItem; the folder marked: UpdateItem; Query; DeleteItem). The journal notes
      // the bytes first (uploads table); a failed upload that replaced a record still pending asks whether that
      // record's entry is open (GetItem) before it puts it back.
      upload: make('upload')
        .allowTable(nodes, 'BatchGetItem', 'PutItem', 'UpdateItem', 'GetItem', 'DeleteItem', 'Query')
        .allowTable(uploads, 'PutItem', 'BatchWriteItem', 'UpdateItem', 'GetItem')
        .allowObjects(bucket, 'PutObject', 'DeleteObject'),
      // ListBucket makes S3 answer a missing key with NoSuchKey rather than AccessDenied, which the download
      // needs to tell a file replaced mid-read (read the record again) from a failure.
      download: make('download').allowTable(nodes, 'GetItem', 'BatchGetItem').allowObjects(bucket, 'GetObject').allowBucket(bucket, 'ListBucket'),
      // BatchGetItem reads the folders above the one listed (a delete may have taken one).
      list: make('list').allowTable(nodes, 'GetItem', 'BatchGetItem', 'Query'),
      // Query (here and in upload): a failed mkdir -p keeps a folder another upload has stored a file in; the
      // folders it removes are marked first under a job (uploads table: PutItem, then UpdateItem to end it).
      'create-folder': make('create-folder').allowTable(nodes, 'BatchGetItem', 'UpdateItem', 'DeleteItem', 'Query').allowTable(uploads, 'PutItem', 'UpdateItem'),
      // UpdateItem marks folders as being deleted; each record goes by a conditional DeleteItem; a record
      // replaced meanwhile is read again (BatchGetItem).
      // The job is noted (PutItem), advanced and ended (UpdateItem) in the uploads table, and sent on to the worker;
      // the drive's list of background jobs is read first (GetItem, and its jobs when full) and noted at hand-off.
      // With trash on, the folder's row and members are written (PutItem), files go into it by transaction
      // (DeleteItem, PutItem, ConditionCheckItem; a pending record's note in the uploads table), and the row is
      // filled (UpdateItem, PutItem of its due entry).
      'delete-folder': make('delete-folder')
        .allowTable(nodes, 'GetItem', 'Query', 'DeleteItem', 'UpdateItem', 'PutItem', 'ConditionCheckItem')
        .allowTable(uploads, 'PutItem', 'UpdateItem', 'GetItem')
        .allowObjects(bucket, 'DeleteObject')
        .allowSend(jobsQueue),
      // Files and the folders above them read in batches (BatchGetItem), each record removed conditionally on its
      // id with a journal entry for its bytes, in one transaction (DeleteItem, PutItem), one replaced meanwhile
      // read again (GetItem); the journal is closed after (BatchWriteItem).
      // With trash on, the records become trash rows and due entries in that transaction (PutItem).
      'delete-files': make('delete-files')
        .allowTable(nodes, 'BatchGetItem', 'GetItem', 'DeleteItem', 'PutItem')
        .allowTable(uploads, 'PutItem', 'BatchWriteItem')
        .allowObjects(bucket, 'DeleteObject'),
      // A file moves in one transaction (its items: PutItem, DeleteItem, ConditionCheckItem) across the nodes and
      // uploads tables; the bytes it replaces are noted in the journal (PutItem) and deleted. A folder move reads
      // (BatchGetItem, Query, GetItem), marks (UpdateItem), makes folders (PutItem, UpdateItem), removes emptied
      // ones (DeleteItem), and notes, advances and sends its job as a delete does.
      move: make('move')
        .allowTable(nodes, 'BatchGetItem', 'GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem')
        .allowTable(uploads, 'ConditionCheckItem', 'PutItem', 'UpdateItem', 'BatchWriteItem', 'GetItem')
        // A file move's mark, in its transaction (docs/change-feed-design.md).
        .allowTable(changes, 'PutItem')
        .allowObjects(bucket, 'DeleteObject')
        .allowSend(jobsQueue),
      // A copy is an upload whose bytes S3 copies: the journal first (PutItem, then BatchWriteItem to close), the
      // object copied (GetObject on the source, PutObject on the copy; a copy in parts creates, completes and
      // on failure aborts a multipart upload), then the record written as upload writes it.
      // A folder copy notes, advances and reads its job (uploads table) and sends it on, as a delete does.
      copy: make('copy')
        .allowTable(nodes, 'BatchGetItem', 'PutItem', 'UpdateItem', 'GetItem', 'DeleteItem', 'Query')
        .allowTable(uploads, 'PutItem', 'BatchWriteItem', 'UpdateItem', 'GetItem')
        .allowObjects(bucket, 'GetObject', 'PutObject', 'DeleteObject', 'AbortMultipartUpload')
        .allowSend(jobsQueue),
      // The log read (Query: the changes after a position, the newest and oldest position).
      changes: make('changes').allowTable(changes, 'Query'),
      'get-job': make('get-job').allowTable(uploads, 'GetItem'),
      // The trash (issue 28): its rows read newest first (Query).
      'trash-list': make('trash-list').allowTable(nodes, 'Query'),
      // A restore is a writer: the row read (GetItem), the folders above and the destination (BatchGetItem),
      // missing folders made (UpdateItem; a failure removes them as a writer does: Query, DeleteItem, and its
      // jobs in the uploads table), one transaction (PutItem, DeleteItem, ConditionCheckItem; a note PutItem).
      'trash-restore': make('trash-restore')
        .allowTable(nodes, 'GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem')
        .allowTable(uploads, 'PutItem', 'UpdateItem', 'GetItem'),
      // A purge: the row read and claimed (GetItem, UpdateItem, PutItem of a due entry), the bytes deleted, the
      // members (Query, BatchWriteItem) and the row with its due entry (DeleteItem) removed.
      'trash-purge': make('trash-purge').allowTable(nodes, 'GetItem', 'UpdateItem', 'PutItem', 'Query', 'BatchWriteItem', 'DeleteItem').allowObjects(bucket, 'DeleteObject'),
      'trash-empty': make('trash-empty').allowTable(nodes, 'GetItem', 'UpdateItem', 'PutItem', 'Query', 'BatchWriteItem', 'DeleteItem').allowObjects(bucket, 'DeleteObject'),
      // Nothing but what the guard reads and writes: the key (GetItem) and its rate-limit bucket (UpdateItem).
      whoami: make('whoami'),
      // A step: the job read (GetItem) and advanced (UpdateItem), the tree deleted as the request does, moved
      // as the move request does (its transactions' items), or copied as the copy request does (the journal,
      // the objects copied, the records written), the job sent on.
      'job-worker': this.queueWorker(worker, jobsQueue, environment, logRetention, { logLevel, platformLogs })
        .allowTable(uploads, 'GetItem', 'UpdateItem', 'ConditionCheckItem', 'PutItem', 'BatchWriteItem')
        .allowTable(nodes, 'BatchGetItem', 'GetItem', 'Query', 'PutItem', 'DeleteItem', 'UpdateItem', 'ConditionCheckItem')
        .allowTable(changes, 'PutItem')
        .allowObjects(bucket, 'DeleteObject', 'GetObject', 'PutObject', 'AbortMultipartUpload')
        .allowSend(jobsQueue),
      // PutObject covers CreateMultipartUpload and the UploadPart URLs it signs; abort undoes a failed start.
      'start-upload': make('start-upload').allowTable(nodes, 'GetItem').allowTable(uploads, 'PutItem').allowObjects(bucket, 'PutObject', 'AbortMultipartUpload'),
      // The session read (GetItem); PutObject covers the UploadPart URLs it signs.
      'upload-parts': make('upload-parts').allowTable(uploads, 'GetItem').allowObjects(bucket, 'PutObject'),
      // ListMultipartUploadParts checks the parts, PutObject completes, GetObject is the HeadObject of the result
      // (ListBucket makes a missing object NotFound rather than AccessDenied); the rest writes the record as an
      // upload does, or discards an expired upload. Sessions are claimed and marked `recording` (UpdateItem),
      // read when a claim is refused (GetItem), and ended (DeleteItem).
      'complete-upload': make('complete-upload')
        .allowTable(uploads, 'UpdateItem', 'GetItem', 'DeleteItem', 'PutItem')
        .allowTable(nodes, 'BatchGetItem', 'PutItem', 'UpdateItem', 'GetItem', 'DeleteItem', 'Query')
        .allowObjects(bucket, 'ListMultipartUploadParts', 'PutObject', 'GetObject', 'DeleteObject', 'AbortMultipartUpload')
        .allowBucket(bucket, 'ListBucket'),
      // The session claimed and ended; its parts aborted (an assembled object is the consistency check's).
      'abort-upload': make('abort-upload')
        .allowTable(uploads, 'UpdateItem', 'GetItem', 'DeleteItem')
        .allowObjects(bucket, 'AbortMultipartUpload'),
      // A Query of the keys-by-drive index: the drive's keys, never a scan of every drive's.
      'list-keys': make('list-keys').allowTable(access, 'Query'),
      // The drive's roster of live admin keys (one item) keeps the last-admin rule atomic; a drive from before
      // the roster gets one made from a Scan of its keys.
      'create-key': make('create-key').allowTable(access, 'PutItem', 'Scan'),
      // The key is found among the drive's (Query); a drive from before the roster gets one made from a Scan.
      'revoke-key': make('revoke-key').allowTable(access, 'Query', 'Scan', 'PutItem'),
      // The drive's trust rules are one item: read (GetItem) and written whole (PutItem), conditional on its version.
      'create-trust': make('create-trust').allowTable(access, 'PutItem'),
      'list-trust': make('list-trust'),
      // The rule marked revoked (PutItem of the rules item), then its keys found (Query of the keys-by-drive
      // index) and revoked (UpdateItem).
      'revoke-trust': make('revoke-trust').allowTable(access, 'PutItem', 'Query'),
      // The drive's rules read (GetItem), the key stored (PutItem) and, under a rule revoked meanwhile, taken
      // back (UpdateItem); the rate-limit buckets (UpdateItem). It reaches the issuers over the internet (their
      // discovery documents and JWKS, https only): Lambda's own egress, no VPC.
      'exchange-token': make('exchange-token').allowTable(access, 'PutItem'),
      // The file and the folders above it read (GetItem, BatchGetItem), then the link stored (PutItem).
      'create-link': make('create-link').allowTable(nodes, 'GetItem', 'BatchGetItem').allowTable(access, 'PutItem'),
      // A Query of the links-by-drive index, and one batched read of the page's files (a replaced file's link is left out).
      'list-links': make('list-links').allowTable(access, 'Query').allowTable(nodes, 'BatchGetItem'),
      // One conditional DeleteItem of the link's item; for a key's links, a Query of the links-by-drive index first.
      'revoke-link': make('revoke-link').allowTable(access, 'Query', 'DeleteItem'),
      // The link read by its key (GetItem) and its bucket updated (UpdateItem); then a download's reads.
      'open-link': make('open-link').allowTable(nodes, 'GetItem', 'BatchGetItem').allowObjects(bucket, 'GetObject').allowBucket(bucket, 'ListBucket'),
      // Webhooks (issue 27): the drive's items in the changes table. Registering reads the log's head (Query),
      // then in one transaction raises the drive's webhook count (UpdateItem), stores the webhook (PutItem) and
      // notes its drive in the hookdrives item (UpdateItem ADD); the base UpdateItem is on the access table only.
      'create-webhook': make('create-webhook').allowTable(changes, 'Query', 'PutItem', 'UpdateItem'),
      'list-webhooks': make('list-webhooks').allowTable(changes, 'Query'),
      // The webhook deleted (DeleteItem) and its drive's count lowered (UpdateItem) in one transaction, then its
      // failed deliveries found (Query) and deleted (BatchWriteItem).
      'delete-webhook': make('delete-webhook').allowTable(changes, 'DeleteItem', 'UpdateItem', 'Query', 'BatchWriteItem'),
      'list-deliveries': make('list-deliveries').allowTable(changes, 'GetItem', 'Query'),
      // A delivery: the webhook read (GetItem), a failure written off (PutItem); its backoff is the event
      // source's ChangeMessageVisibility. It reaches receivers over the internet: Lambda's own egress, no VPC.
      'webhook-worker': this.queueWorker(deliveryWorker, this.deliveries, environment, logRetention, { logLevel, platformLogs }).allowTable(changes, 'GetItem', 'PutItem'),
      // The drives with webhooks and each drive's webhooks and position read (GetItem, Query), the log read
      // (Query), the position advanced (PutItem), the deliveries sent.
      'webhook-dispatcher': this.scheduled(SCHEDULED.find((fn) => fn.handler === 'webhook-dispatcher')!, environment, logRetention, { logLevel, platformLogs })
        .allowTable(changes, 'GetItem', 'Query', 'PutItem')
        .allowSend(this.deliveries),
      dashboard,
      openapi,
      // The journal (Scan, BatchWriteItem) and the stalled jobs (the same Scan), sent again.
      // The trash's due entries and rows (GetItem, Query, PutItem of its cursor), each purged as a purge does.
      // A withdrawn writer's note (GetItem) and what it left: put in the trash with its note (PutItem), once
      // its bytes are found stored (GetObject).
      sweep: this.scheduled(SCHEDULED[0], environment, logRetention, { logLevel, platformLogs })
        .allowTable(uploads, 'Scan', 'BatchWriteItem', 'UpdateItem', 'BatchGetItem', 'GetItem', 'PutItem')
        .allowTable(nodes, 'BatchGetItem', 'GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem')
        .allowObjects(bucket, 'DeleteObject', 'GetObject')
        .allowSend(jobsQueue),
      'consistency-check': consistencyCheck.function,
      sequencer: this.sequencer(nodes, environment, logRetention, { logLevel, platformLogs })
        // The drive's state read (GetItem), the marks (BatchGetItem), then one transaction: the state put, each
        // change put, the paired marks deleted.
        .allowTable(changes, 'GetItem', 'BatchGetItem', 'PutItem', 'DeleteItem', 'ConditionCheckItem'),
    };
    for (const fn of [this.functions.upload, this.functions.download, this.functions['open-link'], this.functions['delete-folder'], this.functions['delete-files'], this.functions.move, this.functions.copy, this.functions['job-worker'], this.functions['start-upload'], this.functions['upload-parts'], this.functions['complete-upload'], this.functions['abort-upload'], this.functions.sweep, this.functions['trash-purge'], this.functions['trash-empty']]) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(bucket.node.defaultChild as never)}.Arn>/*]`,
        reason: 'Objects are named by file id, unknown until upload; the statement is limited to this bucket and to the actions the handler calls.',
      });
    }

    for (const fn of Object.values(this.functions)) {
      if (!fn.role) continue;
      Validations.of(fn.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(access.node.defaultChild as never)}.Arn>/index/*]`,
        reason: "The access table's two indexes (keys and share links by drive), which the table grant names by wildcard; the actions are the handler's own.",
      });
    }

    // One line per request, the function's, unless the operator asks for API Gateway's access lines too.
    const accessLogs = props.extraLogs?.accessLogs ? new LogGroup(this, 'ApiAccessLogs', { retention: logRetention, removalPolicy: RemovalPolicy.DESTROY }) : undefined;
    const stageName = props.stageName ?? 'v1';
    this.api = new RestApi(this, 'Api', {
      restApiName: `${this.stackName}-api`,
      description: 'Drive file storage API',
      endpointTypes: [EndpointType.REGIONAL],
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      // One role per account and region, shared by every REST API there: it outlives this stack.
      cloudWatchRole: true,
      deployOptions: {
        stageName,
        ...(accessLogs ? { accessLogDestination: new LogGroupLogDestination(accessLogs), accessLogFormat: AccessLogFormat.jsonWithStandardFields() } : {}),
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        // X-Ray: the stage's segment, and the trace header it passes on to the functions' own segments; which
        // requests are traced is the sampling rule's (below).
        tracingEnabled: true,
        throttlingRateLimit: props.throttle?.rateLimit ?? 200,
        throttlingBurstLimit: props.throttle?.burstLimit ?? 400,
      },
      defaultCorsPreflightOptions:
        corsOrigins.length > 0
          ? {
              allowOrigins: corsOrigins.includes('*') ? Cors.ALL_ORIGINS : corsOrigins,
              allowHeaders: [...CORS_REQUEST_HEADERS],
              allowMethods: [...new Set(ROUTES.map((route) => route.method))],
              maxAge: Duration.hours(1),
            }
          : undefined,
    });
    this.addSamplingRule(`${this.stackName}-api/${stageName}`, props.tracing);
    if (!accessLogs) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-APIG1',
        reason: "Each request's function writes its one log line (route, status, latency, key id, AWS calls, metrics); API Gateway's own answers are in its metrics. The accessLogs context adds the access log.",
      });
    }
    Validations.of(this.api).acknowledge(
      { id: 'AwsSolutions-APIG4', reason: 'Every method checks its Bearer API key in the function, against hashed keys in DynamoDB (spec section 5).' },
      { id: 'AwsSolutions-COG4', reason: 'Clients authenticate with Drive API keys, not Cognito users.' },
      { id: 'AwsSolutions-APIG3', reason: 'WAF is billed per web ACL, so it is left to the operator to attach; without it, stage throttling is what bounds unauthenticated floods.' },
      { id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]', reason: 'The account-wide role API Gateway needs to write access logs; AWS maintains its policy.' },
    );

    // Body validation has no model to apply (bodies are checked in the functions); parameters it can check.
    const queryValidator = new RequestValidator(this, 'Validator', { restApi: this.api, validateRequestParameters: true, validateRequestBody: true });
    for (const route of [...ROUTES, ...LINK_ROUTES, ...TOKEN_ROUTES, ...CONTRACT_ROUTES, ...DASHBOARD_ROUTES]) {
      const integration = new LambdaIntegration(this.functions[route.handler], {
        proxy: true,
        // A streamed response may run as long as the function; buffered ones keep the 29 s default.
        ...(route.streaming ? { responseTransferMode: ResponseTransferMode.STREAM, timeout: SIZING(route.handler).timeout } : {}),
      });
      const required = route.handler === 'delete-folder' ? { 'method.request.querystring.path': true } : undefined;
      this.api.root.resourceForPath(route.path).addMethod(route.method, integration, {
        requestParameters: required,
        requestValidator: required ? queryValidator : undefined,
      });
    }
    this.addErrorResponses(corsOrigins);
    this.allowPartUploads(bucket, corsOrigins, props.domain?.domainName);

    if (props.domain) {
      const domain = this.api.addDomainName('Domain', {
        domainName: props.domain.domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
        securityPolicy: SecurityPolicy.TLS_1_2,
        endpointType: EndpointType.REGIONAL,
        basePath: props.domain.basePath,
      });
      new CfnOutput(this, 'DomainTarget', { value: domain.domainNameAliasDomainName, description: 'Point the custom domain here (CNAME or alias)' });
    }

    this.addAlarms();
    new DriveDashboard(this, 'Operations', { metrics: this.metrics, api: this.api, functions: this.functions, alarms: this.alarms });
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'DashboardUrl', { value: this.api.url, description: 'The web dashboard: sign in with an API key of any role' });
    new CfnOutput(this, 'BucketName', { value: bucket.bucketName });
    new CfnOutput(this, 'NodesTableName', { value: nodes.tableName });
    new CfnOutput(this, 'UploadsTableName', { value: uploads.tableName });
    new CfnOutput(this, 'AccessTableName', { value: access.tableName, description: 'DRIVE_ACCESS_TABLE for npm run keys' });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'Every alarm notifies this SNS topic; subscribe to it, or deploy with -c alarmEmail=you@example.com' });
  }

  /**
   * Lets browsers PUT large-upload parts straight to the bucket and read each part's ETag: from the configured
   * origins, and from the API's own (and its custom domain's), where the dashboard is served.
   */
  private allowPartUploads(bucket: Bucket, corsOrigins: string[], domainName: string | undefined): void {
    const apiOrigin = `https://${this.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}`;
    bucket.addCorsRule({
      allowedMethods: [HttpMethods.PUT],
      allowedOrigins: [...corsOrigins, apiOrigin, ...(domainName ? [`https://${domainName}`] : [])],
      allowedHeaders: ['*'],
      exposedHeaders: ['ETag'],
      maxAge: 3600,
    });
  }

  /** A function that an EventBridge rule runs every `everyMinutes`, as the local host runs it on a timer. */
  private scheduled(fn: ScheduledFunction, environment: Record<string, string>, logRetention: RetentionDays, logs: { logLevel: LogLevel; platformLogs: boolean }): DriveFunction {
    const handler = new DriveFunction(this, fnId(fn.handler), { entry: fn.entry, ...SIZING(fn.handler), logRetention, logRemovalPolicy: RemovalPolicy.DESTROY, environment, ...logs });
    new Rule(this, `${fnId(fn.handler)}Schedule`, { schedule: Schedule.rate(Duration.minutes(fn.everyMinutes)), targets: [new LambdaFunction(handler, { retryAttempts: 0 })] });
    return handler;
  }

  /**
   * The change feed's sequencer on the nodes table's stream: batches of up to 100 records of one shard, one
   * batch a shard at a time (the per-item order it relies on), from the oldest record kept, retried until the
   * records expire, resuming from the record it hands back (a move's half waiting for its pair).
   */
  private sequencer(nodes: Table, environment: Record<string, string>, logRetention: RetentionDays, logs: { logLevel: LogLevel; platformLogs: boolean }): DriveFunction {
    const fn = new DriveFunction(this, fnId(SEQUENCER.handler), { entry: SEQUENCER.entry, ...SIZING(SEQUENCER.handler), logRetention, logRemovalPolicy: RemovalPolicy.DESTROY, environment, ...logs });
    fn.addEventSource(new DynamoEventSource(nodes, { startingPosition: StartingPosition.TRIM_HORIZON, batchSize: 100, parallelizationFactor: 1, reportBatchItemFailures: true }));
    return fn;
  }

  /** A function that a queue feeds, a message at a time, reporting the messages it failed (retried, then dead-lettered). */
  private queueWorker(worker: (typeof QUEUE_WORKERS)[number], queue: Queue, environment: Record<string, string>, logRetention: RetentionDays, logs: { logLevel: LogLevel; platformLogs: boolean }): DriveFunction {
    const fn = new DriveFunction(this, fnId(worker.handler), { entry: worker.entry, ...SIZING(worker.handler), logRetention, logRemovalPolicy: RemovalPolicy.DESTROY, environment, ...logs });
    fn.addEventSource(new SqsEventSource(queue, { batchSize: 1, reportBatchItemFailures: true }));
    return fn;
  }

  /** API Gateway's own errors in the spec's JSON shape, with the spec's codes. */
  /**
   * The X-Ray sampling rule of the API's stage (`serviceName` is API Gateway's `<api name>/<stage>`): a reservoir
   * a second, then a fixed share, in place of X-Ray's default (1 a second, then 5 %), which traces nearly every
   * request of a quiet deployment. The functions follow the stage's decision (their tracing is active, and
   * honours the trace header it passes on).
   */
  private addSamplingRule(serviceName: string, tracing: DriveStackProps['tracing']): void {
    const sampleRate = tracing?.sampleRate ?? DEFAULT_TRACING.sampleRate;
    const reservoir = tracing?.reservoirPerSecond ?? DEFAULT_TRACING.reservoirPerSecond;
    if (!(sampleRate >= 0 && sampleRate <= 1)) throw new Error(`tracing.sampleRate must be between 0 and 1 (got ${sampleRate})`);
    if (!Number.isInteger(reservoir) || reservoir < 0) throw new Error(`tracing.reservoirPerSecond must be a whole number (got ${reservoir})`);
    new CfnSamplingRule(this, 'ApiSampling', {
      samplingRule: {
        ruleName: samplingRuleName(this.stackName),
        priority: SAMPLING_RULE_PRIORITY,
        fixedRate: sampleRate,
        reservoirSize: reservoir,
        serviceName,
        serviceType: 'AWS::ApiGateway::Stage',
        host: '*',
        httpMethod: '*',
        urlPath: '*',
        resourceArn: '*',
        version: 1,
      },
    });
  }

  private addErrorResponses(corsOrigins: string[]): void {
    // Gateway responses carry fixed headers, so with several origins they cannot echo one: any origin may read
    // these errors, which hold nothing but the error (the API takes no cookies).
    const origin = corsOrigins.length === 0 ? undefined : corsOrigins.length === 1 ? corsOrigins[0] : '*';
    const headers = origin ? { 'Access-Control-Allow-Origin': `'${origin}'`, 'Access-Control-Expose-Headers': "'Retry-After'" } : undefined;
    // The catch-alls keep API Gateway's own status (403, 415, 504…): a status set there would replace them all.
    const responses: [string, ResponseType, string | undefined, string, Record<string, string>?][] = [
      ['MissingParameters', ResponseType.BAD_REQUEST_PARAMETERS, '422', errorBody('validation_error', '"$context.error.validationErrorString"')],
      ['TooLarge', ResponseType.REQUEST_TOO_LARGE, '413', fixedErrorBody('tooLarge')],
      ['Throttled', ResponseType.THROTTLED, '429', fixedErrorBody('throttled'), { 'Retry-After': "'1'" }],
      ['NoRoute', ResponseType.MISSING_AUTHENTICATION_TOKEN, '404', fixedErrorBody('noRoute')],
      ['Other4xx', ResponseType.DEFAULT_4XX, undefined, errorBody('bad_request', '$context.error.messageString')],
      ['Other5xx', ResponseType.DEFAULT_5XX, undefined, fixedErrorBody('serverError')],
    ];
    for (const [id, type, statusCode, body, extra] of responses) {
      this.api.addGatewayResponse(id, { type, statusCode, templates: { [JSON_TYPE]: body }, responseHeaders: { ...headers, ...extra } });
    }
  }

  /** Alarms on what an operator must see: server errors of the API, and errors and throttles of each function. */
  private addAlarms(): void {
    const period = Duration.minutes(5);
    const rate = new MathExpression({
      expression: '100 * errors / MAX([requests, 1])',
      usingMetrics: { errors: this.api.metricServerError({ period, statistic: 'Sum' }), requests: this.api.metricCount({ period, statistic: 'Sum' }) },
      period,
      label: 'API 5xx rate (%)',
    });
    this.alarms.push(
      new Alarm(this, 'Api5xxRate', {
        metric: rate,
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: 'More than 1% of API requests answered 5xx in 2 of the last 3 five-minute periods',
      }),
    );
    this.alarms.push(
      new Alarm(this, 'JobsDeadLettered', {
        metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: 'A delete job step failed five times; its job stays running and the sweep sends it again, but something keeps failing it',
      }),
    );
    this.alarms.push(
      new Alarm(this, 'DeliveriesDeadLettered', {
        metric: this.deliveryDeadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: 'The webhook worker crashed on a delivery 100 times (a receiver that fails is retried and written off by the worker itself, not here); that webhook\'s later deliveries went on without it',
      }),
    );
    this.alarms.push(
      new Alarm(this, 'OrphanedObjects', {
        metric: driveMetric(this.metrics, 'orphanedObjects', 'Sum'),
        threshold: 0,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: 'A clean-up failed and left objects no record points to; their keys are in the function logs ("orphaned_keys"), and fsck --repair deletes them',
      }),
    );
    const limited = new MathExpression({
      expression: '100 * limited / MAX([requests, 1])',
      usingMetrics: { limited: driveMetric(this.metrics, 'rateLimited'), requests: driveMetric(this.metrics, 'requests') },
      period,
      label: '429 rate (%)',
    });
    this.alarms.push(
      new Alarm(this, 'RateLimited', {
        metric: limited,
        threshold: 5,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: 'More than 5% of requests were refused by a rate limit (429) in 2 of the last 3 five-minute periods: a client is looping, or the limits are too low for the load',
      }),
    );
    for (const [handler, fn] of Object.entries(this.functions)) {
      const id = fnId(handler as HandlerName);
      for (const [kind, metric] of [['Errors', fn.metricErrors({ period, statistic: 'Sum' })], ['Throttles', fn.metricThrottles({ period, statistic: 'Sum' })]] as const) {
        this.alarms.push(
          new Alarm(this, `${id}${kind}`, {
            metric,
            threshold: 1,
            evaluationPeriods: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treatMissingData: TreatMissingData.NOT_BREACHING,
            alarmDescription: `The ${handler} function had ${kind.toLowerCase()} in the last five minutes`,
          }),
        );
      }
    }
  }
}

/** `create-folder` → `CreateFolderFunction`. */
/**
 * Construct ids kept from a handler's former name: a new id is a new logical id, which would replace the
 * function and delete its log group (and the logs in it) on the next deploy.
 */
const FORMER_IDS: Partial<Record<HandlerName, string>> = { 'job-worker': 'DeleteWorkerFunction' };

function fnId(handler: HandlerName): string {
  return FORMER_IDS[handler] ?? `${handler.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase())}Function`;
}

/**
 * The stack's X-Ray sampling rule name: X-Ray's names are at most 32 characters and unique in the account and
 * region, so a stack name too long to fit whole is cut and followed by a hash of all of it (two stacks whose
 * names share their first characters get two rules).
 */
export function samplingRuleName(stackName: string): string {
  if (stackName.length <= 28) return `${stackName}-api`;
  return `${stackName.slice(0, 19)}-${createHash('sha256').update(stackName).digest('hex').slice(0, 8)}-api`;
}

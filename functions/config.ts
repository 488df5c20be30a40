import { type Permission, parseRateLimits } from './core/access';
import type { RepairMode } from './core/consistency-check';

/**
 * Every `DRIVE_*` environment variable, in one table: what it holds, its default, who reads it, and how it
 * is parsed. The handlers, the stack (which sets the functions' environment through `environmentOf`), the
 * local host, fsck and the key tool read names only through `setting`; docs/configuration.md is this table
 * (test/unit/config.test.ts holds the two together, and fails on a `DRIVE_*` name the table lacks).
 */

/** Who reads a variable (`stack` and `local host` also set the functions' variables). */
export type Reader = 'handler' | 'stack' | 'local host' | 'fsck' | 'keys tool' | 'trace tool' | 'client CLI' | 'tests';

interface Setting<T> {
  name: `DRIVE_${string}`;
  /** An older name, read when `name` is unset. */
  formerly?: `DRIVE_${string}`;
  /** What the value is, as the docs show it. */
  type: string;
  /** The value when unset, as the docs show it. */
  default: string;
  unit?: string;
  description: string;
  readBy: readonly Reader[];
  /** The value from the raw text (undefined when unset); throws, naming `name`, on a value it cannot use. */
  parse: (raw: string | undefined, name: string) => T;
}

function entry<T>(setting: Setting<T>): Setting<T> {
  return setting;
}

const unset = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

/** Text that must be there: its absence stops the function at cold start. */
function required(raw: string | undefined, name: string): string {
  if (unset(raw)) throw new Error(`${name} environment variable is not set`);
  return raw;
}

function optional(raw: string | undefined): string | undefined {
  return unset(raw) ? undefined : raw;
}

function milliseconds(raw: string | undefined, name: string): number | undefined {
  if (unset(raw)) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number of milliseconds (got ${JSON.stringify(raw)})`);
  return value;
}

function wholeNumber(raw: string | undefined, name: string): number | undefined {
  if (unset(raw)) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number (got ${JSON.stringify(raw)})`);
  return value;
}

function positiveWholeNumber(raw: string | undefined, name: string): number | undefined {
  if (unset(raw)) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number (got ${JSON.stringify(raw)})`);
  return value;
}

function positiveSeconds(fallback: number) {
  return (raw: string | undefined, name: string): number => {
    const value = Number(raw ?? fallback);
    if (!(value > 0)) throw new Error(`${name} must be a positive number of seconds (got ${JSON.stringify(raw)})`);
    return value;
  };
}

const text = (raw: string | undefined) => raw;

/** The table. Keys are how the code names a variable; `name` is the environment's name. */
export const SETTINGS = {
  // Where the data is: the stack and the local host set these for every function.
  nodesTable: entry({
    name: 'DRIVE_NODES_TABLE', type: 'table name', default: 'required', readBy: ['handler', 'stack', 'local host', 'fsck'],
    description: 'the table of files and folders; fsck reads deployed storage when it and DRIVE_BUCKET are set',
    parse: required,
  }),
  accessTable: entry({
    name: 'DRIVE_ACCESS_TABLE', type: 'table name', default: 'required', readBy: ['handler', 'stack', 'local host', 'keys tool'],
    description: 'the table of API keys, share links and rate-limit buckets; the key tool works on a deployed stack when it is set',
    parse: required,
  }),
  uploadsTable: entry({
    name: 'DRIVE_UPLOADS_TABLE', type: 'table name', default: 'required', readBy: ['handler', 'stack', 'local host', 'fsck'],
    description: 'the table of large-upload sessions, the upload journal and background jobs',
    parse: required,
  }),
  changesTable: entry({
    name: 'DRIVE_CHANGES_TABLE', type: 'table name', default: 'required', readBy: ['handler', 'stack', 'local host'],
    description: "the change feed's log: each drive's changes, its sequencer's state and the marks of file moves; and the webhooks, their dispatcher's position and their failed deliveries",
    parse: required,
  }),
  bucket: entry({
    name: 'DRIVE_BUCKET', type: 'bucket name', default: 'required', readBy: ['handler', 'stack', 'local host', 'fsck'],
    description: "the bucket of the files' bytes",
    parse: required,
  }),
  jobQueueUrl: entry({
    name: 'DRIVE_JOB_QUEUE_URL', type: 'URL', default: 'required to send a job', readBy: ['handler', 'stack', 'local host'],
    description: 'the queue that feeds the job worker; read at the first send, so functions that never send need none',
    parse: required,
  }),
  deliveryQueueUrl: entry({
    name: 'DRIVE_DELIVERY_QUEUE_URL', type: 'URL', default: 'required to dispatch webhooks', readBy: ['handler', 'stack', 'local host'],
    description: "the FIFO queue of webhook deliveries, one message group a webhook; read at the first send",
    parse: required,
  }),
  dynamodbEndpoint: entry({
    name: 'DRIVE_DYNAMODB_ENDPOINT', type: 'URL', default: "the region's", readBy: ['handler', 'local host'],
    description: 'points the DynamoDB client at an emulator (the local host sets it)',
    parse: optional,
  }),
  s3Endpoint: entry({
    name: 'DRIVE_S3_ENDPOINT', type: 'URL', default: "the region's", readBy: ['handler', 'local host'],
    description: 'points the S3 client at an emulator, with path-style addressing and checksums only where required',
    parse: optional,
  }),
  sqsEndpoint: entry({
    name: 'DRIVE_SQS_ENDPOINT', type: 'URL', default: "the region's", readBy: ['handler', 'local host'],
    description: "points the SQS client at the local host's embedded queue",
    parse: optional,
  }),

  // Keys, limits and browsers.
  keyCacheSeconds: entry({
    name: 'DRIVE_KEY_CACHE_SECONDS', type: 'whole number', default: '30 (the stack sets 30; the local host 0)', unit: 'seconds', readBy: ['handler', 'stack', 'local host'],
    description: 'how long a warm function trusts a verified key; 0 checks every request',
    parse: (raw: string | undefined, name: string): number => wholeNumber(raw, name) ?? 30,
  }),
  folderCacheSeconds: entry({
    name: 'DRIVE_FOLDER_CACHE_SECONDS', type: 'whole number', default: '30', unit: 'seconds', readBy: ['handler', 'local host'],
    description: 'how long a warm upload function trusts a folder it found live after writing a file into it: an upload of one file there skips its first read (docs/hot-path-design.md); 0 reads every time',
    parse: (raw: string | undefined, name: string): number => wholeNumber(raw, name) ?? 30,
  }),
  rateLimits: entry({
    name: 'DRIVE_RATE_LIMITS', type: '`off`, or `permission=n,…`', default: "the spec's", unit: 'requests per minute', readBy: ['handler', 'local host'],
    description: '`off` for none (benchmarks only), or overrides such as `upload=10,list=600` (`download` sets each share link\'s bucket too)',
    parse: (raw: string | undefined): Readonly<Record<Permission, number>> | undefined => parseRateLimits(raw),
  }),
  corsOrigins: entry({
    name: 'DRIVE_CORS_ORIGINS', type: 'comma-separated origins, or `*`', default: 'none', readBy: ['handler', 'stack', 'local host'],
    description: 'origins browsers may call the API from; the local host also lets them PUT large-upload parts to the embedded S3',
    parse: (raw: string | undefined): readonly string[] => (raw ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== ''),
  }),
  trustLoopbackIssuers: entry({
    name: 'DRIVE_TRUST_LOOPBACK_ISSUERS', type: '`1` or unset', default: 'unset (the local host sets `1`; the stack never does)', readBy: ['handler', 'local host', 'keys tool'],
    description: 'lets trust rules name http://127.0.0.1:<port> and http://localhost:<port> issuers besides https ones, so that an issuer on the same machine can be trusted',
    parse: (raw: string | undefined): boolean => raw === '1',
  }),
  webhookAllowLoopback: entry({
    name: 'DRIVE_WEBHOOK_ALLOW_LOOPBACK', type: '`1` or unset', default: 'unset (the local host sets `1`; the stack never does)', readBy: ['handler', 'local host'],
    description: 'lets webhooks name http://127.0.0.1:<port> and http://localhost:<port> (delivered to loopback only) besides https URLs with public addresses',
    parse: (raw: string | undefined): boolean => raw === '1',
  }),
  webhookRetryBaseMs: entry({
    name: 'DRIVE_WEBHOOK_RETRY_BASE_MS', type: 'positive whole number', default: '10000', unit: 'milliseconds', readBy: ['handler'],
    description: "the wait before a failed webhook delivery's second attempt; each next wait is three times the last, up to 2 hours",
    parse: positiveWholeNumber,
  }),
  webhookRetryForSeconds: entry({
    name: 'DRIVE_WEBHOOK_RETRY_FOR_SECONDS', type: 'positive whole number', default: '86400', unit: 'seconds', readBy: ['handler'],
    description: 'how long after its first attempt a webhook delivery that keeps failing is written off as failed (listed by GET /drive/webhooks/{id}/deliveries?status=failed)',
    parse: positiveWholeNumber,
  }),
  apiScheme: entry({
    name: 'DRIVE_API_SCHEME', type: '`https` or `http`', default: 'https', readBy: ['handler', 'local host'],
    description: 'the scheme of the URLs the API hands out (the local host serves plain HTTP and sets `http`)',
    parse: (raw: string | undefined): 'http' | 'https' => (raw === 'http' ? 'http' : 'https'),
  }),

  // Large uploads and copies.
  maxFileBytes: entry({
    name: 'DRIVE_MAX_FILE_BYTES', type: 'positive whole number', default: "5497558138880 (5 TiB, S3's most; also the ceiling)", unit: 'bytes', readBy: ['handler', 'stack'],
    description: 'the largest file a large upload may declare (413 above it)',
    parse: positiveWholeNumber,
  }),
  uploadExpirySeconds: entry({
    name: 'DRIVE_UPLOAD_EXPIRY_SECONDS', type: 'positive whole number', default: '3600 (at most 86400)', unit: 'seconds', readBy: ['handler', 'stack'],
    description: 'how long a large-upload session and its part URLs last',
    parse: positiveWholeNumber,
  }),
  singleCopyMaxBytes: entry({
    name: 'DRIVE_SINGLE_COPY_MAX_BYTES', type: 'positive whole number', default: "5368709120 (S3's 5 GiB)", unit: 'bytes', readBy: ['handler'],
    description: 'the size above which a copy goes in parts (UploadPartCopy); tests lower it to reach that path with small files',
    parse: positiveWholeNumber,
  }),

  // The change feed (docs/change-feed-design.md).
  changesRetentionDays: entry({
    name: 'DRIVE_CHANGES_RETENTION_DAYS', type: 'positive whole number', default: '7', unit: 'days', readBy: ['handler', 'stack'],
    description: 'how long changes are kept: a cursor older than this is 410 cursor_expired',
    parse: (raw: string | undefined, name: string) => positiveWholeNumber(raw, name) ?? 7,
  }),
  changesPairWaitSeconds: entry({
    name: 'DRIVE_CHANGES_PAIR_WAIT_SECONDS', type: 'positive whole number', default: '60', unit: 'seconds', readBy: ['handler'],
    description: "how long the sequencer holds one half of a file or folder move for the other (from another stream shard) before it shows each alone, as a delete and a create",
    parse: (raw: string | undefined, name: string) => positiveWholeNumber(raw, name) ?? 60,
  }),

  // The trash (issue 28).
  trashDays: entry({
    name: 'DRIVE_TRASH_DAYS', type: 'whole number, 0 to 365', default: '7', unit: 'days', readBy: ['handler', 'stack', 'local host'],
    description:
      'how long deleted and replaced files (and deleted folders, restored whole) stay in the trash (cdk context `trashDays`) before the sweep purges them; `0` turns the trash off, and deletes are final as the spec has them (items trashed earlier keep their own purge time)',
    parse: (raw: string | undefined, name: string): number => {
      const value = wholeNumber(raw, name) ?? 7;
      if (value > 365) throw new Error(`${name} must be a whole number from 0 to 365 (got ${JSON.stringify(raw)})`);
      return value;
    },
  }),

  // Background jobs: how long each piece of work runs.
  deleteBudgetMs: entry({
    name: 'DRIVE_DELETE_BUDGET_MS', type: 'whole number', default: '10000', unit: 'milliseconds', readBy: ['handler'],
    description: 'how long a recursive delete request deletes (a folder restore restores, emptying the trash purges) before it answers 202 with a job; tests set 0',
    parse: milliseconds,
  }),
  moveBudgetMs: entry({
    name: 'DRIVE_MOVE_BUDGET_MS', type: 'whole number', default: '10000', unit: 'milliseconds', readBy: ['handler'],
    description: 'how long a folder move request works before it answers 202 with a job; tests set 0',
    parse: milliseconds,
  }),
  idempotencyInlineBytes: entry({
    name: 'DRIVE_IDEMPOTENCY_INLINE_BYTES', type: 'positive whole number', default: '350000', unit: 'bytes', readBy: ['handler'],
    description: "the most of an Idempotency-Key's gzipped answer kept in its record; a larger one goes in chunk items of this size (DynamoDB's items are at most 400 KB); tests set it low to store a 1,000-file upload's answer in chunks",
    parse: positiveWholeNumber,
  }),
  copyBudgetMs: entry({
    name: 'DRIVE_COPY_BUDGET_MS', type: 'whole number', default: '10000', unit: 'milliseconds', readBy: ['handler'],
    description: 'how long a folder copy request works before it answers 202 with a job; tests set 0',
    parse: milliseconds,
  }),
  jobStepMs: entry({
    name: 'DRIVE_JOB_STEP_MS', formerly: 'DRIVE_DELETE_STEP_MS', type: 'whole number', default: '240000', unit: 'milliseconds', readBy: ['handler'],
    description: 'how long one step of the job worker (a delete, a folder move or copy) works before it sends the job on',
    parse: milliseconds,
  }),
  jobStallMs: entry({
    name: 'DRIVE_JOB_STALL_MS', type: 'whole number', default: '120000', unit: 'milliseconds', readBy: ['handler'],
    description: 'how long a running job may go without advancing before the sweep sends it again',
    parse: milliseconds,
  }),

  // The scheduled consistency check.
  fsckRepair: entry({
    name: 'DRIVE_FSCK_REPAIR', type: '`orphans`, `true` or `off`', default: 'orphans', readBy: ['handler', 'stack'],
    description:
      'what the scheduled check repairs (cdk context `fsckRepair`): `orphans` deletes confirmed orphaned objects older than the grace period (what a killed one-file upload leaves); `true` also recreates missing parent folders; `off` only reports',
    parse: (raw: string | undefined, name: string): RepairMode => {
      if (unset(raw) || raw === 'orphans') return 'orphans';
      if (raw === 'true') return 'all';
      if (raw === 'off' || raw === 'false') return 'off';
      throw new Error(`${name} must be orphans, true or off (got ${JSON.stringify(raw)})`);
    },
  }),
  fsckGraceMinutes: entry({
    name: 'DRIVE_FSCK_GRACE_MINUTES', type: 'whole number', default: '60', unit: 'minutes', readBy: ['handler', 'stack'],
    description:
      'how old an object without a record must be before the check counts it, and how long before a run deletes it an earlier run must have confirmed it (cdk context `fsckGraceMinutes`); at least 15 while repair deletes, except on the local host',
    parse: (raw: string | undefined, name: string): number => wholeNumber(raw, name) ?? 60,
  }),
  fsckSliceObjects: entry({
    name: 'DRIVE_FSCK_SLICE_OBJECTS', type: 'whole number (at least 1)', default: '100000', unit: 'objects', readBy: ['handler'],
    description: 'how many objects one run of the check reads before it leaves the rest to the next',
    parse: (raw: string | undefined, name: string): number => Math.max(1, wholeNumber(raw, name) ?? 100_000),
  }),

  // The dashboard's page and the functions' telemetry.
  dashboardDir: entry({
    name: 'DRIVE_DASHBOARD_DIR', type: 'folder', default: 'required by the dashboard', readBy: ['handler', 'stack', 'local host'],
    description: "where the dashboard's files are (a copy in its bundle in Lambda, the source folder locally)",
    parse: required,
  }),
  partUploadOrigin: entry({
    name: 'DRIVE_PART_UPLOAD_ORIGIN', type: 'http(s) origin', default: 'required by the dashboard', readBy: ['handler', 'stack', 'local host'],
    description: "the bucket's origin, which the dashboard's policy lets the page send large-upload parts to",
    parse: required,
  }),
  metricsNamespace: entry({
    name: 'DRIVE_METRICS_NAMESPACE', type: 'text', default: 'Drive', readBy: ['handler', 'stack'],
    description: "the CloudWatch namespace of Drive's own metrics",
    parse: (raw: string | undefined): string => optional(raw) ?? 'Drive',
  }),
  metricsService: entry({
    name: 'DRIVE_METRICS_SERVICE', type: 'text', default: 'drive', readBy: ['handler', 'stack'],
    description: 'the service named in each metrics line, which tells two stacks in one namespace apart',
    parse: (raw: string | undefined): string => optional(raw) ?? 'drive',
  }),
  logLevel: entry({
    name: 'DRIVE_LOG_LEVEL', type: '`DEBUG`, `INFO`, `WARN` or `ERROR`', default: 'INFO', readBy: ['handler', 'local host'],
    description: "the lowest level of the log lines; in AWS Lambda's own level (the stack's `logLevel`) comes first",
    parse: optional,
  }),

  // The local host and the tools beside it.
  dataDir: entry({
    name: 'DRIVE_DATA_DIR', type: 'folder', default: '.drive-data', readBy: ['local host', 'fsck', 'keys tool', 'trace tool'],
    description: "where the local host keeps everything (docs/local-host.md, \"The data dir\"); the tools open the same",
    parse: (raw: string | undefined): string => raw ?? '.drive-data',
  }),
  apiKeys: entry({
    name: 'DRIVE_API_KEYS', type: 'comma-separated `secret`, `drive:secret`, `drive:secret:role` or `drive:secret:role:/prefix`', default: 'unset (the first start makes one admin key)', readBy: ['local host'],
    description: 'the keys each start makes match (docs/local-host.md)',
    parse: optional,
  }),
  localRequestTimeoutSeconds: entry({
    name: 'DRIVE_LOCAL_REQUEST_TIMEOUT_SECONDS', type: 'positive number', default: '30', unit: 'seconds', readBy: ['local host'],
    description: 'how long a client has to send its whole request before a 408',
    parse: positiveSeconds(30),
  }),
  localSweepSeconds: entry({
    name: 'DRIVE_LOCAL_SWEEP_SECONDS', type: 'positive number', default: '60', unit: 'seconds', readBy: ['local host'],
    description: 'how often expired upload sessions are ended and the scheduled sweep runs (TTL, lifecycle rules and a 5-minute schedule in AWS)',
    parse: positiveSeconds(60),
  }),
  localFsckSeconds: entry({
    name: 'DRIVE_LOCAL_FSCK_SECONDS', type: 'positive number', default: '3600', unit: 'seconds', readBy: ['local host'],
    description: 'how often the scheduled consistency check runs a slice (daily in AWS)',
    parse: positiveSeconds(3600),
  }),
  localClock: entry({
    name: 'DRIVE_LOCAL_CLOCK', type: '`frozen` or unset', default: 'unset', readBy: ['local host'],
    description: "tests only: `frozen` stops the rate limiter's clock at start, so a burst's 429s are exact on any machine",
    parse: (raw: string | undefined): boolean => raw === 'frozen',
  }),
  localCutOff: entry({
    name: 'DRIVE_LOCAL_CUT_OFF', type: '`off` or unset', default: 'unset', readBy: ['local host'],
    description: "tests only: `off` lets every invocation run to its end instead of cutting it off at API Gateway's 29 s (504) or its function's timeout (502); the tests set it, as wall time on a busy machine says nothing of Lambda's",
    parse: (raw: string | undefined): boolean => raw !== 'off',
  }),
  localAccessLog: entry({
    name: 'DRIVE_LOCAL_ACCESS_LOG', type: '`1` or unset', default: 'unset', readBy: ['local host'],
    description: "`1` adds the host's own line (`GET /drive/list 200 12ms`) for every request, as API Gateway's access log (the stack's `accessLogs`) would; unset, only requests no function logged get it (no route, too large, an unknown key's 429, a failed function), so a request writes one line",
    parse: (raw: string | undefined): boolean => raw === '1',
  }),
  checkContract: entry({
    name: 'DRIVE_CHECK_CONTRACT', type: '`1` or unset', default: 'unset', readBy: ['local host'],
    description: 'checks every answer against the OpenAPI document, each mismatch noted in contract-violations.jsonl in the data dir',
    parse: (raw: string | undefined): boolean => raw === '1',
  }),

  // Read by others, which ship or run without this module; listed so that every name is in one place.
  url: entry({
    name: 'DRIVE_URL', type: 'http(s) URL', default: 'none', readBy: ['client CLI'],
    description: "the API's base URL for the `drive` CLI (`--url` first)",
    parse: text,
  }),
  apiKey: entry({
    name: 'DRIVE_API_KEY', type: 'secret', default: 'none', readBy: ['client CLI'],
    description: 'the API key for the `drive` CLI (`--api-key` first)',
    parse: text,
  }),
  oidcTokenFile: entry({
    name: 'DRIVE_OIDC_TOKEN_FILE', type: 'file path', default: 'none', readBy: ['client CLI'],
    description: 'without a key: a file holding an OIDC token, read at each exchange for a short-lived key (`--oidc-token-file` first; docs/federation.md)',
    parse: text,
  }),
  oidcToken: entry({
    name: 'DRIVE_OIDC_TOKEN', type: 'JWT', default: 'none', readBy: ['client CLI'],
    description: 'without a key or a token file: the OIDC token the `drive` CLI exchanges at `POST /drive/token` for short-lived keys',
    parse: text,
  }),
  oidcAudience: entry({
    name: 'DRIVE_OIDC_AUDIENCE', type: 'text', default: "none (the runner's default audience)", readBy: ['client CLI'],
    description: "in GitHub Actions, with no key nor token set: the audience of the token the CLI asks the runner for (`ACTIONS_ID_TOKEN_REQUEST_URL`), the trust rule's `audience`",
    parse: text,
  }),
  oidcDrive: entry({
    name: 'DRIVE_OIDC_DRIVE', type: 'drive name', default: '`default`', readBy: ['client CLI'],
    description: 'the drive an OIDC token is exchanged into',
    parse: text,
  }),
  cliSource: entry({
    name: 'DRIVE_CLI_SOURCE', type: '`1` or unset', default: 'unset', readBy: ['client CLI'],
    description: 'runs the CLI from its TypeScript source even where a build exists',
    parse: text,
  }),
  storage: entry({
    name: 'DRIVE_STORAGE', type: 'JSON', default: 'none', readBy: ['tests'],
    description: "benchmarks only: the endpoints of storage in another process for the benchmark's host",
    parse: text,
  }),
  browserCpuSlowdown: entry({
    name: 'DRIVE_BROWSER_CPU_SLOWDOWN', type: 'number', default: '1', readBy: ['tests'],
    description: "browser tests only: runs the dashboard page's CPU this many times slower",
    parse: text,
  }),
  requireDynamodbLocal: entry({
    name: 'DRIVE_REQUIRE_DYNAMODB_LOCAL', type: '`1` or unset', default: 'unset', readBy: ['tests'],
    description: 'DynamoDB Local tier only: `1` fails the tier when Java or the jar is missing, instead of skipping it (CI sets it)',
    parse: text,
  }),
  dynamodbLocalEndpoint: entry({
    name: 'DRIVE_DYNAMODB_LOCAL_ENDPOINT', type: 'http URL', default: 'none', readBy: ['tests'],
    description: "DynamoDB Local tier only: set by the tier's setup to the endpoint of the DynamoDB Local it started",
    parse: text,
  }),
  dynamodbLocalUnavailable: entry({
    name: 'DRIVE_DYNAMODB_LOCAL_UNAVAILABLE', type: 'text', default: 'none', readBy: ['tests'],
    description: "DynamoDB Local tier only: set by the tier's setup to why DynamoDB Local is not running",
    parse: text,
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;
type Parsed<K extends SettingKey> = ReturnType<(typeof SETTINGS)[K]['parse']>;

/** Where settings are read from: the process's environment, or a map a test or tool gives. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The raw text of a setting (its former name's when only that is set), or undefined when unset: an empty
 * variable is unset, as every parser takes it, so it neither hides the former name nor passes on as a value.
 */
export function rawSetting(key: SettingKey, env: Environment = process.env): string | undefined {
  const setting: Setting<unknown> = SETTINGS[key];
  const raw = optional(env[setting.name]);
  return raw === undefined && setting.formerly !== undefined ? optional(env[setting.formerly]) : raw;
}

/** The value of a setting, parsed; a missing required one or a value it cannot use throws, naming it. */
export function setting<K extends SettingKey>(key: K, env: Environment = process.env): Parsed<K> {
  const entry: Setting<unknown> = SETTINGS[key];
  const formerUsed = unset(env[entry.name]) && entry.formerly !== undefined && !unset(env[entry.formerly]);
  return entry.parse(rawSetting(key, env), formerUsed ? entry.formerly! : entry.name) as Parsed<K>;
}

/**
 * What Lambda's runtime (or the local host, as it) sets in the environment: not Drive's settings, but read in one
 * place as they are. Read at the time it is needed: `_X_AMZN_TRACE_ID` changes with each invocation.
 */
export type RuntimeVariable =
  | 'AWS_LAMBDA_FUNCTION_NAME'
  | 'AWS_LAMBDA_MAX_CONCURRENCY'
  | 'AWS_LAMBDA_LOG_LEVEL'
  | 'AWS_REGION'
  | 'AWS_XRAY_DAEMON_ADDRESS'
  | '_X_AMZN_TRACE_ID';

/** The runtime's value of `name`, or undefined when unset. */
export function runtimeVariable(name: RuntimeVariable, env: Environment = process.env): string | undefined {
  return env[name];
}

/** The environment that gives these settings these values (for the stack and the local host to hand to the functions). */
export function environmentOf(values: { readonly [K in SettingKey]?: string }): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(values) as [SettingKey, string | undefined][]) {
    if (value !== undefined) environment[SETTINGS[key].name] = value;
  }
  return environment;
}

/** The table as docs/configuration.md shows it. */
export function settingsTable(): string {
  const cell = (value: string) => value.replaceAll('|', '\\|');
  const rows = (Object.values(SETTINGS) as Setting<unknown>[]).map((s) =>
    `| \`${s.name}\`${s.formerly ? ` (formerly \`${s.formerly}\`)` : ''} | ${cell(s.type)} | ${cell(s.default)} | ${s.unit ?? ''} | ${s.readBy.join(', ')} | ${cell(s.description)} |`,
  );
  return ['| variable | type | default | unit | read by | meaning |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

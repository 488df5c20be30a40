import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, type ICommandHooks, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { join } from 'node:path';

const PROJECT_ROOT = join(__dirname, '..');

/** How every handler is bundled; the benchmark builds with the same options to measure what Lambda loads. */
export const BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: 'node24',
  minify: true,
  sourceMap: true,
  mainFields: ['module', 'main'],
  // Bundle the pinned SDK rather than take the runtime's, so AWS runs what the tests ran.
  externalModules: [],
  // CommonJS dependencies (busboy) call require() for Node built-ins, which ESM does not define.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
};

export interface DriveFunctionProps {
  /** The handler module, relative to the project root. */
  entry: string;
  memorySize: number;
  timeout: Duration;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  environment: Record<string, string>;
  /** A folder of the project (`from`) to copy into the bundle as `to`, for files the handler reads at run time. */
  copyIntoBundle?: { from: string; to: string };
  /** The lowest level logged: Lambda's application log level, which the code reads too (functions/telemetry/log.ts). @default INFO */
  logLevel?: LogLevel;
  /**
   * Lambda's platform lines (`platform.start`, `platform.report`: billed duration, memory used, init time) at
   * `logLevel`; without, only its warnings (a timeout, a crash), so that a request writes one line, the code's.
   * @default false
   */
  platformLogs?: boolean;
}

/** The log levels the code writes (functions/telemetry/log.ts), as the stack's `logLevel` names them. */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/**
 * A Drive handler with the house defaults: bundled here by the local esbuild (ESM, minified, source maps,
 * the pinned SDK inside), ARM64 on the newest Node.js runtime, its own log group in Lambda's JSON log
 * format at `logLevel` (Lambda's own platform lines only if asked), X-Ray active tracing, and a role that starts with nothing but writing to that log
 * group and to X-Ray; `allow*` adds exactly what the handler calls.
 */
export class DriveFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: DriveFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: props.logRetention, removalPolicy: props.logRemovalPolicy });
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    super(scope, id, {
      entry: join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      logGroup,
      // JSON: Lambda's own lines (START, REPORT, errors) are JSON as the code's are, and the level filters both.
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel[props.logLevel ?? 'INFO'],
      // Lambda's platform lines have no ERROR level; WARN is its quietest, and leaves out the two lines
      // (start, report) it writes for every invocation at INFO.
      systemLogLevelV2: !props.platformLogs || props.logLevel === 'ERROR' ? SystemLogLevel.WARN : SystemLogLevel[props.logLevel ?? 'INFO'],
      // Segments for the invocation and its initialisation; the SDK's calls show as the function's time.
      tracing: Tracing.ACTIVE,
      role,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: props.copyIntoBundle ? { ...BUNDLING, commandHooks: copyAfterBundling(props.copyIntoBundle) } : BUNDLING,
    });
    logGroup.grantWrite(role);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: "X-Ray's PutTraceSegments and PutTelemetryRecords, which active tracing grants, take no resource: * is the only one AWS allows.",
    });
  }

  /** Lets the handler call `actions` on `table`. */
  allowTable(table: ITable, ...actions: string[]): this {
    table.grant(this, ...actions.map((action) => `dynamodb:${action}`));
    return this;
  }

  /** Lets the handler call `actions` on `bucket` itself. */
  allowBucket(bucket: IBucket, ...actions: string[]): this {
    this.addToRolePolicy(new PolicyStatement({ actions: actions.map((action) => `s3:${action}`), resources: [bucket.bucketArn] }));
    return this;
  }

  /** Lets the handler send messages to `queue`. */
  allowSend(queue: IQueue): this {
    queue.grantSendMessages(this);
    return this;
  }

  /** Lets the handler call `actions` on the objects of `bucket`. */
  allowObjects(bucket: IBucket, ...actions: string[]): this {
    this.addToRolePolicy(new PolicyStatement({ actions: actions.map((action) => `s3:${action}`), resources: [bucket.arnForObjects('*')] }));
    return this;
  }
}

/**
 * Hooks that copy a project folder into the bundle once esbuild is done. Local bundling runs hooks in bash,
 * or cmd on Windows, so the copy is a Node one-liner rather than `cp -r`.
 */
function copyAfterBundling(copy: { from: string; to: string }): ICommandHooks {
  const script = "require('node:fs').cpSync(process.argv[1], process.argv[2], { recursive: true })";
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [`node -e "${script}" "${join(inputDir, copy.from)}" "${join(outputDir, copy.to)}"`],
  };
}

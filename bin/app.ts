import { App, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { type LogLevel } from '../lib/drive-function';
import { DriveStack } from '../lib/drive-stack';
import { setting } from '../functions/config';

const LOG_LEVELS: readonly LogLevel[] = ['DEBUG', 'INFO', 'WARN', 'ERROR'];

/** The CDK app: one Drive stack, configured by context (`cdk deploy -c corsOrigins=https://app.example.com`). */
const app = new App();
/** A context value as a string, whether it came from `-c key=value` or from cdk.json (any JSON type). */
const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null) return undefined;
  return Array.isArray(value) ? value.join(',') : String(value);
};
const domainName = context('domainName');
if (domainName && !context('certificateArn')) throw new Error('domainName needs certificateArn: an ACM certificate for it in the stack region');
const logLevel = context('logLevel')?.toUpperCase();
if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel as LogLevel)) throw new Error(`logLevel must be one of ${LOG_LEVELS.join(', ')} (got ${logLevel})`);

const traceSampleRate = context('traceSampleRate');
const traceReservoir = context('traceReservoir');

new DriveStack(app, context('stackName') ?? 'Drive', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  stageName: context('stageName'),
  logRetention: context('logRetentionDays') ? (Number(context('logRetentionDays')) as RetentionDays) : undefined,
  bucketVersioning: context('bucketVersioning') === 'true',
  trashDays: context('trashDays') === undefined ? undefined : setting('trashDays', { DRIVE_TRASH_DAYS: context('trashDays') }),
  ...(context('destroyData') === 'true' ? { dataRemovalPolicy: RemovalPolicy.DESTROY, deletionProtection: false } : {}),
  corsOrigins: context('corsOrigins')?.split(',').filter(Boolean),
  largeUploads: {
    maxFileBytes: context('maxFileBytes') ? Number(context('maxFileBytes')) : undefined,
    expiry: context('uploadExpirySeconds') ? Duration.seconds(Number(context('uploadExpirySeconds'))) : undefined,
  },
  domain: domainName ? { domainName, certificateArn: context('certificateArn')!, basePath: context('basePath') } : undefined,
  consistencyCheck: {
    everyHours: context('fsckEveryHours') ? Number(context('fsckEveryHours')) : undefined,
    repair: setting('fsckRepair', { DRIVE_FSCK_REPAIR: context('fsckRepair') }),
    graceMinutes: context('fsckGraceMinutes') ? Number(context('fsckGraceMinutes')) : undefined,
  },
  logLevel: logLevel as LogLevel | undefined,
  alarmEmail: context('alarmEmail'),
  metricsNamespace: context('metricsNamespace'),
  tracing: {
    sampleRate: traceSampleRate === undefined ? undefined : Number(traceSampleRate),
    reservoirPerSecond: traceReservoir === undefined ? undefined : Number(traceReservoir),
  },
  extraLogs: { accessLogs: context('accessLogs') === 'true', platformLogs: context('platformLogs') === 'true' },
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

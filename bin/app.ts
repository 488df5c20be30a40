import { App, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DriveStack } from '../lib/drive-stack';

/** The CDK app: one Drive stack, configured by context (`cdk deploy -c corsOrigins=https://app.example.com`). */
const app = new App();
const context = (key: string): string | undefined => app.node.tryGetContext(key);

new DriveStack(app, context('stackName') ?? 'Drive', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  stageName: context('stageName'),
  logRetention: context('logRetentionDays') ? (Number(context('logRetentionDays')) as RetentionDays) : undefined,
  bucketVersioning: context('bucketVersioning') === 'true',
  ...(context('destroyData') === 'true' ? { dataRemovalPolicy: RemovalPolicy.DESTROY, deletionProtection: false } : {}),
  corsOrigins: context('corsOrigins')?.split(',').filter(Boolean),
  domain: context('domainName') ? { domainName: context('domainName')!, certificateArn: context('certificateArn')!, basePath: context('basePath') } : undefined,
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

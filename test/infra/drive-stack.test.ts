import { App, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Alarm, CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { gatewayErrorBody } from '../../lib/aws-limits';
import { DriveStack } from '../../lib/drive-stack';
import { CONTRACT_ROUTES, DASHBOARD_ROUTES, LINK_ROUTES, ROUTES, TOKEN_ROUTES } from '../../lib/routes';

// Every app that bundles writes to this one folder: the CDK keeps each bundle it made in this process under
// a key that includes the output folder, so the second and third app reuse the first one's bundles instead
// of running esbuild over the 34 handlers again.
const outdir = mkdtempSync(join(tmpdir(), 'drive-stack-test-'));

/** An app whose stacks are not bundled (only the template matters), its assembly inside `outdir`, which the file removes. */
const templateApp = () => new App({ outdir: mkdtempSync(join(outdir, 'template-')), context: { 'aws:cdk:bundling-stacks': [] } });

// One synthesis shared by every assertion.
const app = new App({ outdir });
const stack = new DriveStack(app, 'Test', { corsOrigins: ['https://app.example.com'] });
const template = Template.fromStack(stack);

type Statement = { Action: string | string[]; Resource: unknown };

/** Every IAM action granted to the role of the function for `endpoint`. */
/** What `grantSendMessages` allows. */
const SEND = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];

function actionsOf(endpoint: keyof DriveStack['functions']): string[] {
  const roleId = stack.getLogicalId(stack.functions[endpoint].role!.node.defaultChild as never);
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } });
  return Object.values(policies)
    .flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement)
    .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
    .sort();
}

describe('DriveStack', () => {
  it('routes every route of the spec, HEAD of downloads, the four of large uploads, those of share links and the token exchange to Lambda proxy integrations', () => {
    for (const route of [...ROUTES, ...LINK_ROUTES, ...TOKEN_ROUTES]) {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: route.method,
        Integration: Match.objectLike({ Type: 'AWS_PROXY' }),
      });
    }
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method')).map((m) => (m as { Properties: { HttpMethod: string } }).Properties.HttpMethod);
    // The API's thirty-six (three of them trust rules, four webhooks, three the change feed's, four the trash's), a
    // share link's GET and HEAD, the token exchange's POST, GET /openapi.json, and the dashboard's GET / and GET /{file}.
    expect(methods.filter((m) => m !== 'OPTIONS').sort()).toEqual([
      ...['DELETE', 'DELETE', 'DELETE', 'DELETE', 'DELETE', 'DELETE', 'DELETE', 'DELETE', 'DELETE', 'DELETE'],
      ...['GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET'],
      ...['HEAD', 'HEAD'],
      ...['POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST'],
    ]);
    const resources = Object.values(template.findResources('AWS::ApiGateway::Resource')).map((r) => (r as { Properties: { PathPart: string } }).Properties.PathPart);
    expect(resources).toEqual(expect.arrayContaining(['uploads', '{upload_id}', 'complete', 'parts', 'keys', '{key_id}', 'jobs', '{job_id}', '{file}', 'links', '{link_id}', 's', '{token}', 'whoami', 'openapi.json', 'trust', '{trust_id}', 'token', 'webhooks', '{webhook_id}', 'deliveries', 'trash', 'restore', '{item_id}', 'changes', 'latest', 'recent']));
  });

  it('streams GET and HEAD of downloads from the one download function, of share links from the open-link function, and listings from the list function; buffers the rest', () => {
    const streamed = template.findResources('AWS::ApiGateway::Method', { Properties: { Integration: { ResponseTransferMode: 'STREAM', TimeoutInMillis: 900_000 } } });
    const methods = Object.values(streamed) as { Properties: { HttpMethod: string; Integration: unknown } }[];
    expect(methods.map((m) => m.Properties.HttpMethod).sort()).toEqual(['GET', 'GET', 'GET', 'HEAD', 'HEAD']);
    const downloadFunction = stack.getLogicalId(stack.functions.download.node.defaultChild as never);
    const listFunction = stack.getLogicalId(stack.functions.list.node.defaultChild as never);
    for (const method of methods) expect(JSON.stringify(method.Properties.Integration)).toContain('response-streaming-invocations');
    const downloads = methods.filter((m) => JSON.stringify(m.Properties.Integration).includes(downloadFunction));
    expect(downloads.map((m) => m.Properties.HttpMethod).sort()).toEqual(['GET', 'HEAD']);
    expect(methods.filter((m) => JSON.stringify(m.Properties.Integration).includes(listFunction)).map((m) => m.Properties.HttpMethod)).toEqual(['GET']);
    const linkFunction = stack.getLogicalId(stack.functions['open-link'].node.defaultChild as never);
    expect(methods.filter((m) => JSON.stringify(m.Properties.Integration).includes(linkFunction)).map((m) => m.Properties.HttpMethod).sort()).toEqual(['GET', 'HEAD']);
    // Both download methods sit on the one /drive/download resource.
    expect(new Set(downloads.map((m) => JSON.stringify((m.Properties as unknown as { ResourceId: unknown }).ResourceId))).size).toBe(1);
    // One function serves both methods: one function per handler, thirty for the API (the token exchange's, the
    // change feed's, four of webhooks and the trash's four among them), the dashboard's, the OpenAPI document's,
    // the sweep, the delete worker, the consistency check, the change feed's sequencer, and the webhooks' worker
    // and dispatcher.
    template.resourceCountIs('AWS::Lambda::Function', 42);
  });

  it('passes multipart bodies as binary', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: Match.arrayWith(['multipart/form-data']) });
  });

  it('requires path on DELETE /drive/folders and answers a missing one as 422 validation_error', () => {
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'DELETE',
      RequestParameters: { 'method.request.querystring.path': true },
      RequestValidatorId: Match.anyValue(),
    });
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'BAD_REQUEST_PARAMETERS',
      StatusCode: '422',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('validation_error') },
    });
  });

  it('throttles the stage as a backstop, and writes no access log line beside the function\'s own unless asked (cdk context accessLogs)', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: Match.absent(),
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 })],
    });
  });

  it('runs every handler on ARM64 with the newest Node.js runtime, with its own log group', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    expect(Object.keys(functions)).toHaveLength(42);
    for (const fn of Object.values(functions) as { Properties: Record<string, unknown> }[]) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], LoggingConfig: { LogGroup: expect.anything() } });
    }
    // One a function (the API's access logs only when asked for).
    template.resourceCountIs('AWS::Logs::LogGroup', 42);
  });

  it('sizes list and delete from the scale bench: deletes get a whole vCPU (1,769 MB), list 1,024 MB and a stream\'s 15 minutes', () => {
    const sizing = (name: keyof DriveStack['functions']) => {
      const fn = template.findResources('AWS::Lambda::Function')[stack.getLogicalId(stack.functions[name].node.defaultChild as never)] as { Properties: { MemorySize: number; Timeout: number } };
      return { name, memory: fn.Properties.MemorySize, timeout: fn.Properties.Timeout };
    };
    expect(sizing('delete-folder')).toEqual({ name: 'delete-folder', memory: 1769, timeout: 29 });
    expect(sizing('job-worker')).toEqual({ name: 'job-worker', memory: 1769, timeout: 300 });
    expect(sizing('list')).toEqual({ name: 'list', memory: 1024, timeout: 900 });
    expect(sizing('move')).toEqual({ name: 'move', memory: 1769, timeout: 29 });
  });

  it('grants each function exactly the calls it makes, on its own resources', () => {
    // Its logs, and its X-Ray segments (active tracing).
    const logs = ['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
    const base = ['dynamodb:GetItem', 'dynamodb:UpdateItem', ...logs];
    const expected: Record<Exclude<keyof DriveStack['functions'], 'dashboard' | 'openapi' | 'sweep' | 'job-worker' | 'consistency-check' | 'sequencer' | 'webhook-worker' | 'webhook-dispatcher'>, string[]> = {
      upload: [
        ...['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], // records
        ...['dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], // the journal, a failure's empty-folder jobs
        ...['s3:DeleteObject', 's3:PutObject'],
      ],
      download: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 's3:GetObject', 's3:ListBucket'],
      list: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
      'create-folder': [
        ...['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], // folders
        ...['dynamodb:PutItem', 'dynamodb:UpdateItem'], // a failure's empty-folder jobs
      ],
      'delete-folder': [
        ...['dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 's3:DeleteObject'], // the tree, and its trash row
        ...['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem', ...SEND], // the job, and the drive's background jobs
      ],
      'delete-files': ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:PutItem', 's3:DeleteObject'],
      move: [
        ...['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], // records and folders
        ...['dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem', ...SEND], // the journal and the job
        'dynamodb:PutItem', // a file move's mark, for the change feed
        's3:DeleteObject',
      ],
      copy: [
        ...['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], // records
        ...['dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', ...SEND], // the journal, a folder copy's job
        ...['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'],
      ],
      'get-job': ['dynamodb:GetItem'],
      // The change log, read only.
      changes: ['dynamodb:Query'],
      // The trash (issue 28): rows read; a restore as a writer; a purge's claim, bytes and items.
      'trash-list': ['dynamodb:Query'],
      'trash-restore': [
        ...['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        ...['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      ],
      'trash-purge': ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 's3:DeleteObject'],
      'trash-empty': ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 's3:DeleteObject'],
      // The guard's own reads and writes (the base grant), nothing more.
      whoami: [],
      'start-upload': ['dynamodb:GetItem', 'dynamodb:PutItem', 's3:AbortMultipartUpload', 's3:PutObject'],
      'upload-parts': ['dynamodb:GetItem', 's3:PutObject'],
      'complete-upload': [
        ...['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'], // sessions, a failure's empty-folder jobs
        ...['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], // records
        ...['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:ListMultipartUploadParts', 's3:PutObject'],
      ],
      'abort-upload': ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 's3:AbortMultipartUpload'],
      'list-keys': ['dynamodb:Query'],
      'create-key': ['dynamodb:PutItem', 'dynamodb:Scan'],
      'revoke-key': ['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Scan'],
      // The drive's rules item, read and written whole.
      'create-trust': ['dynamodb:PutItem'],
      'list-trust': [],
      // The rules item written, then the rule's keys found in the keys-by-drive index and revoked (the base UpdateItem).
      'revoke-trust': ['dynamodb:PutItem', 'dynamodb:Query'],
      // The rules read, the key stored; the rate-limit buckets and a take-back are the base UpdateItem.
      'exchange-token': ['dynamodb:PutItem'],
      'create-link': ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem'],
      'list-links': ['dynamodb:BatchGetItem', 'dynamodb:Query'],
      'revoke-link': ['dynamodb:DeleteItem', 'dynamodb:Query'],
      // Webhooks, in the changes table: the log's head read; the count raised, the webhook stored and its drive noted.
      'create-webhook': ['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
      'list-webhooks': ['dynamodb:Query'],
      'delete-webhook': ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
      'list-deliveries': ['dynamodb:GetItem', 'dynamodb:Query'],
      // The link and its rate-limit bucket (the base grant), then what a download reads.
      'open-link': ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 's3:GetObject', 's3:ListBucket'],
    };
    for (const [endpoint, actions] of Object.entries(expected)) {
      expect({ endpoint, actions: actionsOf(endpoint as keyof DriveStack['functions']) }).toEqual({ endpoint, actions: [...base, ...actions].sort() });
    }
    // The dashboard serves files from its bundle, and the OpenAPI document is rendered from constants: each may write its logs and nothing else.
    expect(actionsOf('dashboard')).toEqual(logs);
    expect(actionsOf('openapi')).toEqual(logs);
    // The sweep reads the journal and the records it names, and deletes what no record points to.
    // and sends stalled delete jobs to the worker again.
    // It purges the trash's due rows too (their due entries and rows, the trash notes of the journal's keys), and
    // reads a withdrawn writer's note and trashes what it left (a row and its note, once its bytes are found).
    expect(actionsOf('sweep')).toEqual(
      [
        ...['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Scan', 'dynamodb:UpdateItem'],
        ...['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        ...logs,
        ...['s3:DeleteObject', 's3:GetObject'],
        ...SEND,
      ].sort(),
    );
    // The worker reads its queue (the event source), and deletes as the request does.
    expect(actionsOf('job-worker')).toEqual(
      [
        ...['dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'], // the job, a moved file's upload, a copy's journal
        ...['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], // the tree
        'dynamodb:PutItem', // a moved file's mark, for the change feed
        ...['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'],
        ...['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
        ...SEND,
        ...logs,
      ].sort(),
    );
    // No statement on every resource but X-Ray's and DynamoDB's ListStreams (the sequencer's stream mapping), whose
    // actions take no other.
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement);
    const onEverything = statements.filter((s) => s.Resource === '*').flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    expect([...new Set(onEverything)].sort()).toEqual(['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });

  it('never lets a function trust a loopback token issuer: DRIVE_TRUST_LOOPBACK_ISSUERS is the local host\'s alone', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }[];
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) expect(Object.keys(fn.Properties.Environment?.Variables ?? {})).not.toContain('DRIVE_TRUST_LOOPBACK_ISSUERS');
  });

  it('feeds webhook deliveries to their worker from an encrypted FIFO queue, a message at a time, kept 14 days, the most SQS keeps, with a FIFO dead-letter queue', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      MessageRetentionPeriod: 14 * 24 * 60 * 60,
      VisibilityTimeout: 6 * 30,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: 100 },
    });
    template.hasResourceProperties('AWS::SQS::Queue', { FifoQueue: true, MessageRetentionPeriod: 14 * 24 * 60 * 60 });
    const worker = stack.getLogicalId(stack.functions['webhook-worker'].node.defaultChild as never);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: worker }, BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    // The worker reads its webhook and writes a failure off; the queue's receive, delete and visibility are the event source's.
    expect(actionsOf('webhook-worker')).toEqual(
      ['dynamodb:GetItem', 'dynamodb:PutItem', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage', 'logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'].sort(),
    );
    // The dispatcher follows the log on a 1-minute schedule (and the sequencer's nudges) and sends deliveries.
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect(actionsOf('webhook-dispatcher')).toEqual(
      ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', ...SEND, 'logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'].sort(),
    );
    // Neither may deliver to loopback: that setting is the local host's alone.
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }[];
    for (const fn of functions) expect(Object.keys(fn.Properties.Environment?.Variables ?? {})).not.toContain('DRIVE_WEBHOOK_ALLOW_LOOPBACK');
  });

  it('feeds delete jobs to their worker from an encrypted queue, a message at a time, with a dead-letter queue after 5 failures', () => {
    template.resourceCountIs('AWS::SQS::Queue', 4);
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 6 * 300,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: 5 },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateNumberOfMessagesVisible', Namespace: 'AWS/SQS', Threshold: 1 });
    // The functions that send jobs know the queue.
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ DRIVE_JOB_QUEUE_URL: Match.anyValue() }) } });
  });

  it('lists a drive\'s keys and share links from indexes by drive, never a scan of every drive\'s', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'keysByDrive',
          KeySchema: [
            { AttributeName: 'drive', KeyType: 'HASH' },
            { AttributeName: 'createdAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
        Match.objectLike({
          IndexName: 'linksByDrive',
          KeySchema: [
            { AttributeName: 'linkDrive', KeyType: 'HASH' },
            { AttributeName: 'linkPath', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
      ],
    });
    expect(actionsOf('list-keys')).not.toContain('dynamodb:Scan');
    expect(actionsOf('list-links')).not.toContain('dynamodb:Scan');
  });

  it('streams the nodes table to the change feed\'s sequencer, a batch of 100 a shard at a time from the oldest record, and keeps changes in a table with TTL', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
    template.hasResourceProperties('AWS::DynamoDB::Table', { TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true }, KeySchema: Match.arrayWith([{ AttributeName: 'sk', KeyType: 'RANGE' }]) });
    const sequencer = stack.getLogicalId(stack.functions.sequencer.node.defaultChild as never);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: sequencer },
      BatchSize: 100,
      ParallelizationFactor: 1,
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      EventSourceArn: Match.anyValue(),
    });
    // Retried until the records expire: no attempt or age limit.
    const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping', { Properties: { FunctionName: { Ref: sequencer } } }))[0] as { Properties: Record<string, unknown> };
    expect(mapping.Properties.MaximumRetryAttempts).toBeUndefined();
    expect(mapping.Properties.MaximumRecordAgeInSeconds).toBeUndefined();
    // The stream's reads, and the log's: its state, the move marks, and one transaction.
    expect(actionsOf('sequencer')).toEqual(
      [
        ...['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
        ...['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem'],
        ...['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
      ].sort(),
    );
  });

  it('runs the sweep of interrupted uploads every 5 minutes', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
  });

  describe('the scheduled consistency check', () => {
    const checkFunction = () => stack.getLogicalId(stack.functions['consistency-check'].node.defaultChild as never);

    it('runs its function once a day by default, with no retry, for up to 15 minutes', () => {
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(1 day)',
        State: 'ENABLED',
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [checkFunction(), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } })],
      });
      const fn = template.findResources('AWS::Lambda::Function')[checkFunction()] as { Properties: { Timeout: number; MemorySize: number; Environment: { Variables: Record<string, unknown> } } };
      expect(fn.Properties).toMatchObject({ Timeout: 900, MemorySize: 1024 });
      expect(fn.Properties.Environment.Variables).toMatchObject({ DRIVE_NODES_TABLE: expect.anything(), DRIVE_BUCKET: expect.anything(), DRIVE_UPLOADS_TABLE: expect.anything() });
      // It deletes orphaned objects past the grace period unless told not to (docs/hot-path-design.md).
      expect(fn.Properties.Environment.Variables.DRIVE_FSCK_REPAIR).toBe('orphans');
    });

    it('by default reads the bucket and the nodes table, deletes objects of the bucket (orphans), and writes no item but its own cursor and orphan candidates', () => {
      const logs = ['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
      expect(actionsOf('consistency-check')).toEqual(
        ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:Scan', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem', 's3:ListBucket', 's3:GetObject', 's3:DeleteObject', ...logs].sort(),
      );
      const roleId = stack.getLogicalId(stack.functions['consistency-check'].role!.node.defaultChild as never);
      const statements = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } })).flatMap(
        (p) => (p as { Properties: { PolicyDocument: { Statement: (Statement & { Condition?: unknown })[] } } }).Properties.PolicyDocument.Statement,
      );
      const puts = statements.filter((s) => ([] as string[]).concat(s.Action).includes('dynamodb:PutItem'));
      expect(puts).toEqual([expect.objectContaining({ Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['fsck#cursor'] } } })]);
      // Its candidates between runs (docs/consistency-check.md): those items of the uploads table only.
      const batchWrites = statements.filter((s) => ([] as string[]).concat(s.Action).includes('dynamodb:BatchWriteItem'));
      expect(batchWrites).toEqual([expect.objectContaining({ Action: 'dynamodb:BatchWriteItem', Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['fsck#orphan#*'] } } })]);
      // The delete is of the files bucket's objects only: no other bucket, not the bucket itself.
      const bucketId = Object.keys(template.findResources('AWS::S3::Bucket', { Properties: { LoggingConfiguration: Match.anyValue() } }))[0];
      const deletes = statements.filter((s) => ([] as string[]).concat(s.Action).includes('s3:DeleteObject'));
      expect(deletes).toHaveLength(1);
      expect(deletes[0].Resource).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/*']] });
    });

    it('alarms on any finding, on two periods without a finished run, and on errors of its function', () => {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'Drive',
        MetricName: 'ConsistencyFindings',
        Dimensions: [{ Name: 'Bucket', Value: Match.anyValue() }],
        Statistic: 'Maximum',
        Period: 86_400,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'Drive',
        MetricName: 'ConsistencyCheckRuns',
        Statistic: 'Sum',
        Period: 86_400,
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        TreatMissingData: 'breaching',
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: checkFunction() } }],
      });
      expect(stack.alarms.map((alarm) => alarm.node.id)).toEqual(expect.arrayContaining(['ConsistencyFindings', 'ConsistencyCheckNotRunning', 'RepairedObjectsHigh']));
    });

    it('alarms when it deletes 100 or more orphans in one period (docs/consistency-check.md, "Brakes")', () => {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'Drive',
        MetricName: 'RepairedObjects',
        Dimensions: [{ Name: 'Bucket', Value: Match.anyValue() }],
        Statistic: 'Sum',
        Period: 86_400,
        EvaluationPeriods: 1,
        Threshold: 100,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    });

    it('refuses a grace period under 15 minutes while repair deletes, naming the context key; passes one it takes to the function', () => {
      const app = () => templateApp();
      expect(() => new DriveStack(app(), 'NoGrace', { consistencyCheck: { graceMinutes: 0 } })).toThrow(
        'fsckGraceMinutes must be at least 15 while fsckRepair deletes orphans (got 0); set fsckRepair=off to report only',
      );
      expect(() => new DriveStack(app(), 'ShortGrace', { consistencyCheck: { graceMinutes: 14, repair: 'all' } })).toThrow(/fsckGraceMinutes must be at least 15/);
      const reporting = Template.fromStack(new DriveStack(app(), 'ReportingNoGrace', { consistencyCheck: { graceMinutes: 0, repair: 'off' } }));
      reporting.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ DRIVE_FSCK_REPAIR: 'off', DRIVE_FSCK_GRACE_MINUTES: '0' }) } });
      const graced = Template.fromStack(new DriveStack(app(), 'Graced', { consistencyCheck: { graceMinutes: 15 } }));
      graced.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ DRIVE_FSCK_REPAIR: 'orphans', DRIVE_FSCK_GRACE_MINUTES: '15' }) } });
    });

    it('reports only, and may then delete nothing, when fsckRepair is off', () => {
      const reporting = new DriveStack(templateApp(), 'Reporting', { consistencyCheck: { repair: 'off' } });
      const reported = Template.fromStack(reporting);
      reported.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ DRIVE_FSCK_REPAIR: 'off' }) } });
      const roleId = reporting.getLogicalId(reporting.functions['consistency-check'].role!.node.defaultChild as never);
      const actions = Object.values(reported.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } }))
        .flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement)
        .flatMap((s) => ([] as string[]).concat(s.Action as string | string[]));
      expect(actions.filter((a) => /^(s3:(Put|Delete)|dynamodb:(Delete|Update|BatchWrite))/.test(a))).toEqual([]);
    });

    it('also makes folders when fsckRepair is true, on the period fsckEveryHours gives', () => {
      // Not bundled: only the template matters here.
      const repairing = new DriveStack(templateApp(), 'Repairing', { consistencyCheck: { everyHours: 6, repair: 'all' } });
      const repaired = Template.fromStack(repairing);
      const fnId = repairing.getLogicalId(repairing.functions['consistency-check'].node.defaultChild as never);
      repaired.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(6 hours)', Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [fnId, 'Arn'] } })] });
      repaired.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ DRIVE_FSCK_REPAIR: 'true' }) } });
      repaired.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ConsistencyFindings', Period: 6 * 3600 });
      const roleId = repairing.getLogicalId(repairing.functions['consistency-check'].role!.node.defaultChild as never);
      const actions = Object.values(repaired.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } }))
        .flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement)
        .flatMap((s) => ([] as string[]).concat(s.Action as string | string[]));
      expect(actions).toEqual(expect.arrayContaining(['s3:DeleteObject', 'dynamodb:UpdateItem', 'dynamodb:Query', 'dynamodb:DeleteItem']));
      expect(actions).not.toContain('s3:PutObject');
      expect(() => new DriveStack(templateApp(), 'TooRare', { consistencyCheck: { everyHours: 100 } })).toThrow(/fsckEveryHours/);
    });
  });

  it('never lets the list, download or share-link function write (but for its rate-limit bucket)', () => {
    for (const endpoint of ['list', 'download', 'open-link'] as const) {
      const writes = actionsOf(endpoint).filter((a) => /^(s3:(Put|Delete)|dynamodb:(Put|Delete|BatchWrite|Update(?!Item$)))/.test(a));
      expect(writes).toEqual([]);
    }
    const listing = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(listing).not.toMatch(/"Action":"\*"|"s3:\*"|"dynamodb:\*"/);
  });

  it('keeps the files bucket private, encrypted, TLS-only, retained, and clears stale multipart uploads', () => {
    const bucketId = Object.keys(template.findResources('AWS::S3::Bucket', { Properties: { LoggingConfiguration: Match.anyValue() } }))[0];
    template.hasResource('AWS::S3::Bucket', {
      Properties: Match.objectLike({
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: Match.anyValue(),
        LifecycleConfiguration: { Rules: [Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } })] },
      }),
      DeletionPolicy: 'Retain',
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('keeps the four tables on demand, recoverable and protected, with TTL on rate-limit items, upload sessions and changes', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 4);
    const tables = Object.values(template.findResources('AWS::DynamoDB::Table')) as { Properties: Record<string, unknown>; DeletionPolicy: string }[];
    for (const table of tables) {
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
      });
    }
    const withTtl = template.findResources('AWS::DynamoDB::Table', { Properties: { TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } } });
    expect(Object.keys(withTtl)).toHaveLength(3);
    template.hasResourceProperties('AWS::DynamoDB::Table', { KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }], TimeToLiveSpecification: Match.anyValue() });
    // The changes table: a drive's log by position, the webhooks' items beside it (docs/change-feed-design.md).
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it("lets browsers PUT large-upload parts to the bucket from the configured origins and the API's own, and read their ETags", () => {
    const apiOrigin = { 'Fn::Join': ['', ['https://', { Ref: stack.getLogicalId(stack.api.node.defaultChild as never) }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] };
    template.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedMethods: ['PUT'], AllowedOrigins: ['https://app.example.com', apiOrigin], ExposedHeaders: ['ETag'] })] },
    });
    // Without configured origins, the dashboard (served by the API) still may.
    const bare = new DriveStack(templateApp(), 'Bare');
    Template.fromStack(bare).hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedMethods: ['PUT'], AllowedOrigins: [Match.objectLike({ 'Fn::Join': Match.anyValue() })] })] },
    });
  });

  it('serves the dashboard from a function of its own at GET / and GET /{file}, its files inside the bundle', () => {
    const dashboard = stack.getLogicalId(stack.functions.dashboard.node.defaultChild as never);
    const gets = Object.values(template.findResources('AWS::ApiGateway::Method', { Properties: { HttpMethod: 'GET' } })) as { Properties: { Integration: unknown; ResourceId: unknown } }[];
    const served = gets.filter((method) => JSON.stringify(method.Properties.Integration).includes(dashboard));
    expect(served).toHaveLength(DASHBOARD_ROUTES.length);
    // One on the API's root resource (a GetAtt of the RestApi), one on /{file}.
    expect(served.map((method) => JSON.stringify(method.Properties.ResourceId)).sort()).toEqual([
      expect.stringContaining('RootResourceId'),
      expect.stringContaining(stack.getLogicalId(stack.api.root.getResource('{file}')!.node.defaultChild as never)),
    ].sort());
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          DRIVE_DASHBOARD_DIR: '/var/task/dashboard',
          DRIVE_PART_UPLOAD_ORIGIN: { 'Fn::Join': ['', ['https://', { Ref: Match.stringLikeRegexp('^Files') }, '.s3.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] },
        }),
      },
    });
    // The bundle is staged in the assembly as asset.<hash>, the name of its zip in the function's code.
    const code = (template.toJSON() as { Resources: Record<string, { Properties: { Code: { S3Key: string } } }> }).Resources[dashboard].Properties.Code;
    const staged = join(app.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    for (const file of ['index.mjs', 'dashboard/index.html', 'dashboard/app.js', 'dashboard/style.css']) expect({ file, staged: existsSync(join(staged, file)) }).toEqual({ file, staged: true });

    // The bundle, run as Lambda runs it (an ES module), serves the page from its own copy of the files.
    const script = `const { handler } = await import(${JSON.stringify(join(staged, 'index.mjs'))});
      const event = { path: '/', pathParameters: null, headers: {}, multiValueHeaders: {}, requestContext: { path: '/v1/' } };
      const answer = await handler(event);
      process.stdout.write(String.fromCharCode(10) + JSON.stringify(answer));`;
    const env = { ...process.env, DRIVE_DASHBOARD_DIR: join(staged, 'dashboard'), DRIVE_PART_UPLOAD_ORIGIN: 'https://files.s3.eu-west-1.amazonaws.com' };
    // The last line: the request's log line comes first.
    const answer = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' }).trim().split('\n').at(-1)!) as { statusCode: number; headers: Record<string, string>; body: string };
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('<script type="module" src="app.js"></script>');
    expect(answer.headers['Content-Security-Policy']).toContain("connect-src 'self' https://files.s3.eu-west-1.amazonaws.com;");
  });

  it('serves the OpenAPI document from a function of its own at GET /openapi.json, with no key and no resource', () => {
    const openapi = stack.getLogicalId(stack.functions.openapi.node.defaultChild as never);
    const gets = Object.values(template.findResources('AWS::ApiGateway::Method', { Properties: { HttpMethod: 'GET' } })) as { Properties: { Integration: unknown; ResourceId: unknown; AuthorizationType?: string } }[];
    const served = gets.filter((method) => JSON.stringify(method.Properties.Integration).includes(openapi));
    expect(served).toHaveLength(CONTRACT_ROUTES.length);
    expect(JSON.stringify(served[0].Properties.ResourceId)).toContain(stack.getLogicalId(stack.api.root.getResource('openapi.json')!.node.defaultChild as never));
    expect(served[0].Properties.AuthorizationType ?? 'NONE').toBe('NONE');
  });

  it('alarms on the API 5xx rate and on errors and throttles of every function', () => {
    // API 5xx, jobs and deliveries dead-lettered, orphaned objects and the 429 rate; errors and throttles of each function; and the consistency check's two: findings, and no finished run.
    template.resourceCountIs('AWS::CloudWatch::Alarm', 1 + 1 + 1 + 3 + 42 * 2 + 2);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { Metrics: Match.arrayWith([Match.objectLike({ Expression: Match.stringLikeRegexp('errors') })]) });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Throttles', Namespace: 'AWS/Lambda' });
  });

  it('answers CORS preflight for the configured origins on every resource, and on API Gateway\'s own errors', () => {
    const options = Object.values(template.findResources('AWS::ApiGateway::Method', { Properties: { HttpMethod: 'OPTIONS' } }));
    // /, /drive, the four resources of the spec, /drive/files, /drive/move, /drive/copy, /drive/whoami, four of large
    // uploads, two of keys, two of trust rules, /drive/token, two of jobs, two of links, three of webhooks, three of
    // the change feed (/drive/changes, its /latest and /recent), /s and /s/{token}, /openapi.json, the dashboard's
    // /{file}, and the trash's three (/drive/trash, its /restore and /{item_id})
    expect(options).toHaveLength(36);
    for (const method of options) expect(JSON.stringify(method)).toContain('https://app.example.com');
    // Preflights allow HEAD and the request headers of ranged and conditional downloads.
    for (const method of options) {
      const preflight = JSON.stringify(method);
      for (const allowed of ['HEAD', 'Range', 'If-Range', 'If-None-Match', 'If-Modified-Since']) expect(preflight).toContain(allowed);
    }
    const responses = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')) as { Properties: { ResponseParameters: Record<string, string> } }[];
    expect(responses).toHaveLength(6);
    for (const response of responses) {
      expect(response.Properties.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe("'https://app.example.com'");
    }
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ DRIVE_CORS_ORIGINS: 'https://app.example.com' }) } });
  });

  it("keeps API Gateway's own status on the catch-all errors, only reshaping their body", () => {
    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX']) {
      const [response] = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } })) as { Properties: Record<string, unknown> }[];
      expect(response.Properties.StatusCode).toBeUndefined();
      expect(Object.values(response.Properties.ResponseTemplates as Record<string, string>)[0]).toMatch(/^\{"error":\{"code":/);
    }
  });

  it('outputs the API and dashboard URLs, the bucket and the table names, and the alarm topic', () => {
    for (const name of ['ApiUrl', 'DashboardUrl', 'BucketName', 'NodesTableName', 'AccessTableName', 'UploadsTableName', 'AlarmTopicArn']) template.hasOutput(name, Match.anyValue());
  });

  describe('observability', () => {
    // A stack as cdk context configures it, with alarms added after it is built; not bundled (its code is the main stack's).
    const variant = new DriveStack(templateApp(), 'Variant', { logLevel: 'WARN', alarmEmail: 'ops@example.com', tracing: { sampleRate: 0.05, reservoirPerSecond: 0 } });
    const verbose = Template.fromStack(new DriveStack(templateApp(), 'Verbose', { extraLogs: { accessLogs: true, platformLogs: true } }));
    new Alarm(variant, 'AddedLater', { metric: variant.functions.upload.metricErrors(), threshold: 1, evaluationPeriods: 1 });
    new CfnAlarm(variant, 'AddedBare', { comparisonOperator: 'GreaterThanThreshold', evaluationPeriods: 1, threshold: 0, metricName: 'Findings', namespace: 'Drive', period: 300, statistic: 'Sum' });
    const variantTemplate = Template.fromStack(variant);
    const topicId = stack.getLogicalId(stack.alarmTopic.node.defaultChild as never);
    type AlarmProps = { Properties: { AlarmActions?: unknown[]; OKActions?: unknown[]; AlarmName?: string } };

    it("runs every function in JSON log format at the INFO level, without Lambda's start and report lines, traced by X-Ray, with its metrics namespace and service", () => {
      const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: Record<string, unknown> }[];
      expect(functions).toHaveLength(42);
      for (const fn of functions) {
        expect(fn.Properties).toMatchObject({
          // Lambda writes its platform.start and platform.report at INFO: WARN leaves the request's own line alone.
          LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: 'INFO', SystemLogLevel: 'WARN' },
          TracingConfig: { Mode: 'Active' },
          Environment: { Variables: expect.objectContaining({ DRIVE_METRICS_NAMESPACE: 'Drive', DRIVE_METRICS_SERVICE: 'Test' }) },
        });
      }
    });

    it('traces the API stage', () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
    });

    it("samples the stage's requests by a rule of its own: 1 a second, then 1 %, unless the stack says otherwise (cdk context traceSampleRate, traceReservoir)", () => {
      template.resourceCountIs('AWS::XRay::SamplingRule', 1);
      template.hasResourceProperties('AWS::XRay::SamplingRule', {
        SamplingRule: {
          RuleName: 'Test-api',
          Priority: 1000,
          FixedRate: 0.01,
          ReservoirSize: 1,
          ServiceName: 'Test-api/v1',
          ServiceType: 'AWS::ApiGateway::Stage',
          Host: '*',
          HTTPMethod: '*',
          URLPath: '*',
          ResourceARN: '*',
          Version: 1,
        },
      });
      variantTemplate.hasResourceProperties('AWS::XRay::SamplingRule', { SamplingRule: Match.objectLike({ FixedRate: 0.05, ReservoirSize: 0, ServiceName: 'Variant-api/v1' }) });
      // The rule matches the stage by API Gateway's name for it.
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'Test-api' });
      template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'v1' });
    });

    it('refuses a sampling rate outside 0 to 1 and a reservoir that is not a whole number', () => {
      const make = (tracing: { sampleRate?: number; reservoirPerSecond?: number }) => () => new DriveStack(templateApp(), 'BadTracing', { tracing });
      expect(make({ sampleRate: 5 })).toThrow('tracing.sampleRate must be between 0 and 1 (got 5)');
      expect(make({ sampleRate: Number.NaN })).toThrow('tracing.sampleRate');
      expect(make({ reservoirPerSecond: 0.5 })).toThrow('tracing.reservoirPerSecond must be a whole number (got 0.5)');
    });

    it("adds API Gateway's access lines and Lambda's platform lines when asked (cdk context accessLogs, platformLogs)", () => {
      verbose.hasResourceProperties('AWS::ApiGateway::Stage', { AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }) });
      verbose.resourceCountIs('AWS::Logs::LogGroup', 42 + 1);
      verbose.allResourcesProperties('AWS::Lambda::Function', { LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: 'INFO', SystemLogLevel: 'INFO' } });
    });

    it('takes the log level from the stack (cdk context logLevel)', () => {
      variantTemplate.allResourcesProperties('AWS::Lambda::Function', { LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: 'WARN', SystemLogLevel: 'WARN' } });
    });

    it('has every alarm notify the encrypted, TLS-only alarm topic, on alarm and on recovery, alarms added after the stack was built included', () => {
      template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
      template.hasResourceProperties('AWS::SNS::TopicPolicy', { PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) } });
      template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true, KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' } })]) } });
      const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as AlarmProps[];
      expect(alarms.length).toBeGreaterThan(0);
      for (const alarm of alarms) {
        expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
        expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
      }

      // Alarms another part of the stack adds after it is built, an L2 alarm and a bare CfnAlarm, notify the topic too.
      const variantTopic = { Ref: variant.getLogicalId(variant.alarmTopic.node.defaultChild as never) };
      for (const id of ['AddedLater', 'AddedBare']) {
        const [alarm] = Object.entries(variantTemplate.findResources('AWS::CloudWatch::Alarm')).filter(([logicalId]) => logicalId.startsWith(id)).map(([, a]) => a as AlarmProps);
        expect(alarm.Properties.AlarmActions).toEqual([variantTopic]);
      }
    });

    it('subscribes an e-mail address to the alarm topic when given one (cdk context alarmEmail), and none otherwise', () => {
      template.resourceCountIs('AWS::SNS::Subscription', 0);
      variantTemplate.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: Match.anyValue() });
    });

    it('alarms on orphaned objects and on the 429 rate from the embedded metrics', () => {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'Drive', MetricName: 'OrphanedObjects', Dimensions: [{ Name: 'Service', Value: 'Test' }], Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Metrics: Match.arrayWith([Match.objectLike({ Id: 'limited', MetricStat: Match.objectLike({ Metric: Match.objectLike({ Namespace: 'Drive', MetricName: 'RateLimited' }) }) })]),
      });
    });

    it('draws a dashboard of requests, errors, 429s, latency p50 and p99, bytes, orphaned objects and each function', () => {
      const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as { Properties: { DashboardBody: unknown } }[];
      const body = JSON.stringify(dashboard.Properties.DashboardBody);
      for (const metric of ['Requests', 'ServerErrors', 'ClientErrors', 'RateLimited', 'Latency', 'BytesIn', 'BytesOut', 'OrphanedObjects', 'Errors', 'Throttles', 'Duration']) expect(body).toContain(`\\"${metric}\\"`);
      for (const stat of ['p50', 'p99']) expect(body).toContain(stat);
      expect(body).toContain('alarm');
    });

    it("puts API Gateway's request id in the body of each of its own errors, as the host does", () => {
      const responses = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')) as { Properties: { ResponseType: string; ResponseTemplates: Record<string, string> } }[];
      for (const response of responses) expect(Object.values(response.Properties.ResponseTemplates)[0]).toContain('"request_id":"$context.requestId"');
      const [throttled] = responses.filter((r) => r.Properties.ResponseType === 'THROTTLED');
      expect(throttled.Properties.ResponseTemplates['application/json']).toBe(gatewayErrorBody('throttled', '$context.requestId'));
    });
  });

  it('passes the AWS Solutions checks of cdk-nag with no error', () => {
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const errors = report.violations.filter((v) => v.severity === 'error');
    expect(errors.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.resourceLogicalId).join(', ')}`)).toEqual([]);
  });

  it('synthesizes as bin/app.ts does, with the checks as a validation plugin', () => {
    const checked = new App({ outdir });
    new DriveStack(checked, 'Checked');
    Validations.of(checked).addPlugins(new AwsSolutionsChecks(checked));
    expect(() => checked.synth()).not.toThrow();
  });

  it('lets an operator destroy data with the stack when asked to', () => {
    const disposable = Template.fromStack(new DriveStack(new App({ outdir }), 'Scratch', { dataRemovalPolicy: RemovalPolicy.DESTROY, deletionProtection: false }));
    disposable.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
    disposable.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ LoggingConfiguration: Match.anyValue() }) });
    // S3 goes on delivering access logs, so their bucket is kept whatever the policy.
    disposable.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 90 })] } }) });
  });
});

// Review of issue 27 (c27-hooks): each webhook function may call on the changes table what its store calls there
// (functions/aws/dynamo-webhooks.ts). Registering ends in DynamoWebhookStore.create, which puts the webhook
// (PutItem) and then notes its drive in the `hookdrives` item (UpdateItem ADD), both in the changes table.
describe('DriveStack: webhook functions on the changes table', () => {
  /** The actions the function's role may call on the changes table. */
  function changesActionsOf(fn: keyof DriveStack['functions']): string[] {
    const roleId = stack.getLogicalId(stack.functions[fn].role!.node.defaultChild as never);
    const changesId = stack.getLogicalId((stack.node.findChild('Changes') as Table).node.defaultChild as never);
    const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } });
    return Object.values(policies)
      .flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement)
      .filter((s) => JSON.stringify(s.Resource).includes(changesId))
      .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
      .sort();
  }

  it('lets create-webhook note its drive among those with webhooks (UpdateItem of the hookdrives item)', () => {
    expect(changesActionsOf('create-webhook')).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']));
  });
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

import { App, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DriveStack } from '../../lib/drive-stack';
import { ROUTES } from '../../lib/routes';

// One synthesis (five esbuild bundles) shared by every assertion.
const app = new App();
const stack = new DriveStack(app, 'Test', { corsOrigins: ['https://app.example.com'] });
const template = Template.fromStack(stack);

type Statement = { Action: string | string[]; Resource: unknown };

/** Every IAM action granted to the role of the function for `endpoint`. */
function actionsOf(endpoint: keyof DriveStack['functions']): string[] {
  const roleId = stack.getLogicalId(stack.functions[endpoint].role!.node.defaultChild as never);
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } });
  return Object.values(policies)
    .flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement)
    .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
    .sort();
}

describe('DriveStack', () => {
  it('routes every route of the spec, HEAD of downloads, and the three of large uploads to Lambda proxy integrations', () => {
    for (const route of ROUTES) {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: route.method,
        Integration: Match.objectLike({ Type: 'AWS_PROXY' }),
      });
    }
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method')).map((m) => (m as { Properties: { HttpMethod: string } }).Properties.HttpMethod);
    expect(methods.filter((m) => m !== 'OPTIONS').sort()).toEqual(['DELETE', 'DELETE', 'DELETE', 'GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'POST', 'POST', 'POST']);
    const resources = Object.values(template.findResources('AWS::ApiGateway::Resource')).map((r) => (r as { Properties: { PathPart: string } }).Properties.PathPart);
    expect(resources).toEqual(expect.arrayContaining(['uploads', '{upload_id}', 'complete', 'keys', '{key_id}']));
  });

  it('streams GET and HEAD of downloads from the one download function, and buffers the rest', () => {
    const streamed = template.findResources('AWS::ApiGateway::Method', { Properties: { Integration: { ResponseTransferMode: 'STREAM', TimeoutInMillis: 900_000 } } });
    const methods = Object.values(streamed) as { Properties: { HttpMethod: string; Integration: unknown } }[];
    expect(methods.map((m) => m.Properties.HttpMethod).sort()).toEqual(['GET', 'HEAD']);
    const downloadFunction = stack.getLogicalId(stack.functions.download.node.defaultChild as never);
    for (const method of methods) {
      expect(JSON.stringify(method.Properties.Integration)).toContain('response-streaming-invocations');
      expect(JSON.stringify(method.Properties.Integration)).toContain(downloadFunction);
    }
    // Both methods sit on the one /drive/download resource.
    expect(new Set(methods.map((m) => JSON.stringify((m.Properties as unknown as { ResourceId: unknown }).ResourceId))).size).toBe(1);
    // One function serves both methods: one function per handler, eleven in all.
    template.resourceCountIs('AWS::Lambda::Function', 11);
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

  it('logs access and throttles the stage as a backstop', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 })],
    });
  });

  it('runs every handler on ARM64 with the newest Node.js runtime, with its own log group', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    expect(Object.keys(functions)).toHaveLength(11);
    for (const fn of Object.values(functions) as { Properties: Record<string, unknown> }[]) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], LoggingConfig: { LogGroup: expect.anything() } });
    }
    template.resourceCountIs('AWS::Logs::LogGroup', 12);
  });

  it('grants each function exactly the calls it makes, on its own resources', () => {
    const base = ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'logs:CreateLogStream', 'logs:PutLogEvents'];
    const expected: Record<keyof DriveStack['functions'], string[]> = {
      upload: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 's3:DeleteObject', 's3:PutObject'],
      download: ['dynamodb:GetItem', 's3:GetObject', 's3:ListBucket'],
      list: ['dynamodb:GetItem', 'dynamodb:Query'],
      'create-folder': ['dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
      'delete-folder': ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 's3:DeleteObject'],
      'start-upload': ['dynamodb:GetItem', 'dynamodb:PutItem', 's3:AbortMultipartUpload', 's3:PutObject'],
      'complete-upload': [
        ...['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], // sessions
        ...['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], // records
        ...['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:ListMultipartUploadParts', 's3:PutObject'],
      ],
      'abort-upload': ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 's3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket'],
      'list-keys': ['dynamodb:Scan'],
      'create-key': ['dynamodb:PutItem'],
      'revoke-key': ['dynamodb:Scan'],
    };
    for (const [endpoint, actions] of Object.entries(expected)) {
      expect({ endpoint, actions: actionsOf(endpoint as keyof DriveStack['functions']) }).toEqual({ endpoint, actions: [...base, ...actions].sort() });
    }
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toContain('"Resource":"*"');
  });

  it('never lets the list or download function write', () => {
    for (const endpoint of ['list', 'download'] as const) {
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

  it('keeps the three tables on demand, recoverable and protected, with TTL on rate-limit items and upload sessions', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 3);
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
    expect(Object.keys(withTtl)).toHaveLength(2);
    template.hasResourceProperties('AWS::DynamoDB::Table', { KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }], TimeToLiveSpecification: Match.anyValue() });
  });

  it('lets browsers PUT large-upload parts to the bucket from the configured origins and read their ETags', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedMethods: ['PUT'], AllowedOrigins: ['https://app.example.com'], ExposedHeaders: ['ETag'] })] },
    });
  });

  it('alarms on the API 5xx rate and on errors and throttles of every function', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 1 + 11 * 2);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { Metrics: Match.arrayWith([Match.objectLike({ Expression: Match.stringLikeRegexp('errors') })]) });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Throttles', Namespace: 'AWS/Lambda' });
  });

  it('answers CORS preflight for the configured origins on every resource, and on API Gateway\'s own errors', () => {
    const options = Object.values(template.findResources('AWS::ApiGateway::Method', { Properties: { HttpMethod: 'OPTIONS' } }));
    expect(options).toHaveLength(11); // /, /drive, the four resources of the spec, three of large uploads, two of keys
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

  it('outputs the API URL, the bucket and the table names', () => {
    for (const name of ['ApiUrl', 'BucketName', 'NodesTableName', 'AccessTableName', 'UploadsTableName']) template.hasOutput(name, Match.anyValue());
  });

  it('passes the AWS Solutions checks of cdk-nag with no error', () => {
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const errors = report.violations.filter((v) => v.severity === 'error');
    expect(errors.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.resourceLogicalId).join(', ')}`)).toEqual([]);
  });

  it('synthesizes as bin/app.ts does, with the checks as a validation plugin', () => {
    const checked = new App();
    new DriveStack(checked, 'Checked');
    Validations.of(checked).addPlugins(new AwsSolutionsChecks(checked));
    expect(() => checked.synth()).not.toThrow();
  });

  it('lets an operator destroy data with the stack when asked to', () => {
    const disposable = Template.fromStack(new DriveStack(new App(), 'Scratch', { dataRemovalPolicy: RemovalPolicy.DESTROY, deletionProtection: false }));
    disposable.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
    disposable.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ LoggingConfiguration: Match.anyValue() }) });
    // S3 goes on delivering access logs, so their bucket is kept whatever the policy.
    disposable.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 90 })] } }) });
  });
});

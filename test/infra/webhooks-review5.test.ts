import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { DriveStack } from '../../lib/drive-stack';

// Review of issue 27 (c27-hooks): each webhook function may call on the changes table what its store calls
// there (functions/aws/dynamo-webhooks.ts). Registering ends in DynamoWebhookStore.create, which puts the
// webhook (PutItem) and then notes its drive in the `hookdrives` item (UpdateItem ADD), both in the changes
// table. Bundling is skipped: only the roles' policies are read.

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new DriveStack(app, 'Review', { corsOrigins: [] });
const template = Template.fromStack(stack);

type Statement = { Action: string | string[]; Resource: unknown };

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

describe('DriveStack: webhook functions on the changes table', () => {
  it('lets create-webhook note its drive among those with webhooks (UpdateItem of the hookdrives item)', () => {
    expect(changesActionsOf('create-webhook')).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']));
  });
});

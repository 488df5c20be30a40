import { Aspects, type IAspect } from 'aws-cdk-lib';
import { AlarmBase, CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct, type IConstruct } from 'constructs';

export interface AlarmTopicProps {
  /** An address to e-mail each alarm to (AWS asks it to confirm the subscription first). */
  email?: string;
}

/**
 * The SNS topic that every alarm of its scope notifies, on alarm and on recovery: alarms made anywhere in
 * the scope, before or after this, get the topic as an action when the app is synthesized (an aspect), so
 * no alarm added later can be forgotten. Encrypted with a key of its own that CloudWatch may use (the AWS
 * managed key of SNS lets no alarm publish), and reachable over TLS only.
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id);
    const key = new Key(this, 'Key', { enableKeyRotation: true, description: 'Encrypts the alarm topic; CloudWatch alarms publish to it' });
    key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new Topic(this, 'Topic', { displayName: 'Drive alarms', masterKey: key, enforceSSL: true });
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
    Aspects.of(scope).add(new NotifyEveryAlarm(this.topic));
  }
}

/** Adds `topic` to the alarm and OK actions of every alarm it visits, once: L2 alarms and bare `CfnAlarm`s alike. */
export class NotifyEveryAlarm implements IAspect {
  private readonly done = new WeakSet<IConstruct>();

  constructor(private readonly topic: Topic) {}

  visit(node: IConstruct): void {
    if (this.done.has(node)) return;
    if (node instanceof AlarmBase) {
      this.done.add(node);
      // Its CfnAlarm reads these actions when it is rendered; it is not visited on its own.
      if (node.node.defaultChild) this.done.add(node.node.defaultChild);
      const action = new SnsAction(this.topic);
      node.addAlarmAction(action);
      node.addOkAction(action);
    } else if (node instanceof CfnAlarm && !(node.node.scope instanceof AlarmBase)) {
      this.done.add(node);
      node.alarmActions = [...(node.alarmActions ?? []), this.topic.topicArn];
      node.okActions = [...(node.okActions ?? []), this.topic.topicArn];
    }
  }
}

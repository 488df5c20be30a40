import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { BATCH_ATTEMPTS, backoff } from './batches';
import type { ChangeType } from '../core/change-source';
import type { FailedDelivery, WebhookRecord, WebhookStore } from '../core/webhooks';
import { CHANGES_PARTITION_KEY as PK, CHANGES_SORT_KEY as SK, CHANGES_TTL_ATTRIBUTE as TTL } from './schema';

/** How long a failed delivery is kept: the feed's default retention (`changesRetentionDays`, 7). */
const FAILED_KEPT_SECONDS = 7 * 24 * 60 * 60;

/** A log position as a sort key: 16 digits, so that the bytes sort as the numbers. */
const positionKey = (position: number) => String(position).padStart(16, '0');

const key = (pk: string, sk: string): Record<string, AttributeValue> => ({ [PK]: { S: pk }, [SK]: { S: sk } });
/** The one item that lists the drives that have had a webhook (`hookdrives`): the dispatcher's schedule reads it. */
const DRIVES_KEY = key('hookdrives', '-');
/** A transaction's cancellations that another try may get past. */
const RETRIED = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
/**
 * How many webhooks the drive has (`count`), beside its webhooks rather than in the sequencer's `state#<drive>`
 * item, which the sequencer writes whole: registering and deleting change it in the same transaction.
 */
const countKey = (drive: string) => key(`hookcount#${drive}`, '-');

/**
 * The webhooks in the `changes` table (docs/change-feed-design.md, "Sequencing"): a drive's webhooks under
 * `hook#<drive>` by id, how many at `hookcount#<drive>`, its dispatcher's position at `hookpos#<drive>`, each webhook's failed deliveries under
 * `dlv#<drive>#<webhook id>` by position, removed by TTL with the feed's changes.
 */
export class DynamoWebhookStore implements WebhookStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async create(record: WebhookRecord, max: number): Promise<boolean> {
    // One transaction: the drive's count raised below `max`, the webhook put, its drive noted among those
    // with webhooks. Registrations racing for the last place: one commits, the other's count check fails.
    const command = new TransactWriteItemsCommand({
      ClientRequestToken: randomUUID(),
      TransactItems: [
        {
          Update: {
            TableName: this.table,
            Key: countKey(record.drive),
            UpdateExpression: 'ADD #count :one',
            ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
            ExpressionAttributeNames: { '#count': 'count' },
            ExpressionAttributeValues: { ':one': { N: '1' }, ':max': { N: String(max) } },
          },
        },
        {
          Put: {
            TableName: this.table,
            Item: {
              ...key(`hook#${record.drive}`, record.id),
              url: { S: record.url },
              path: { S: record.path },
              types: { L: record.types.map((type) => ({ S: type })) },
              secret: { S: record.secret },
              createdAt: { S: record.createdAt },
              since: { N: String(record.since) },
            },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          },
        },
        { Update: { TableName: this.table, Key: DRIVES_KEY, UpdateExpression: 'ADD #drives :drive', ExpressionAttributeNames: { '#drives': 'drives' }, ExpressionAttributeValues: { ':drive': { SS: [record.drive] } } } },
      ],
    });
    return this.transact(command);
  }

  /**
   * Runs a transaction whose first item is the one its caller's answer depends on: false when that item's
   * condition failed. One cancelled by another transaction on its items meanwhile (registrations racing for a
   * drive's count) or throttled is tried again, under the same token (the first try made nothing).
   */
  private async transact(command: TransactWriteItemsCommand): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(command);
        return true;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const reasons = error.CancellationReasons ?? [];
        if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
        if (attempt === BATCH_ATTEMPTS || !reasons.some((reason) => RETRIED.has(reason.Code ?? ''))) throw error;
        await backoff(attempt);
      }
    }
  }

  async drives(): Promise<string[]> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: DRIVES_KEY, ConsistentRead: true }));
    return [...(Item?.drives?.SS ?? [])].sort();
  }

  async list(drive: string): Promise<WebhookRecord[]> {
    const hooks: WebhookRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':pk': { S: `hook#${drive}` } },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      hooks.push(...(page.Items ?? []).map((item) => hookOf(drive, item)));
      start = page.LastEvaluatedKey;
    } while (start);
    return hooks.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(drive: string, id: string): Promise<WebhookRecord | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: key(`hook#${drive}`, id), ConsistentRead: true }));
    return Item ? hookOf(drive, Item) : undefined;
  }

  async remove(drive: string, id: string): Promise<boolean> {
    const deleted = await this.transact(
      new TransactWriteItemsCommand({
        ClientRequestToken: randomUUID(),
        TransactItems: [
          { Delete: { TableName: this.table, Key: key(`hook#${drive}`, id), ConditionExpression: 'attribute_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } } },
          { Update: { TableName: this.table, Key: countKey(drive), UpdateExpression: 'ADD #count :less', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':less': { N: '-1' } } } },
        ],
      }),
    );
    if (!deleted) return false;
    // Its failed deliveries go with it; any left by a failure here are taken by TTL.
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': { S: `dlv#${drive}#${id}` } },
          ProjectionExpression: '#pk, #sk',
          ExclusiveStartKey: start,
        }),
      );
      const items = page.Items ?? [];
      for (let i = 0; i < items.length; i += 25) {
        const batch = items.slice(i, i + 25).map((item) => ({ DeleteRequest: { Key: { [PK]: item[PK], [SK]: item[SK] } } }));
        await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: batch } }));
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return true;
  }

  async position(drive: string): Promise<number | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: key(`hookpos#${drive}`, '-'), ConsistentRead: true }));
    return Item?.position?.N === undefined ? undefined : Number(Item.position.N);
  }

  async advance(drive: string, from: number | undefined, to: number): Promise<boolean> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.table,
          Item: { ...key(`hookpos#${drive}`, '-'), position: { N: String(to) } },
          ...(from === undefined
            ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }
            : { ConditionExpression: '#position = :from', ExpressionAttributeNames: { '#position': 'position' }, ExpressionAttributeValues: { ':from': { N: String(from) } } }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async fail(drive: string, failure: FailedDelivery): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.table,
        Item: {
          ...key(`dlv#${drive}#${failure.webhookId}`, positionKey(failure.position)),
          id: { S: failure.id },
          change: { S: JSON.stringify(failure.change) },
          attempts: { N: String(failure.attempts) },
          ...(failure.lastStatus === undefined ? {} : { lastStatus: { N: String(failure.lastStatus) } }),
          lastError: { S: failure.lastError },
          firstAttemptAt: { S: failure.firstAttemptAt },
          failedAt: { S: failure.failedAt },
          [TTL]: { N: String(Math.floor(Date.parse(failure.failedAt) / 1000) + FAILED_KEPT_SECONDS) },
        },
      }),
    );
  }

  async failures(drive: string, webhookId: string, limit: number): Promise<FailedDelivery[]> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':pk': { S: `dlv#${drive}#${webhookId}` } },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (page.Items ?? []).map((item) => ({
      id: item.id.S!,
      webhookId,
      position: Number(item[SK].S),
      change: JSON.parse(item.change.S!) as FailedDelivery['change'],
      attempts: Number(item.attempts.N),
      ...(item.lastStatus?.N === undefined ? {} : { lastStatus: Number(item.lastStatus.N) }),
      lastError: item.lastError.S!,
      firstAttemptAt: item.firstAttemptAt.S!,
      failedAt: item.failedAt.S!,
    }));
  }
}

function hookOf(drive: string, item: Record<string, AttributeValue>): WebhookRecord {
  return {
    id: item[SK].S!,
    drive,
    url: item.url.S!,
    path: item.path.S!,
    types: (item.types.L ?? []).map((type) => type.S as ChangeType),
    secret: item.secret.S!,
    createdAt: item.createdAt.S!,
    since: Number(item.since.N),
  };
}

import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
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

/**
 * The webhooks in the `changes` table (docs/change-feed-design.md, "Sequencing"): a drive's webhooks under
 * `hook#<drive>` by id, its dispatcher's position at `hookpos#<drive>`, each webhook's failed deliveries under
 * `dlv#<drive>#<webhook id>` by position, removed by TTL with the feed's changes.
 */
export class DynamoWebhookStore implements WebhookStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async create(record: WebhookRecord): Promise<void> {
    await this.client.send(
      new PutItemCommand({
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
      }),
    );
    await this.client.send(
      new UpdateItemCommand({ TableName: this.table, Key: DRIVES_KEY, UpdateExpression: 'ADD #drives :drive', ExpressionAttributeNames: { '#drives': 'drives' }, ExpressionAttributeValues: { ':drive': { SS: [record.drive] } } }),
    );
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
    try {
      await this.client.send(
        new DeleteItemCommand({ TableName: this.table, Key: key(`hook#${drive}`, id), ConditionExpression: 'attribute_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
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

import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type ApiKeyRecord, type Caller, DEFAULT_ROLE, type KeyStore, ROLES, type RateDecision, type RateLimiter, type Role } from '../core/access';
import { KEYS_BY_DRIVE_INDEX, ACCESS_PARTITION_KEY as PK, ACCESS_TTL_ATTRIBUTE as TTL } from './schema';

/** The key of an API key's item: `key#<sha256 of the secret>`. */
export const keyItemKey = (secretHash: string): Record<string, AttributeValue> => ({ [PK]: { S: `key#${secretHash}` } });

/**
 * A key's item, as `callerOf` and the key list read it: an admin's key, or (with `trustId`, `subject` and
 * `expiresAt`) a key minted under a trust rule.
 */
export function keyItem(secretHash: string, record: ApiKeyRecord): Record<string, AttributeValue> {
  return {
    ...keyItemKey(secretHash),
    keyId: { S: record.keyId },
    drive: { S: record.drive },
    role: { S: record.role },
    prefix: { S: record.prefix },
    name: { S: record.name },
    createdAt: { S: record.createdAt },
    last4: { S: record.last4 },
    ...(record.trustId !== undefined ? { trustId: { S: record.trustId } } : {}),
    ...(record.subject !== undefined ? { subject: { S: record.subject } } : {}),
    ...(record.expiresAt !== undefined ? { keyExpiresAt: { S: record.expiresAt } } : {}),
  };
}

// The key items' writes and reads that the key admin (api-key-admin.ts) and the trust store (dynamo-trust.ts,
// whose minted keys are key items too) share.

/** Stores a new key's `item`; throws ConditionalCheckFailedException when its secret is a key already. */
export async function putNewKeyItem(client: DynamoDBClient, table: string, item: Record<string, AttributeValue>): Promise<void> {
  await client.send(new PutItemCommand({ TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }));
}

/**
 * The key items of `drive`, a page at a time, oldest first, from the keys-by-drive index (every attribute
 * projected; eventually consistent), narrowed by `filter` (an expression and its values) when given.
 */
export async function* keyItemPages(
  client: DynamoDBClient,
  table: string,
  drive: string,
  filter?: { expression: string; values: Record<string, AttributeValue> },
): AsyncGenerator<Record<string, AttributeValue>[]> {
  let start: QueryCommandOutput['LastEvaluatedKey'];
  do {
    const page: QueryCommandOutput = await client.send(
      new QueryCommand({
        TableName: table,
        IndexName: KEYS_BY_DRIVE_INDEX.name,
        KeyConditionExpression: '#drive = :drive',
        FilterExpression: filter?.expression,
        ExpressionAttributeNames: { '#drive': KEYS_BY_DRIVE_INDEX.partitionKey },
        ExpressionAttributeValues: { ':drive': { S: drive }, ...filter?.values },
        ExclusiveStartKey: start,
      }),
    );
    yield page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Marks the key item under `key` revoked at `revokedAt`, unless it was already; never makes an item for a key gone meanwhile. */
export async function revokeKeyItem(client: DynamoDBClient, table: string, key: AttributeValue, revokedAt: string): Promise<void> {
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { [PK]: key },
        UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
        ConditionExpression: 'attribute_exists(keyId)',
        ExpressionAttributeValues: { ':now': { S: revokedAt } },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** API keys in the access table, one item per key under `key#<sha256 of the secret>`. */
export class DynamoKeyStore implements KeyStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async find(secretHash: string): Promise<Caller | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: keyItemKey(secretHash), ConsistentRead: true }));
    if (!Item || Item.revokedAt) return undefined;
    const caller = callerOf(Item);
    // A minted key ends at its expiry, whatever DynamoDB's TTL (which removes the item days later) has done.
    if (caller.expiresAt !== undefined && !(Date.parse(caller.expiresAt) > Date.now())) return undefined;
    return caller;
  }

  async touch(secretHash: string, at: Date): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyItemKey(secretHash),
          UpdateExpression: 'SET lastUsedAt = :at',
          // Never create an item for a key revoked and deleted meanwhile.
          ConditionExpression: 'attribute_exists(keyId)',
          ExpressionAttributeValues: { ':at': { S: at.toISOString() } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/** The caller a key item names; keys made before roles are read-write on the whole drive. */
export function callerOf(item: Record<string, AttributeValue>): Caller {
  const role = item.role?.S;
  return {
    keyId: item.keyId.S!,
    drive: item.drive.S!,
    role: role && (ROLES as string[]).includes(role) ? (role as Role) : DEFAULT_ROLE,
    prefix: item.prefix?.S ?? '/',
    ...(item.trustId?.S ? { trustId: item.trustId.S } : {}),
    ...(item.keyExpiresAt?.S ? { expiresAt: item.keyExpiresAt.S } : {}),
    ...(item.subject?.S ? { subject: item.subject.S } : {}),
  };
}

const WINDOW_MS = 60_000;

/**
 * GCRA token buckets in the access table: one item per bucket holding its "theoretical arrival time"
 * (`tat`, epoch ms). A bucket of `limit` per minute admits a request of `cost` tokens at `now` when
 * `tat ≤ now + window − cost·T` (T = window / limit) and moves `tat` to `max(tat, now) + cost·T`. DynamoDB has no `max`, so each write
 * assumes one branch in its condition: idle (`tat ≤ now`: set `now + T`) or busy (`tat > now`: add T).
 * The guess follows the bucket's last known state, so the common case is one conditional update; a wrong
 * guess returns the stored `tat` and the second write is right. No read, no lost update.
 */
export class DynamoRateLimiter implements RateLimiter {
  private readonly busyUntil = new Map<string, number>();
  private now: () => number = Date.now;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  /** Reads the time from `clock`: the local host's tests stop it, so a burst's outcome is exact at any machine speed. */
  useClock(clock: () => number): void {
    this.now = clock;
  }

  async take(bucket: string, limit: number, cost = 1): Promise<RateDecision> {
    const now = this.now();
    const interval = WINDOW_MS / limit;
    // A request of `cost` tokens moves tat by that many intervals; more than a full bucket could never pass.
    const step = interval * Math.min(Math.max(1, Math.ceil(cost)), limit);
    const latest = now + WINDOW_MS - step; // the largest tat that still admits this request now
    let busy = (this.busyUntil.get(bucket) ?? 0) > now;
    for (let attempt = 0; attempt < 3; attempt++) {
      const tat = await this.tryTake(bucket, busy, now, step, latest);
      if (tat.admitted) {
        this.busyUntil.set(bucket, tat.value);
        return {
          allowed: true,
          limit,
          remaining: Math.max(0, Math.floor((now + WINDOW_MS - tat.value) / interval)),
          resetSeconds: Math.ceil((tat.value - now) / 1000),
        };
      }
      if (tat.value > latest) {
        this.busyUntil.set(bucket, tat.value);
        return {
          allowed: false,
          limit,
          remaining: 0,
          resetSeconds: Math.ceil((tat.value - now) / 1000),
          retryAfterSeconds: Math.max(1, Math.ceil((tat.value - latest) / 1000)),
        };
      }
      busy = tat.value > now;
    }
    throw new Error(`rate-limit bucket ${bucket} kept changing under three conditional updates`);
  }

  /** One conditional update moving `tat` by `interval` (the request's cost); returns the new `tat` when admitted, else the stored one. */
  private async tryTake(bucket: string, busy: boolean, now: number, interval: number, latest: number): Promise<{ admitted: boolean; value: number }> {
    const expiresAt = Math.ceil((now + WINDOW_MS) / 1000) + 60;
    const common = {
      TableName: this.table,
      Key: { [PK]: { S: `rate#${bucket}` } },
      ReturnValues: 'UPDATED_NEW' as const,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
    try {
      const out = await this.client.send(
        busy
          ? new UpdateItemCommand({
              ...common,
              UpdateExpression: 'SET tat = tat + :interval, #ttl = :ttl',
              ConditionExpression: 'tat > :now AND tat <= :latest',
              ExpressionAttributeNames: { '#ttl': TTL },
              ExpressionAttributeValues: { ':interval': num(interval), ':now': num(now), ':latest': num(latest), ':ttl': num(expiresAt) },
            })
          : new UpdateItemCommand({
              ...common,
              UpdateExpression: 'SET tat = :next, #ttl = :ttl',
              ConditionExpression: 'attribute_not_exists(tat) OR tat <= :now',
              ExpressionAttributeNames: { '#ttl': TTL },
              ExpressionAttributeValues: { ':next': num(now + interval), ':now': num(now), ':ttl': num(expiresAt) },
            }),
      );
      return { admitted: true, value: Number(out.Attributes!.tat.N) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const item = error.Item ?? (await this.read(bucket));
      return { admitted: false, value: Number(item?.tat?.N ?? 0) };
    }
  }

  // Only for emulators that do not return the item with a failed condition; DynamoDB does.
  private async read(bucket: string): Promise<Record<string, AttributeValue> | undefined> {
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.table, Key: { [PK]: { S: `rate#${bucket}` } }, ConsistentRead: true }),
    );
    return Item;
  }
}

// Millisecond timestamps with microsecond fractions: DynamoDB numbers are exact decimals.
const num = (value: number): AttributeValue => ({ N: value.toFixed(3) });

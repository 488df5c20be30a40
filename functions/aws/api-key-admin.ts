import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  type ScanCommandOutput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { type Caller, DRIVE_ID, hashSecret, newSecret } from '../core/access';
import { keyItemKey } from './dynamo-access';
import { ACCESS_PARTITION_KEY as PK } from './schema';

/** What the access table holds of an API key: never the secret, only its hash (in the item's key). */
export interface ApiKeyRecord extends Caller {
  name: string;
  createdAt: string;
  /** The secret's last four characters, to tell keys apart. */
  last4: string;
  revokedAt?: string;
}

/** Creating, listing and revoking API keys: the key tool and the local host, never a request handler. */
export class DynamoKeyAdmin {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  /** Creates a key for `drive` (with `secret`, or a new random one) and returns its record and secret. */
  async create(drive: string, name: string, secret = newSecret()): Promise<{ record: ApiKeyRecord; secret: string; created: boolean }> {
    if (!DRIVE_ID.test(drive)) throw new Error(`drive must match ${DRIVE_ID}`);
    const record: ApiKeyRecord = { keyId: randomBytes(8).toString('hex'), drive, name, createdAt: new Date().toISOString(), last4: secret.slice(-4) };
    const item: Record<string, AttributeValue> = {
      ...keyItemKey(hashSecret(secret)),
      keyId: { S: record.keyId },
      drive: { S: record.drive },
      name: { S: record.name },
      createdAt: { S: record.createdAt },
      last4: { S: record.last4 },
    };
    try {
      await this.client.send(
        new PutItemCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }),
      );
      return { record, secret, created: true };
    } catch (error) {
      // The same secret again (DRIVE_API_KEYS on every start): the stored key stands.
      if (error instanceof ConditionalCheckFailedException) return { record, secret, created: false };
      throw error;
    }
  }

  /** Every key, revoked ones included, oldest first. */
  async list(): Promise<ApiKeyRecord[]> {
    const records = (await this.scanKeys()).map(toRecord);
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Revokes the key with id `keyId`; returns its record, or undefined if there is no such key. */
  async revoke(keyId: string): Promise<ApiKeyRecord | undefined> {
    const items = await this.scanKeys('keyId = :id', { ':id': { S: keyId } });
    if (items.length === 0) return undefined;
    const revokedAt = new Date().toISOString();
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { [PK]: items[0][PK] },
        UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
        ExpressionAttributeValues: { ':now': { S: revokedAt } },
      }),
    );
    return { ...toRecord(items[0]), revokedAt: items[0].revokedAt?.S ?? revokedAt };
  }

  // Keys are few and these are admin calls, so a filtered scan of the access table does; no index to pay for.
  private async scanKeys(filter?: string, values: Record<string, AttributeValue> = {}): Promise<Record<string, AttributeValue>[]> {
    const items: Record<string, AttributeValue>[] = [];
    let start: ScanCommandOutput['LastEvaluatedKey'];
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: filter ? `begins_with(#pk, :key) AND ${filter}` : 'begins_with(#pk, :key)',
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':key': { S: 'key#' }, ...values },
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }
}

function toRecord(item: Record<string, AttributeValue>): ApiKeyRecord {
  return {
    keyId: item.keyId.S!,
    drive: item.drive.S!,
    name: item.name?.S ?? '',
    createdAt: item.createdAt?.S ?? '',
    last4: item.last4?.S ?? '',
    ...(item.revokedAt?.S ? { revokedAt: item.revokedAt.S } : {}),
  };
}

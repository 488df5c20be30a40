import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  type ScanCommandOutput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type ApiKeyRecord, DEFAULT_ROLE, DRIVE_ID, type Role, accessProblem, hashSecret, newKeyRecord, newSecret } from '../core/access';
import { callerOf, keyItem, keyItemKey, keyItemPages, putNewKeyItem, revokeKeyItem } from './dynamo-access';
import { ACCESS_PARTITION_KEY as PK } from './schema';

/** Creating, listing and revoking API keys: the key tool, the local host and the admin routes. */
export class DynamoKeyAdmin {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  /**
   * Creates a key for `drive` (with `secret`, or a new random one) with `access` (default: read-write on the
   * whole drive) and returns its record and secret; `created` is false if that secret was already a key.
   */
  async create(
    drive: string,
    name: string,
    access: { role?: Role; prefix?: string } = {},
    secret = newSecret(),
  ): Promise<{ record: ApiKeyRecord; secret: string; created: boolean }> {
    if (!DRIVE_ID.test(drive)) throw new Error(`drive must match ${DRIVE_ID}`);
    const problem = accessProblem(access.role ?? DEFAULT_ROLE, access.prefix ?? '/');
    if (problem) throw new Error(problem);
    const record = newKeyRecord(secret, { drive, role: access.role ?? DEFAULT_ROLE, prefix: access.prefix ?? '/', name });
    try {
      await putNewKeyItem(this.client, this.table, keyItem(hashSecret(secret), record));
      // The key first, then the roster: a crash between leaves an admin the roster does not count, which only
      // makes the last-admin rule stricter, never an admin counted that does not exist.
      if (record.role === 'admin') await this.roster(drive, 'ADD', record.keyId);
      return { record, secret, created: true };
    } catch (error) {
      // The same secret again (DRIVE_API_KEYS on every start): the stored key stands.
      if (error instanceof ConditionalCheckFailedException) return { record, secret, created: false };
      throw error;
    }
  }

  /**
   * Makes the key of `secret` `drive`'s, with `access` and `name`: created if missing, its drive, role and
   * prefix updated if it exists. A revoked key stays revoked (`'revoked'`): revocation is not undone by
   * naming the secret again.
   */
  async upsert(drive: string, name: string, access: { role?: Role; prefix?: string }, secret: string): Promise<{ record: ApiKeyRecord } | 'revoked'> {
    const made = await this.create(drive, name, access, secret);
    if (made.created) return { record: made.record };
    try {
      const { Attributes } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyItemKey(hashSecret(secret)),
          UpdateExpression: 'SET #drive = :drive, #role = :role, #prefix = :prefix, #name = :name',
          ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(revokedAt)',
          ExpressionAttributeNames: { '#pk': PK, '#drive': 'drive', '#role': 'role', '#prefix': 'prefix', '#name': 'name' },
          ExpressionAttributeValues: {
            ':drive': { S: drive },
            ':role': { S: access.role ?? DEFAULT_ROLE },
            ':prefix': { S: access.prefix ?? '/' },
            ':name': { S: name },
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const record = toRecord(Attributes!);
      await this.roster(record.drive, record.role === 'admin' ? 'ADD' : 'DELETE', record.keyId);
      return { record };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return 'revoked';
      throw error;
    }
  }

  /**
   * Every key of `drive`, revoked ones included, oldest first: a Query of the keys-by-drive index, whose cost
   * is the drive's keys, not every drive's. The index is eventually consistent: a key made a moment ago may
   * be missing for about a second.
   */
  async list(drive: string): Promise<ApiKeyRecord[]> {
    return (await this.keysOf(drive)).map(toRecord);
  }

  /** Every key of every drive, oldest first (the key tool): a Scan of the access table. */
  async listAll(): Promise<ApiKeyRecord[]> {
    return (await this.scanKeys()).map(toRecord).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Revokes the key with id `keyId` (only if it belongs to `drive`, when given); returns its record, or
   * undefined if there is no such key. Refuses (`'last admin'`) to revoke the drive's last live admin key,
   * which would leave nobody to manage its keys.
   */
  async revoke(keyId: string, drive?: string): Promise<ApiKeyRecord | 'last admin' | undefined> {
    // Through the API, among the drive's keys (a Query); the key tool, which names no drive, scans.
    const items = drive ? (await this.keysOf(drive)).filter((candidate) => candidate.keyId?.S === keyId) : await this.scanKeys('keyId = :id', { ':id': { S: keyId } });
    const item = items[0];
    if (!item) return undefined;
    const record = toRecord(item);
    if (record.revokedAt) return record;
    if (record.role === 'admin') {
      // Through the API (`drive` given) the drive keeps one live admin; the key tool and DRIVE_API_KEYS may take the last.
      if (drive && !(await this.leaveRoster(drive, record.keyId))) return 'last admin';
      if (!drive) await this.roster(record.drive, 'DELETE', record.keyId);
    }
    const revokedAt = new Date().toISOString();
    await revokeKeyItem(this.client, this.table, item[PK], revokedAt);
    return { ...record, revokedAt };
  }

  /**
   * Takes `keyId` off its drive's roster of live admin keys in one conditional write that keeps at least one
   * on it: of two admins revoking each other at once, exactly one wins. True if it is off the roster now
   * (also when an earlier revoke took it off and stopped before revoking the key), false for the last one.
   */
  private async leaveRoster(drive: string, keyId: string): Promise<boolean> {
    await this.ensureRoster(drive);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { [PK]: { S: rosterKey(drive) } },
          UpdateExpression: 'DELETE #live :key',
          ConditionExpression: 'contains(#live, :id) AND size(#live) > :one',
          ExpressionAttributeNames: { '#live': 'live' },
          ExpressionAttributeValues: { ':key': { SS: [keyId] }, ':id': { S: keyId }, ':one': { N: '1' } },
        }),
      );
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const roster = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { [PK]: { S: rosterKey(drive) } }, ConsistentRead: true }));
      return !(roster.Item?.live?.SS ?? []).includes(keyId);
    }
  }

  /** Adds `keyId` to (or deletes it from) `drive`'s roster of live admin keys, unconditionally. */
  private async roster(drive: string, action: 'ADD' | 'DELETE', keyId: string): Promise<void> {
    await this.ensureRoster(drive);
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { [PK]: { S: rosterKey(drive) } },
        UpdateExpression: `${action} #live :key`,
        ExpressionAttributeNames: { '#live': 'live' },
        ExpressionAttributeValues: { ':key': { SS: [keyId] } },
      }),
    );
  }

  /** Makes the drive's roster from its live admin keys if it has none yet (drives from before it existed). */
  private async ensureRoster(drive: string): Promise<void> {
    const held = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { [PK]: { S: rosterKey(drive) } }, ConsistentRead: true }));
    if (held.Item) return;
    // A consistent read of every key (the index may lag): once per drive, for drives from before the roster.
    const keys = (await this.scanKeys('#drive = :drive', { ':drive': { S: drive } })).map(toRecord);
    const admins = keys.filter((key) => key.role === 'admin' && !key.revokedAt).map((key) => key.keyId);
    const item: Record<string, AttributeValue> = { [PK]: { S: rosterKey(drive) }, drive: { S: drive }, ...(admins.length > 0 ? { live: { SS: admins } } : {}) };
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }));
    } catch (error) {
      // Another request made it first: theirs stands.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** The key items of `drive`, oldest first, from the keys-by-drive index (all projected). */
  private async keysOf(drive: string): Promise<Record<string, AttributeValue>[]> {
    const items: Record<string, AttributeValue>[] = [];
    for await (const page of keyItemPages(this.client, this.table, drive)) items.push(...page);
    return items;
  }

  // The key tool's view of every drive, and the once-per-drive roster: a filtered scan of the access table.
  private async scanKeys(filter?: string, values: Record<string, AttributeValue> = {}): Promise<Record<string, AttributeValue>[]> {
    const items: Record<string, AttributeValue>[] = [];
    let start: ScanCommandOutput['LastEvaluatedKey'];
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: filter ? `begins_with(#pk, :key) AND ${filter}` : 'begins_with(#pk, :key)',
          ExpressionAttributeNames: { '#pk': PK, ...(filter?.includes('#drive') ? { '#drive': 'drive' } : {}) },
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

/** The access-table item listing a drive's live admin keys (the last-admin rule's one item to update). */
function rosterKey(drive: string): string {
  return `admins#${drive}`;
}

function toRecord(item: Record<string, AttributeValue>): ApiKeyRecord {
  return {
    ...callerOf(item),
    name: item.name?.S ?? '',
    createdAt: item.createdAt?.S ?? '',
    last4: item.last4?.S ?? '',
    ...(item.lastUsedAt?.S ? { lastUsedAt: item.lastUsedAt.S } : {}),
    ...(item.revokedAt?.S ? { revokedAt: item.revokedAt.S } : {}),
  };
}

import { ConditionalCheckFailedException, type DynamoDBClient, GetItemCommand, PutItemCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { type ApiKeyRecord, hashSecret, newKeyRecord, newSecret } from '../core/access';
import { mapLimit } from '../core/concurrency';
import { MAX_RULES_PER_DRIVE, type TrustRule } from '../core/trust';
import { keyItem, keyItemKey, keyItemPages, putNewKeyItem, revokeKeyItem } from './dynamo-access';
import { ACCESS_PARTITION_KEY as PK, ACCESS_TTL_ATTRIBUTE as TTL } from './schema';

/** How long an expired minted key's item stays (listed as expired) before DynamoDB's TTL may remove it. */
const EXPIRED_KEY_KEPT_SECONDS = 7 * 24 * 3600;

/**
 * How many minted keys a rule's revoke writes at once. One at a time, a rule with thousands of live keys
 * outlived API Gateway's 29 s (1,000 keys × ~8 ms a write is 8 s); sixteen at once is a sixteenth of that,
 * well within an on-demand table's write capacity.
 */
export const MINTED_REVOKE_CONCURRENCY = 16;

/** What a minted key is made from: the rule that admitted the token, and the token's subject. */
export interface Minting {
  drive: string;
  rule: TrustRule;
  subject: string;
  expiresAt: Date;
}

/**
 * A drive's trust rules and the keys minted under them, in the access table. A drive's rules are one item
 * (`trust#<drive>`, at most 100 rules), so the exchange reads them all, in order, with one consistent GetItem;
 * changes are optimistic (a `version` the write is conditional on), so two admins never lose each other's.
 * Minted keys are ordinary key items with the rule's id, the subject and an expiry.
 */
export class DynamoTrustStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  /** Every rule of `drive`, revoked ones included, oldest first. */
  async rules(drive: string): Promise<TrustRule[]> {
    return (await this.read(drive)).rules;
  }

  /** Adds `rule` (without id and date) to `drive`'s; `'full'` when the drive has its most. */
  async add(drive: string, rule: Omit<TrustRule, 'id' | 'createdAt'>): Promise<TrustRule | 'full'> {
    return this.change<TrustRule | 'full'>(drive, (rules) => {
      if (rules.filter((held) => held.revokedAt === undefined).length >= MAX_RULES_PER_DRIVE) return { result: 'full' as const };
      const made: TrustRule = { ...rule, id: randomBytes(8).toString('hex'), createdAt: new Date().toISOString() };
      // Revoked rules give way to live ones when the item is full.
      const kept = rules.length >= MAX_RULES_PER_DRIVE ? rules.filter((held) => held.revokedAt === undefined) : rules;
      return { rules: [...kept, made], result: made };
    });
  }

  /** Marks rule `id` of `drive` revoked (once); undefined if the drive has no such rule. */
  async revoke(drive: string, id: string): Promise<TrustRule | undefined> {
    return this.change<TrustRule | undefined>(drive, (rules) => {
      const rule = rules.find((held) => held.id === id);
      if (!rule) return { result: undefined };
      if (rule.revokedAt !== undefined) return { result: rule };
      const revoked = { ...rule, revokedAt: new Date().toISOString() };
      return { rules: rules.map((held) => (held.id === id ? revoked : held)), result: revoked };
    });
  }

  /**
   * Revokes rule `id` of `drive` and every key minted under it (the route and the key tool); undefined if the
   * drive has no such rule. Again on a rule already revoked: a key an interrupted first revoke left is revoked now.
   */
  async revokeWithKeys(drive: string, id: string): Promise<{ rule: TrustRule; keysRevoked: number } | undefined> {
    const rule = await this.revoke(drive, id);
    if (!rule) return undefined;
    return { rule, keysRevoked: await this.revokeMinted(drive, id) };
  }

  /** Every drive's rules, revoked ones included (the key tool): a Scan of the access table for the rule items. */
  async everyDrive(): Promise<{ drive: string; rules: TrustRule[] }[]> {
    const found: { drive: string; rules: TrustRule[] }[] = [];
    let start: ScanCommandOutput['LastEvaluatedKey'];
    do {
      const page: ScanCommandOutput = await this.client.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: 'begins_with(#pk, :trust)',
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':trust': { S: 'trust#' } },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) found.push({ drive: item.trustDrive?.S ?? '', rules: JSON.parse(item.rules?.S ?? '[]') as TrustRule[] });
      start = page.LastEvaluatedKey;
    } while (start);
    return found.sort((a, b) => a.drive.localeCompare(b.drive));
  }

  /** Stores a new key for `minting`, as an ordinary key item that also names its rule, subject and expiry; returns it and its secret. */
  async mint(minting: Minting): Promise<{ record: ApiKeyRecord; secret: string }> {
    const secret = newSecret();
    const record = newKeyRecord(secret, {
      drive: minting.drive,
      role: minting.rule.role,
      prefix: minting.rule.prefix,
      name: `trust ${minting.rule.id}`,
      trustId: minting.rule.id,
      subject: minting.subject,
      expiresAt: minting.expiresAt.toISOString(),
    });
    await putNewKeyItem(this.client, this.table, {
      ...keyItem(hashSecret(secret), record),
      [TTL]: { N: String(Math.ceil(minting.expiresAt.getTime() / 1000) + EXPIRED_KEY_KEPT_SECONDS) },
    });
    return { record, secret };
  }

  /**
   * Revokes every live key minted under rule `trustId` of `drive` (from the keys-by-drive index, which may
   * lag a key minted within about a second; the exchange checks the rule again after minting for that),
   * MINTED_REVOKE_CONCURRENCY at a time. Keys past their end are left as they are: they open nothing already.
   * Returns how many it revoked.
   */
  async revokeMinted(drive: string, trustId: string): Promise<number> {
    const now = new Date(Date.now()).toISOString();
    let count = 0;
    // ISO 8601 instants of one form compare as strings in time order.
    const live = { expression: 'trustId = :trust AND attribute_not_exists(revokedAt) AND keyExpiresAt > :now', values: { ':trust': { S: trustId }, ':now': { S: now } } };
    for await (const items of keyItemPages(this.client, this.table, drive, live)) {
      await mapLimit(items, MINTED_REVOKE_CONCURRENCY, (item) => revokeKeyItem(this.client, this.table, item[PK], now));
      count += items.length;
    }
    return count;
  }

  /** Revokes the key of `secret` (a key just minted under a rule revoked meanwhile). */
  async revokeSecret(secret: string): Promise<void> {
    await revokeKeyItem(this.client, this.table, keyItemKey(hashSecret(secret))[PK], new Date().toISOString());
  }

  private async read(drive: string): Promise<{ rules: TrustRule[]; version: number | undefined }> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { [PK]: { S: trustItemKey(drive) } }, ConsistentRead: true }));
    if (!Item) return { rules: [], version: undefined };
    return { rules: JSON.parse(Item.rules?.S ?? '[]') as TrustRule[], version: Number(Item.version?.N ?? '0') };
  }

  /** Applies `edit` to `drive`'s rules and writes them if nobody wrote meanwhile (else reads and edits again). */
  private async change<T>(drive: string, edit: (rules: TrustRule[]) => { rules?: TrustRule[]; result: T }): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const { rules, version } = await this.read(drive);
      const edited = edit(rules);
      if (edited.rules === undefined) return edited.result;
      try {
        await this.client.send(
          new PutItemCommand({
            TableName: this.table,
            Item: { [PK]: { S: trustItemKey(drive) }, trustDrive: { S: drive }, rules: { S: JSON.stringify(edited.rules) }, version: { N: String((version ?? 0) + 1) } },
            ConditionExpression: version === undefined ? 'attribute_not_exists(#pk)' : 'version = :version',
            ExpressionAttributeNames: version === undefined ? { '#pk': PK } : undefined,
            ExpressionAttributeValues: version === undefined ? undefined : { ':version': { N: String(version) } },
          }),
        );
        return edited.result;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || attempt >= 4) throw error;
      }
    }
  }
}

/** The access-table item holding a drive's trust rules. Its drive is `trustDrive`, never `drive`, so it stays out of the keys-by-drive index. */
function trustItemKey(drive: string): string {
  return `trust#${drive}`;
}

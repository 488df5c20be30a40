import { type AttributeValue, BatchWriteItemCommand, ConditionalCheckFailedException, type DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { JournalEntry, UploadJournal } from '../core/ports';
import { BATCH_ATTEMPTS, backoff, chunk, scanAll } from './batches';
import { UPLOADS_PARTITION_KEY as PK } from './schema';

type Item = Record<string, AttributeValue>;

/** Entries share the upload sessions' table under ids of their own; a session id is a bare UUID. */
const ID_PREFIX = 'journal#';
/** Bytes of paths and keys one item holds, well under DynamoDB's 400 KB an item. */
const ENTRY_BYTES = 256 * 1024;
/** The note a withdrawing writer leaves on its entries (`withdraw`): a boolean attribute, absent until then. */
const WITHDRAWN = 'withdrawn';

/**
 * The upload journal in the upload sessions' table: one item per entry (a long batch takes several), with
 * no TTL attribute, so that only the sweep removes an entry, once it has dealt with the bytes.
 */
export class DynamoUploadJournal implements UploadJournal {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async open(drive: string, files: readonly { path: string; objectKey: string }[], sweepAfter: Date): Promise<string[]> {
    const ids: string[] = [];
    for (const group of bySize(files)) {
      const item = journalItem(drive, group, sweepAfter);
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: item }));
      for (let i = 0; i < group.length; i++) ids.push(item[PK].S!);
    }
    return ids;
  }

  async close(ids: readonly string[]): Promise<void> {
    for (const batch of chunk([...new Set(ids)], 25)) {
      let requests = batch.map((id) => ({ DeleteRequest: { Key: { [PK]: { S: id } } } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchWriteItem left ${requests.length} journal entries unclosed after ${attempt} attempts`);
        if (attempt > 0) await backoff(attempt);
        const out = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }));
        requests = (out.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  async due(now: Date): Promise<JournalEntry[]> {
    return (await this.scan()).filter((entry) => Date.parse(entry.sweepAfter) <= now.getTime());
  }

  async withdraw(ids: readonly string[]): Promise<void> {
    for (const id of new Set(ids)) {
      try {
        // Only on an entry still there: a note must never make an item the sweep would read as an entry.
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { [PK]: { S: id } },
            UpdateExpression: 'SET #withdrawn = :yes',
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK, '#withdrawn': WITHDRAWN },
            ExpressionAttributeValues: { ':yes': { BOOL: true } },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
  }

  async withdrew(id: string): Promise<boolean> {
    // A session's id has no prefix: never an entry, never noted.
    if (!id.startsWith(ID_PREFIX)) return false;
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.table, Key: { [PK]: { S: id } }, ConsistentRead: true, ProjectionExpression: '#withdrawn', ExpressionAttributeNames: { '#withdrawn': WITHDRAWN } }),
    );
    return Item?.[WITHDRAWN]?.BOOL === true;
  }

  async openKeys(): Promise<string[]> {
    return (await this.scan()).flatMap((entry) => entry.files.map((file) => file.objectKey));
  }

  /** Every open entry: the table holds only uploads in flight, so a scan stays small. */
  private async scan(): Promise<JournalEntry[]> {
    const items = await scanAll(this.client, {
      TableName: this.table,
      ConsistentRead: true,
      FilterExpression: 'begins_with(#id, :prefix)',
      ExpressionAttributeNames: { '#id': PK },
      ExpressionAttributeValues: { ':prefix': { S: ID_PREFIX } },
    });
    return items.map(fromItem);
  }
}

/** A new journal entry's item, naming `files` (few enough for one item): for writes that open one in a transaction. */
export function journalItem(drive: string, files: readonly { path: string; objectKey: string }[], sweepAfter: Date): Item {
  return {
    [PK]: { S: `${ID_PREFIX}${randomUUID()}` },
    drive: { S: drive },
    files: { S: JSON.stringify(files.map((file) => [file.path, file.objectKey])) },
    sweepAfter: { S: sweepAfter.toISOString() },
  };
}

function fromItem(item: Item): JournalEntry {
  const files = JSON.parse(item.files.S!) as [string, string][];
  const entry: JournalEntry = { id: item[PK].S!, drive: item.drive.S!, files: files.map(([path, objectKey]) => ({ path, objectKey })), sweepAfter: item.sweepAfter.S! };
  return item[WITHDRAWN]?.BOOL === true ? { ...entry, withdrawn: true } : entry;
}

/** `files` in groups whose JSON fits one item. */
function bySize(files: readonly { path: string; objectKey: string }[]): { path: string; objectKey: string }[][] {
  const groups: { path: string; objectKey: string }[][] = [[]];
  let bytes = 0;
  for (const file of files) {
    const size = Buffer.byteLength(file.path) + file.objectKey.length + 8;
    if (bytes + size > ENTRY_BYTES && groups.at(-1)!.length > 0) {
      groups.push([]);
      bytes = 0;
    }
    groups.at(-1)!.push(file);
    bytes += size;
  }
  return groups;
}

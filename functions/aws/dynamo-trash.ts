import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  TransactWriteItemsCommand,
  TransactionCanceledException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { createHash, randomUUID } from 'node:crypto';
import type { FileNode, TrashMember, TrashRow, TrashStore } from '../core/ports';
import { BATCH_ATTEMPTS, backoff, chunk } from './batches';
import { NODES_PARTITION_KEY as PK, NODES_SORT_KEY as SK } from './schema';

type Item = Record<string, AttributeValue>;

// The trash's items in the nodes table (protocol/README.md, "Trash"; docs/trash-design.md): partition keys no
// path can produce (a node's is `<drive>#/…`), each item marked `trash` with its kind, so that a scan of the
// table (fsck) tells them from nodes.

/** The attribute that tells a trash item from a node, and its values. */
export const TRASH_ATTRIBUTE = 'trash';
export type TrashItemKind = 'row' | 'member' | 'due' | 'cursor';

/** Shards of a day's due entries: every drive's rows of one day spread over this many partitions. */
const DUE_SHARDS = 10;
/** Days back the sweep looks for due entries when it has no cursor yet. */
const FIRST_LOOK_DAYS = 7;
const CURSOR_KEY: Item = { [PK]: { S: 'trashdue#cursor' }, [SK]: { S: '-' } };

export const rowsPartition = (drive: string) => `${drive}#trash`;
export const membersPartition = (drive: string, id: string) => `${drive}#trash#${id}`;

export function rowKey(drive: string, id: string): Item {
  return { [PK]: { S: rowsPartition(drive) }, [SK]: { S: id } };
}

/** The key of a row's due entry: `trashdue#<purge day>#<shard>`, sorted by purge time. */
export function dueKey(drive: string, id: string, purgeAt: string): Item {
  const shard = createHash('md5').update(id).digest()[0] % DUE_SHARDS;
  return { [PK]: { S: `trashdue#${purgeAt.slice(0, 10)}#${shard}` }, [SK]: { S: `${purgeAt}#${drive}#${id}` } };
}

export function dueItem(drive: string, id: string, purgeAt: string): Item {
  return { ...dueKey(drive, id, purgeAt), [TRASH_ATTRIBUTE]: { S: 'due' }, drive: { S: drive }, trashId: { S: id }, purgeAt: { S: purgeAt } };
}

/** A row as its item. */
export function rowItem(drive: string, row: TrashRow): Item {
  const item: Item = {
    ...rowKey(drive, row.id),
    [TRASH_ATTRIBUTE]: { S: 'row' },
    type: { S: row.type },
    path: { S: row.path },
    bytes: { N: String(row.bytes) },
    files: { N: String(row.files) },
    deletedAt: { S: row.deletedAt },
    purgeAt: { S: row.purgeAt },
    reason: { S: row.reason },
    state: { S: row.state },
  };
  const optional: [string, string | undefined][] = [
    ['deletedBy', row.deletedBy],
    ['folderId', row.folderId],
    ['folderCreatedAt', row.folderCreatedAt],
    ['job', row.job],
    ['restoring', row.restoring],
    ['purging', row.purging],
    ['claimedAt', row.claimedAt],
  ];
  for (const [name, value] of optional) if (value !== undefined) item[name] = { S: value };
  if (row.file) item.file = { S: JSON.stringify(row.file) };
  return item;
}

export function fromRowItem(item: Item): TrashRow {
  const text = (name: string) => item[name]?.S;
  const optional = Object.fromEntries(['deletedBy', 'folderId', 'folderCreatedAt', 'job', 'restoring', 'purging', 'claimedAt'].flatMap((name) => (text(name) !== undefined ? [[name, text(name)]] : [])));
  return {
    id: item[SK].S!,
    type: item.type.S as TrashRow['type'],
    path: item.path.S!,
    bytes: Number(item.bytes.N),
    files: Number(item.files.N),
    deletedAt: item.deletedAt.S!,
    purgeAt: item.purgeAt.S!,
    reason: item.reason.S as TrashRow['reason'],
    state: item.state.S as TrashRow['state'],
    ...optional,
    ...(item.file?.S ? { file: JSON.parse(item.file.S) as FileNode } : {}),
  };
}

export function memberItem(drive: string, id: string, member: TrashMember): Item {
  return {
    [PK]: { S: membersPartition(drive, id) },
    [SK]: { S: member.relative },
    [TRASH_ATTRIBUTE]: { S: 'member' },
    ...(member.file ? { file: { S: JSON.stringify(member.file) } } : {}),
    ...(member.folder ? { folderId: { S: member.folder.id }, createdAt: { S: member.folder.createdAt } } : {}),
  };
}

export function fromMemberItem(item: Item): TrashMember {
  return {
    relative: item[SK].S!,
    ...(item.file?.S ? { file: JSON.parse(item.file.S) as FileNode } : {}),
    ...(item.folderId?.S ? { folder: { id: item.folderId.S, createdAt: item.createdAt?.S ?? '' } } : {}),
  };
}

/**
 * The condition a restore's transaction puts on the row: standing, trashed, not being purged, before
 * `purgeAt`, and unclaimed (a request's restore of a file) or, given `job`, claimed by that restore job and
 * no other: a job's write never lands on a row it has not claimed (one released, or never claimed by it).
 */
export function restorableCondition(now: Date, job?: string): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Item } {
  return {
    ConditionExpression: `attribute_exists(#pk) AND #state = :trashed AND attribute_not_exists(#purging) AND ${job ? '#restoring = :job' : 'attribute_not_exists(#restoring)'} AND #purgeAt > :now`,
    ExpressionAttributeNames: { '#pk': PK, '#state': 'state', '#purging': 'purging', '#restoring': 'restoring', '#purgeAt': 'purgeAt' },
    ExpressionAttributeValues: { ':trashed': { S: 'trashed' }, ':now': { S: now.toISOString() }, ...(job ? { ':job': { S: job } } : {}) },
  };
}

/** `TrashStore` over the nodes table. */
export class DynamoTrashStore implements TrashStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async get(drive: string, id: string): Promise<TrashRow | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: rowKey(drive, id), ConsistentRead: true }));
    return Item ? fromRowItem(Item) : undefined;
  }

  async list(drive: string, limit: number, after?: string): Promise<{ rows: TrashRow[]; last?: string }> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':pk': { S: rowsPartition(drive) } },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
        ...(after !== undefined ? { ExclusiveStartKey: rowKey(drive, after) } : {}),
      }),
    );
    const rows = (out.Items ?? []).map(fromRowItem);
    return out.LastEvaluatedKey && rows.length > 0 ? { rows, last: rows.at(-1)!.id } : { rows };
  }

  async members(drive: string, id: string, limit: number, after?: string): Promise<{ members: TrashMember[]; last?: string }> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':pk': { S: membersPartition(drive, id) } },
        ConsistentRead: true,
        Limit: limit,
        ...(after !== undefined ? { ExclusiveStartKey: { [PK]: { S: membersPartition(drive, id) }, [SK]: { S: after } } } : {}),
      }),
    );
    const members = (out.Items ?? []).map(fromMemberItem);
    return out.LastEvaluatedKey && members.length > 0 ? { members, last: members.at(-1)!.relative } : { members };
  }

  async begin(drive: string, row: TrashRow): Promise<void> {
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: rowItem(drive, row), ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }));
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async abandon(drive: string, id: string): Promise<boolean> {
    // Refused before its mark, the delete wrote no member: one read tells, and the row goes only while filling.
    if ((await this.members(drive, id, 1)).members.length > 0) return false;
    try {
      await this.client.send(
        new DeleteItemCommand({ TableName: this.table, Key: rowKey(drive, id), ConditionExpression: '#state = :filling', ExpressionAttributeNames: { '#state': 'state' }, ExpressionAttributeValues: { ':filling': { S: 'filling' } } }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async putMember(drive: string, id: string, member: TrashMember): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.table, Item: memberItem(drive, id, member) }));
  }

  async filled(drive: string, id: string, counts: { files: number; bytes: number; purgeAt: string }): Promise<boolean> {
    try {
      await this.client.send(
        new TransactWriteItemsCommand({
          ClientRequestToken: randomUUID(),
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: rowKey(drive, id),
                UpdateExpression: 'SET #state = :trashed, #files = :files, #bytes = :bytes, #purgeAt = :purgeAt',
                ConditionExpression: '#state = :filling',
                ExpressionAttributeNames: { '#state': 'state', '#files': 'files', '#bytes': 'bytes', '#purgeAt': 'purgeAt' },
                ExpressionAttributeValues: { ':trashed': { S: 'trashed' }, ':filling': { S: 'filling' }, ':files': { N: String(counts.files) }, ':bytes': { N: String(counts.bytes) }, ':purgeAt': { S: counts.purgeAt } },
              },
            },
            { Put: { TableName: this.table, Item: dueItem(drive, id, counts.purgeAt) } },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const row = await this.get(drive, id);
      return row?.state === 'trashed' && row.purgeAt === counts.purgeAt;
    }
  }

  async claim(drive: string, id: string, kind: 'purge' | 'restore', by: string, now: Date, leaseMs: number): Promise<TrashRow | undefined> {
    const names = { '#pk': PK, '#state': 'state', '#purging': 'purging', '#restoring': 'restoring', '#claimedAt': 'claimedAt', '#purgeAt': 'purgeAt' };
    const values: Item = { ':trashed': { S: 'trashed' }, ':by': { S: by }, ':now': { S: now.toISOString() } };
    const free = 'attribute_not_exists(#purging) AND attribute_not_exists(#restoring)';
    let condition: string;
    let update: string;
    if (kind === 'purge') {
      // A purge before the row's time makes it due now: the due entry put beside the claim finds a purge that dies.
      const read = await this.get(drive, id);
      if (!read) return undefined;
      values[':lapsed'] = { S: new Date(now.getTime() - leaseMs).toISOString() };
      condition = `attribute_exists(#pk) AND #state = :trashed AND (${free} OR (attribute_not_exists(#restoring) AND (#purging = :by OR #claimedAt < :lapsed)))`;
      update = Date.parse(read.purgeAt) > now.getTime() ? 'SET #purging = :by, #claimedAt = :now, #purgeAt = :now' : 'SET #purging = :by, #claimedAt = :now';
    } else {
      condition = `attribute_exists(#pk) AND #state = :trashed AND (${free} OR (attribute_not_exists(#purging) AND #restoring = :by))`;
      update = 'SET #restoring = :by, #claimedAt = :now';
    }
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: rowKey(drive, id),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: Object.fromEntries(Object.entries(names).filter(([name]) => condition.includes(name) || update.includes(name))),
          ExpressionAttributeValues: Object.fromEntries(Object.entries(values).filter(([name]) => condition.includes(name) || update.includes(name))),
          ReturnValues: 'ALL_NEW',
        }),
      );
      const row = fromRowItem(out.Attributes!);
      if (kind === 'purge') await this.client.send(new PutItemCommand({ TableName: this.table, Item: dueItem(drive, id, row.purgeAt) }));
      return row;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  async release(drive: string, id: string, by: string, counts?: { files: number; bytes: number }): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: rowKey(drive, id),
          UpdateExpression: counts ? 'REMOVE #restoring, #claimedAt, #folderId SET #files = :files, #bytes = :bytes' : 'REMOVE #restoring, #claimedAt',
          ConditionExpression: '#restoring = :by',
          ExpressionAttributeNames: { '#restoring': 'restoring', '#claimedAt': 'claimedAt', ...(counts ? { '#files': 'files', '#bytes': 'bytes', '#folderId': 'folderId' } : {}) },
          ExpressionAttributeValues: { ':by': { S: by }, ...(counts ? { ':files': { N: String(counts.files) }, ':bytes': { N: String(counts.bytes) } } : {}) },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async removeMembers(drive: string, id: string, relatives: readonly string[]): Promise<void> {
    for (const batch of chunk(relatives, 25)) {
      let requests = batch.map((relative) => ({ DeleteRequest: { Key: { [PK]: { S: membersPartition(drive, id) }, [SK]: { S: relative } } } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchWriteItem left ${requests.length} trash members after ${attempt} attempts`);
        if (attempt > 0) await backoff(attempt);
        const out = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }));
        requests = (out.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  async remove(drive: string, id: string, by: string): Promise<boolean> {
    const row = await this.get(drive, id);
    if (!row || (row.purging !== by && row.restoring !== by)) return false;
    try {
      await this.client.send(
        new TransactWriteItemsCommand({
          ClientRequestToken: randomUUID(),
          TransactItems: [
            {
              Delete: {
                TableName: this.table,
                Key: rowKey(drive, id),
                ConditionExpression: '#purging = :by OR #restoring = :by',
                ExpressionAttributeNames: { '#purging': 'purging', '#restoring': 'restoring' },
                ExpressionAttributeValues: { ':by': { S: by } },
              },
            },
            { Delete: { TableName: this.table, Key: dueKey(drive, id, row.purgeAt) } },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof TransactionCanceledException) return false;
      throw error;
    }
  }

  async due(now: Date, limit: number): Promise<{ drive: string; id: string; purgeAt: string }[]> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: CURSOR_KEY, ConsistentRead: true }));
    const today = now.toISOString().slice(0, 10);
    let day = Item?.day?.S ?? new Date(now.getTime() - FIRST_LOOK_DAYS * 86_400_000).toISOString().slice(0, 10);
    const found: { drive: string; id: string; purgeAt: string }[] = [];
    let firstLeft: string | undefined;
    for (; day <= today && found.length < limit; day = nextDay(day)) {
      let any = false;
      for (let shard = 0; shard < DUE_SHARDS && found.length < limit; shard++) {
        let start: QueryCommandOutput['LastEvaluatedKey'];
        do {
          const out: QueryCommandOutput = await this.client.send(
            new QueryCommand({
              TableName: this.table,
              KeyConditionExpression: '#pk = :pk AND #sk <= :now',
              ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
              ExpressionAttributeValues: { ':pk': { S: `trashdue#${day}#${shard}` }, ':now': { S: `${now.toISOString()}~` } },
              ConsistentRead: true,
              Limit: limit - found.length,
              ExclusiveStartKey: start,
            }),
          );
          for (const item of out.Items ?? []) found.push({ drive: item.drive.S!, id: item.trashId.S!, purgeAt: item.purgeAt.S! });
          any ||= (out.Items ?? []).length > 0;
          start = found.length < limit ? out.LastEvaluatedKey : undefined;
        } while (start);
      }
      if (any && firstLeft === undefined) firstLeft = day;
    }
    // The first day with entries left (or today): earlier days are empty for good, as no row's purgeAt lies in the past.
    const next = firstLeft ?? (day > today ? today : day);
    if (next !== Item?.day?.S) await this.client.send(new PutItemCommand({ TableName: this.table, Item: { ...CURSOR_KEY, [TRASH_ATTRIBUTE]: { S: 'cursor' }, day: { S: next } } }));
    return found.sort((a, b) => (a.purgeAt < b.purgeAt ? -1 : a.purgeAt > b.purgeAt ? 1 : 0));
  }

  async dropDue(entry: { drive: string; id: string; purgeAt: string }): Promise<void> {
    await this.client.send(new DeleteItemCommand({ TableName: this.table, Key: dueKey(entry.drive, entry.id, entry.purgeAt) }));
  }
}

function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);
}

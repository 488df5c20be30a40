import { type AttributeValue, type BatchGetItemCommandOutput, type DynamoDBClient, BatchGetItemCommand, GetItemCommand, QueryCommand, TransactWriteItemsCommand, TransactionCanceledException, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { type ChangeLog, EMPTY_STATE, type LoggedChange, type MarkKey, type MoveMark, type SequencerState, markKey } from '../core/changes/change-log';
import { chunk } from './batches';
import { CHANGES_PARTITION_KEY as PK, CHANGES_SORT_KEY as SK, CHANGES_TTL_ATTRIBUTE } from './schema';

type Item = Record<string, AttributeValue>;

/** How long a move mark is kept: past the stream's 24 hours, so the sequencer always finds it. */
export const MOVE_MARK_TTL_SECONDS = 2 * 24 * 60 * 60;
// DynamoDB's limit of keys per BatchGetItem.
const READ_BATCH = 100;

/** A position as its sort key: 16 digits, so that string order is number order. */
export const positionKey = (position: number): string => String(position).padStart(16, '0');

/** The item of `key`'s move mark (its key only, or with what it holds). */
export function markItemKey(drive: string, key: MarkKey): Item {
  return { [PK]: { S: `mv#${drive}#${key.id}` }, [SK]: { S: `${key.from}\n${key.arrival}` } };
}

/** The move mark `FileRecords.move` puts in its transaction: the sequencer pairs the move's two records by it. */
export function markItem(drive: string, mark: MoveMark, now = Date.now()): Item {
  return {
    ...markItemKey(drive, mark),
    id: { S: mark.id },
    from: { S: mark.from },
    // An empty string is no attribute value everywhere (dynalite refuses one): a file that never moved has none.
    ...(mark.arrival ? { arrival: { S: mark.arrival } } : {}),
    to: { S: mark.to },
    moveId: { S: mark.moveId },
    [CHANGES_TTL_ATTRIBUTE]: { N: String(Math.floor(now / 1000) + MOVE_MARK_TTL_SECONDS) },
  };
}

const stateKey = (drive: string): Item => ({ [PK]: { S: `state#${drive}` }, [SK]: { S: '-' } });

/**
 * `ChangeLog` in the `changes` table: a drive's changes under its name by position, its sequencer's state
 * under `state#<drive>`, move marks under `mv#<drive>#<file id>`. A change lives `retentionSeconds` and an hour
 * after it is written, so a cursor is served whole for the whole retention (a 410 is decided by the cursor's
 * own time, never by when TTL gets round to a change).
 */
export class DynamoChangeLog implements ChangeLog {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    private readonly retentionSeconds: number,
  ) {}

  async readState(drive: string): Promise<SequencerState> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: stateKey(drive), ConsistentRead: true }));
    if (!Item) return structuredClone(EMPTY_STATE);
    const { partitions, halves } = JSON.parse(Item.doc.S!) as Pick<SequencerState, 'partitions' | 'halves'>;
    return { head: Number(Item.head.N), version: Number(Item.version.N), partitions, halves };
  }

  async readMarks(drive: string, keys: readonly MarkKey[]): Promise<Map<string, MoveMark>> {
    const found = new Map<string, MoveMark>();
    const unique = [...new Map(keys.map((key) => [markKey(key), key])).values()];
    for (const batch of chunk(unique, READ_BATCH)) {
      let pending: Item[] | undefined = batch.map((key) => markItemKey(drive, key));
      while (pending && pending.length > 0) {
        const out: BatchGetItemCommandOutput = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.table]: { Keys: pending, ConsistentRead: true } } }));
        for (const item of out.Responses?.[this.table] ?? []) {
          const mark: MoveMark = { id: item.id.S!, from: item.from.S!, arrival: item.arrival?.S ?? '', to: item.to.S!, moveId: item.moveId.S! };
          found.set(markKey(mark), mark);
        }
        pending = out.UnprocessedKeys?.[this.table]?.Keys;
      }
    }
    return found;
  }

  async commit(drive: string, state: SequencerState, changes: readonly LoggedChange[], marks: readonly MarkKey[]): Promise<boolean> {
    const expiresAt = String(Math.floor(Date.now() / 1000) + this.retentionSeconds + 3600);
    const previous = state.version - 1;
    const items: TransactWriteItem[] = [
      {
        Put: {
          TableName: this.table,
          Item: { ...stateKey(drive), head: { N: String(state.head) }, version: { N: String(state.version) }, doc: { S: JSON.stringify({ partitions: state.partitions, halves: state.halves }) } },
          ...(previous === 0
            ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }
            : { ConditionExpression: '#version = :version', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':version': { N: String(previous) } } }),
        },
      },
      ...changes.map(
        (change): TransactWriteItem => ({
          Put: {
            TableName: this.table,
            Item: { [PK]: { S: drive }, [SK]: { S: positionKey(change.position) }, doc: { S: JSON.stringify(change) }, [CHANGES_TTL_ATTRIBUTE]: { N: expiresAt } },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          },
        }),
      ),
      ...marks.map((mark): TransactWriteItem => ({ Delete: { TableName: this.table, Key: markItemKey(drive, mark) } })),
    ];
    try {
      await this.client.send(new TransactWriteItemsCommand({ TransactItems: items }));
      return true;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      // The state's condition lost (another invocation wrote the drive since the read: its positions are then
      // taken too), or another transaction held an item meanwhile: read again and go round.
      if (reasons[0]?.Code === 'ConditionalCheckFailed' || reasons.some((reason) => reason.Code === 'TransactionConflict')) return false;
      // A position taken while the state's version held is a sequencer bug, never a race.
      throw error;
    }
  }

  async read(drive: string, after: number, limit: number): Promise<LoggedChange[]> {
    const changes: LoggedChange[] = [];
    let start: Item | undefined;
    do {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :drive AND #sk > :after',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':drive': { S: drive }, ':after': { S: positionKey(after) } },
          ConsistentRead: true,
          Limit: limit - changes.length,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) changes.push(JSON.parse(item.doc.S!) as LoggedChange);
      start = out.LastEvaluatedKey;
    } while (start && changes.length < limit);
    return changes;
  }

  async readBefore(drive: string, before: number | undefined, limit: number): Promise<{ changes: LoggedChange[]; more: boolean }> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: before === undefined ? '#pk = :drive' : '#pk = :drive AND #sk < :before',
        ExpressionAttributeNames: before === undefined ? { '#pk': PK } : { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':drive': { S: drive }, ...(before === undefined ? {} : { ':before': { S: positionKey(before) } }) },
        ConsistentRead: true,
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return { changes: (out.Items ?? []).map((item) => JSON.parse(item.doc.S!) as LoggedChange), more: out.LastEvaluatedKey !== undefined };
  }

  async newest(drive: string): Promise<number> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: '#pk = :drive',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':drive': { S: drive } },
        ConsistentRead: true,
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    const item = out.Items?.[0];
    return item ? Number(item[SK].S) : 0;
  }
}

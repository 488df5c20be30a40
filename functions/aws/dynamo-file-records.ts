import { type AttributeValue, type DynamoDBClient, TransactWriteItemsCommand, TransactionCanceledException, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import {
  type FileNode,
  type FileRecords,
  type FolderNode,
  MAX_FILES_PER_REMOVE,
  type MembersExpectation,
  type MembersOutcome,
  MAX_FILES_PER_TRASH,
  type MoveExpectation,
  type MoveOutcome,
  type RestoreExpectation,
  type RestoreOutcome,
  type TrashInto,
  type TrashMember,
  type TrashRow,
  type TrashStamp,
} from '../core/ports';
import { fileMember, fileRow, restoredRecord } from '../core/trash';
import { BATCH_ATTEMPTS, backoff } from './batches';
import { keyOf, toItem } from './dynamo-node-store';
import { dueItem, dueKey, memberItem, membersPartition, rowItem, rowKey, restorableCondition } from './dynamo-trash';
import { markItem } from './dynamo-change-log';
import { journalItem, trashNoteItem } from './dynamo-upload-journal';
import { NODES_PARTITION_KEY, NODES_SORT_KEY, UPLOADS_PARTITION_KEY } from './schema';

type Item = Record<string, AttributeValue>;

/** Cancellation reasons that pass: a transaction cancelled for one of them made nothing and may be tried again. */
const RETRIED = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * `FileRecords` as DynamoDB transactions across the nodes table, the uploads table (the journal's and the
 * sessions') and, for a move's mark, the changes table. The SDK gives each transaction an idempotency token and
 * keeps it across its retries, so a retry after a lost reply is answered as the first try was.
 */
export class DynamoFileRecords implements FileRecords {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly nodesTable: string,
    private readonly uploadsTable: string,
    private readonly changesTable: string,
  ) {}

  async move(drive: string, file: FileNode, to: string, expected: MoveExpectation): Promise<MoveOutcome> {
    const { pending: _, ...moved } = { ...file, path: to, movedAt: new Date().toISOString() };
    // The change feed pairs the move's two stream records by its mark (docs/change-feed-design.md): the mark
    // names this departure of the file from its path by how it arrived there (its `movedAt`, if it moved).
    const mark = { id: file.id, from: file.path, arrival: file.movedAt ?? '', to, moveId: randomUUID() };
    const record = { ...toItem(drive, moved), movedFrom: { S: file.path }, moveId: { S: mark.moveId }, ...(file.movedAt ? { moveArrival: { S: file.movedAt } } : {}) };
    const items: { item: TransactWriteItem; changed: 'source' | 'destination' | 'folders' | 'pending' }[] = [
      {
        changed: 'destination',
        item: {
          Put: {
            TableName: this.nodesTable,
            Item: record,
            ...(expected.replacing ? sameId(expected.replacing.id) : { ConditionExpression: 'attribute_not_exists(#id)', ExpressionAttributeNames: { '#id': 'id' } }),
          },
        },
      },
      { changed: 'source', item: { Delete: { TableName: this.nodesTable, Key: keyOf(drive, file.path), ...sameId(file.id) } } },
      // Unconditional: in the move's transaction, it is written with the move or not at all.
      { changed: 'destination', item: { Put: { TableName: this.changesTable, Item: markItem(drive, mark) } } },
    ];
    // One check a folder: a transaction may name an item once (a rename has one parent at both ends).
    const parents = new Map([expected.sourceParent, expected.destinationParent].filter((folder) => folder !== undefined).map((folder) => [folder.path, folder]));
    for (const folder of parents.values()) {
      items.push({ changed: 'folders', item: { ConditionCheck: { TableName: this.nodesTable, Key: keyOf(drive, folder.path), ...standing(folder, expected.job) } } });
    }
    if (file.pending) {
      items.push({
        changed: 'pending',
        item: { ConditionCheck: { TableName: this.uploadsTable, Key: { [UPLOADS_PARTITION_KEY]: { S: file.pending } }, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': UPLOADS_PARTITION_KEY } } },
      });
    }
    let journal: string | undefined;
    let trashed: TrashRow | undefined;
    if (expected.replacing && expected.trash) {
      // With trash on, the replaced record becomes a row (and its due entry) where the journal entry was.
      trashed = fileRow(expected.replacing, expected.trash);
      for (const item of this.rowItems(drive, expected.replacing, trashed)) items.push({ changed: 'destination', item });
    } else if (expected.replacing) {
      const entry = journalItem(drive, [expected.replacing], expected.sweepAfter);
      journal = entry[UPLOADS_PARTITION_KEY].S!;
      items.push({ changed: 'destination', item: { Put: { TableName: this.uploadsTable, Item: entry } } });
    }
    const failed = await this.transact(items.map(({ item }) => item));
    if (failed === undefined) return { moved: true, ...(journal ? { journal } : {}), ...(trashed ? { trashed } : {}) };
    return { moved: false, changed: items[failed[0]].changed };
  }

  async removeMany(drive: string, files: readonly FileNode[], sweepAfter: Date): Promise<{ entry: string } | { changed: FileNode[] }> {
    if (files.length < 1 || files.length > MAX_FILES_PER_REMOVE) throw new RangeError(`removeMany takes 1 to ${MAX_FILES_PER_REMOVE} files (got ${files.length})`);
    const entry = journalItem(drive, files, sweepAfter);
    const failed = await this.transact([
      ...files.map((file): TransactWriteItem => ({ Delete: { TableName: this.nodesTable, Key: keyOf(drive, file.path), ...sameId(file.id) } })),
      { Put: { TableName: this.uploadsTable, Item: entry } },
    ]);
    return failed === undefined ? { entry: entry[UPLOADS_PARTITION_KEY].S! } : { changed: failed.map((i) => files[i]) };
  }

  async trashMany(drive: string, files: readonly FileNode[], into: TrashInto): Promise<{ trashed: TrashRow[] } | { changed: FileNode[] }> {
    if (files.length < 1 || files.length > MAX_FILES_PER_TRASH) throw new RangeError(`trashMany takes 1 to ${MAX_FILES_PER_TRASH} files (got ${files.length})`);
    const items: TransactWriteItem[] = files.map((file) => ({ Delete: { TableName: this.nodesTable, Key: keyOf(drive, file.path), ...sameId(file.id) } }));
    const trashed: TrashRow[] = [];
    if ('back' in into) {
      // A withdrawing restore: the row as it was, unclaimed, and its due entry.
      const { restoring: _, purging: __, claimedAt: ___, ...row } = into.back;
      const putBack = into.putBack;
      if (putBack?.row.file) {
        // What the restore overwrote takes the path again, in place of the restored record (still its own),
        // its row and due entry gone: only while that row stands restorable and unclaimed.
        if (putBack.row.file.path !== files[0].path) throw new RangeError(`a restore puts back only what stood at ${files[0].path} (got ${putBack.row.file.path})`);
        items[0] = { Put: { TableName: this.nodesTable, Item: toItem(drive, putBack.row.file), ...sameId(files[0].id) } };
        items.push(
          { Delete: { TableName: this.nodesTable, Key: rowKey(drive, putBack.row.id), ...restorableCondition(putBack.now) } },
          { Delete: { TableName: this.nodesTable, Key: dueKey(drive, putBack.row.id, putBack.row.purgeAt) } },
        );
      }
      items.push({ Put: { TableName: this.nodesTable, Item: rowItem(drive, row) } }, { Put: { TableName: this.nodesTable, Item: dueItem(drive, row.id, row.purgeAt) } });
      trashed.push(row);
    } else if ('rows' in into) {
      for (const file of files) {
        const row = fileRow(file, into.rows);
        items.push(...this.rowItems(drive, file, row));
        trashed.push(row);
      }
    } else {
      const row = into.folder;
      for (const file of files) {
        const member = fileMember(row, file);
        items.push({ Put: { TableName: this.nodesTable, Item: memberItem(drive, row.id, member) } });
        if (file.pending) items.push({ Put: { TableName: this.uploadsTable, Item: trashNoteItem(file.pending, file.objectKey, { drive, id: row.id, relative: member.relative }, row.purgeAt) } });
      }
      // Members only into a row still filling (a purge of a row never meets its delete).
      items.push({
        ConditionCheck: { TableName: this.nodesTable, Key: rowKey(drive, row.id), ConditionExpression: '#state = :filling', ExpressionAttributeNames: { '#state': 'state' }, ExpressionAttributeValues: { ':filling': { S: 'filling' } } },
      });
    }
    const failed = await this.transact(items);
    if (failed === undefined) return { trashed };
    const changed = failed.flatMap((i) => (i < files.length ? [files[i]] : []));
    return { changed: changed.length > 0 ? changed : [...files] };
  }

  async restore(drive: string, row: TrashRow, to: string, expected: RestoreExpectation): Promise<RestoreOutcome> {
    if (!row.file) return { restored: false, changed: 'item' };
    const movedAt = to === row.path ? row.file.movedAt : expected.now.toISOString();
    const { movedAt: _, ...record } = row.file;
    const file: FileNode = { ...record, path: to, ...(movedAt ? { movedAt } : {}) };
    const items: { item: TransactWriteItem; changed: 'destination' | 'folders' | 'item' }[] = [
      {
        changed: 'destination',
        item: {
          Put: {
            TableName: this.nodesTable,
            Item: toItem(drive, file),
            ...(expected.replacing ? sameId(expected.replacing.id) : { ConditionExpression: 'attribute_not_exists(#id)', ExpressionAttributeNames: { '#id': 'id' } }),
          },
        },
      },
      { changed: 'item', item: { Delete: { TableName: this.nodesTable, Key: rowKey(drive, row.id), ...restorableCondition(expected.now, expected.job) } } },
      { changed: 'item', item: { Delete: { TableName: this.nodesTable, Key: dueKey(drive, row.id, row.purgeAt) } } },
    ];
    if (expected.parent) items.push({ changed: 'folders', item: { ConditionCheck: { TableName: this.nodesTable, Key: keyOf(drive, expected.parent.path), ...standing(expected.parent) } } });
    let replaced: TrashRow | undefined;
    if (expected.replacing) {
      replaced = fileRow(expected.replacing, expected.stamp ?? { reason: 'replaced', deletedAt: expected.now.toISOString(), purgeAt: row.purgeAt });
      for (const item of this.rowItems(drive, expected.replacing, replaced)) items.push({ changed: 'destination', item });
    }
    const failed = await this.transact(items.map(({ item }) => item));
    if (failed === undefined) return { restored: true, file, ...(replaced ? { replaced } : {}) };
    return { restored: false, changed: items[failed[0]].changed };
  }

  async keepReplaced(drive: string, files: readonly FileNode[], stamp: TrashStamp, options: { once?: boolean } = {}): Promise<TrashRow[]> {
    if (files.length < 1 || files.length > MAX_FILES_PER_TRASH) throw new RangeError(`keepReplaced takes 1 to ${MAX_FILES_PER_TRASH} files (got ${files.length})`);
    let pending = files.map((file) => ({ file, row: fileRow(file, stamp) }));
    // `once`: a file whose note stands is left out and the rest written again, until none is refused; only notes
    // carry a condition, so each round leaves out at least one file.
    while (pending.length > 0) {
      const owners: number[] = [];
      const items = pending.flatMap(({ file, row }, i) => this.rowItems(drive, file, row, options.once).map((item) => (owners.push(i), item)));
      const failed = await this.transact(items);
      if (failed === undefined) return pending.map(({ row }) => row);
      const refused = new Set(failed.map((index) => owners[index]));
      pending = pending.filter((_, i) => !refused.has(i));
    }
    return [];
  }

  async restoreMembers(drive: string, row: TrashRow, files: readonly { member: TrashMember; to: string }[], expected: MembersExpectation): Promise<MembersOutcome> {
    if (files.length < 1 || files.length > MAX_FILES_PER_TRASH) throw new RangeError(`restoreMembers takes 1 to ${MAX_FILES_PER_TRASH} files (got ${files.length})`);
    // Per file its record and its member (2 items), then each parent once and the row: at most 25 × 2 + 25 + 1 items.
    const written: FileNode[] = [];
    const items: TransactWriteItem[] = [];
    for (const { member, to } of files) {
      const record = restoredRecord(row, member, to, expected.now);
      written.push(record);
      items.push(
        { Put: { TableName: this.nodesTable, Item: toItem(drive, record), ConditionExpression: 'attribute_not_exists(#id)', ExpressionAttributeNames: { '#id': 'id' } } },
        {
          Delete: {
            TableName: this.nodesTable,
            Key: { [NODES_PARTITION_KEY]: { S: membersPartition(drive, row.id) }, [NODES_SORT_KEY]: { S: member.relative } },
            ConditionExpression: 'attribute_exists(#file)',
            ExpressionAttributeNames: { '#file': 'file' },
          },
        },
      );
    }
    const firstParent = items.length;
    for (const folder of expected.parents) items.push({ ConditionCheck: { TableName: this.nodesTable, Key: keyOf(drive, folder.path), ...standing(folder) } });
    items.push({ ConditionCheck: { TableName: this.nodesTable, Key: rowKey(drive, row.id), ...restorableCondition(expected.now, expected.job) } });
    const failed = await this.transact(items);
    if (failed === undefined) return { restored: written };
    if (failed.includes(items.length - 1)) return { restored: false, changed: 'item' };
    if (failed.some((i) => i >= firstParent)) return { restored: false, changed: 'folders' };
    return { restored: false, taken: [...new Set(failed.map((i) => Math.floor(i / 2)))] };
  }

  /**
   * A file's row, its due entry, and (a pending record) its note: the items that make a file a trash row.
   * `once`: the note only where none stands (`keepReplaced`).
   */
  private rowItems(drive: string, file: FileNode, row: TrashRow, once = false): TransactWriteItem[] {
    const onlyNew = once ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': UPLOADS_PARTITION_KEY } } : {};
    return [
      { Put: { TableName: this.nodesTable, Item: rowItem(drive, row) } },
      { Put: { TableName: this.nodesTable, Item: dueItem(drive, row.id, row.purgeAt) } },
      ...(file.pending ? [{ Put: { TableName: this.uploadsTable, Item: trashNoteItem(file.pending, file.objectKey, { drive, id: row.id }, row.purgeAt), ...onlyNew } }] : []),
    ];
  }

  /**
   * Runs the transaction: undefined if it was made, else the indexes of the items whose condition failed (at
   * least one). One cancelled because another transaction held an item meanwhile, or its items' partition
   * was throttled (a transaction of many files in one folder writes to one partition), is tried again (the
   * same token: the first try made nothing).
   */
  private async transact(items: TransactWriteItem[]): Promise<number[] | undefined> {
    const command = new TransactWriteItemsCommand({ TransactItems: items, ClientRequestToken: randomUUID() });
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(command);
        return undefined;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const reasons = error.CancellationReasons ?? [];
        const failed = reasons.flatMap((reason, i) => (reason.Code === 'ConditionalCheckFailed' ? [i] : []));
        if (failed.length > 0) return failed;
        if (attempt === BATCH_ATTEMPTS || !reasons.some((reason) => RETRIED.has(reason.Code ?? ''))) throw error;
        await backoff(attempt);
      }
    }
  }
}

/** A condition that the item holds the record with id `id`. */
function sameId(id: string): Pick<NonNullable<TransactWriteItem['Delete']>, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> {
  return { ConditionExpression: '#id = :id', ExpressionAttributeNames: { '#id': 'id' }, ExpressionAttributeValues: { ':id': { S: id } } };
}

/** A condition that `folder` stands, with its id, and no delete has marked it, nor any move but `job`. */
function standing(folder: FolderNode, job?: string): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Item } {
  return {
    ConditionExpression: `#id = :id AND #kind = :folder AND attribute_not_exists(#deleting) AND ${job ? '(attribute_not_exists(#moving) OR #moving = :job)' : 'attribute_not_exists(#moving)'}`,
    ExpressionAttributeNames: { '#id': 'id', '#kind': 'kind', '#deleting': 'deleting', '#moving': 'moving' },
    ExpressionAttributeValues: { ':id': { S: folder.id }, ':folder': { S: 'folder' }, ...(job ? { ':job': { S: job } } : {}) },
  };
}

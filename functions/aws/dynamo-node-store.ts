import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mapLimit } from '../core/concurrency';
import { ROOT, nameOf, parentOf } from '../core/paths';
import type { DeleteMark, DriveNode, FileNode, FolderNode, NodeStore, PutFileResult, RemoveCondition, WriteCondition } from '../core/ports';
import { BATCH_ATTEMPTS, backoff, chunk } from './batches';
import { markRefusal, watchAttempts } from './refused-writes';
import { NODES_PARTITION_KEY as PK, NODES_SORT_KEY as SK } from './schema';

type Item = Record<string, AttributeValue>;

// DynamoDB's limit of keys per BatchGetItem.
const READ_BATCH = 100;
const BATCH_CONCURRENCY = 8;

/** Nodes in one DynamoDB table: partition `<drive>#<parent path>`, sort key the node's name. */
export class DynamoNodeStore implements NodeStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {
    // A failed record write tells whether it was refused outright (`putFile`).
    watchAttempts(client);
  }

  async get(drive: string, path: string): Promise<DriveNode | undefined> {
    // The root has no item (its name would be an empty sort key, which DynamoDB refuses).
    if (path === ROOT) return undefined;
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: keyOf(drive, path), ConsistentRead: true }));
    return Item && fromItem(Item);
  }

  async getMany(drive: string, paths: readonly string[]): Promise<Map<string, DriveNode>> {
    const found = new Map<string, DriveNode>();
    const batches = chunk([...new Set(paths)].filter((path) => path !== ROOT), READ_BATCH);
    await mapLimit(batches, BATCH_CONCURRENCY, async (batch) => {
      let keys: Item[] | undefined = batch.map((path) => keyOf(drive, path));
      for (let attempt = 0; keys && keys.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchGetItem left ${keys.length} keys unprocessed after ${attempt} attempts`);
        if (attempt > 0) await backoff(attempt);
        const out: BatchGetItemCommandOutput = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } }));
        for (const item of out.Responses?.[this.table] ?? []) {
          const node = fromItem(item);
          found.set(node.path, node);
        }
        keys = out.UnprocessedKeys?.[this.table]?.Keys;
      }
    });
    return found;
  }

  async children(drive: string, folder: string): Promise<DriveNode[]> {
    const nodes: DriveNode[] = [];
    let start: Item | undefined;
    do {
      const out = await this.client.send(new QueryCommand({ ...this.childrenOf(drive, folder), ExclusiveStartKey: start }));
      for (const item of out.Items ?? []) nodes.push(fromItem(item));
      start = out.LastEvaluatedKey;
    } while (start);
    return nodes;
  }

  async childrenPage(drive: string, folder: string, limit: number, after?: string): Promise<{ nodes: DriveNode[]; last?: string }> {
    // One Query from where the last page stopped, of one item more than the page: a page costs what it holds,
    // whatever the folder's size, and the extra item tells whether another page follows (DynamoDB's own
    // LastEvaluatedKey would promise one after a page that ends the folder exactly).
    const start = after === undefined ? undefined : { [PK]: { S: partitionOf(drive, folder) }, [SK]: { S: after } };
    const out = await this.client.send(new QueryCommand({ ...this.childrenOf(drive, folder), Limit: limit + 1, ExclusiveStartKey: start }));
    const items = out.Items ?? [];
    const nodes = items.slice(0, limit).map(fromItem);
    if (items.length > limit) return { nodes, last: nameOf(nodes.at(-1)!.path) };
    // A Query stops at 1 MB of items too: then the page is shorter, and more follow.
    return { nodes, ...(out.LastEvaluatedKey ? { last: out.LastEvaluatedKey[SK].S! } : {}) };
  }

  async hasChildren(drive: string, folder: string): Promise<boolean> {
    const out = await this.client.send(new QueryCommand({ ...this.childrenOf(drive, folder), Limit: 1, ProjectionExpression: '#pk' }));
    return (out.Items?.length ?? 0) > 0;
  }

  async createFolder(drive: string, folder: FolderNode): Promise<FolderNode | undefined> {
    if (folder.moving) return this.createMarked(drive, folder);
    // One update that creates the folder or leaves an existing one as it is, and says which (ALL_OLD); only a
    // file fails the condition, so no read is needed either way.
    try {
      const { Attributes } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(drive, folder.path),
          UpdateExpression: 'SET #kind = if_not_exists(#kind, :folder), #id = if_not_exists(#id, :id), #path = if_not_exists(#path, :path), #createdAt = if_not_exists(#createdAt, :createdAt)',
          ConditionExpression: 'attribute_not_exists(#pk) OR #kind = :folder',
          ExpressionAttributeNames: { '#pk': PK, '#kind': 'kind', '#id': 'id', '#path': 'path', '#createdAt': 'createdAt' },
          ExpressionAttributeValues: { ':folder': { S: 'folder' }, ':id': { S: folder.id }, ':path': { S: folder.path }, ':createdAt': { S: folder.createdAt } },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return Attributes ? (fromItem(Attributes) as FolderNode) : folder;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  async keepFolder(drive: string, folder: FolderNode): Promise<FolderNode | undefined> {
    // Conditional on the id the mkdir read: a note never lands on a folder made after it looked (protocol/README.md, gap 10).
    try {
      const { Attributes } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(drive, folder.path),
          UpdateExpression: 'SET #kept = :kept',
          ConditionExpression: '#kind = :folder AND #id = :id',
          ExpressionAttributeNames: { '#kind': 'kind', '#id': 'id', '#kept': 'kept' },
          ExpressionAttributeValues: { ':folder': { S: 'folder' }, ':id': { S: folder.id }, ':kept': { BOOL: true } },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return fromItem(Attributes!) as FolderNode;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** A folder made with its move's mark, only where nothing stands: the mark must never land on a folder made by another request. */
  private async createMarked(drive: string, folder: FolderNode): Promise<FolderNode | undefined> {
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: toItem(drive, folder), ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }));
      const { movedFrom: _, ...made } = folder;
      return made;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const held = await this.get(drive, folder.path);
      return held?.kind === 'folder' ? held : undefined;
    }
  }

  async putFile(drive: string, file: FileNode, options: { replace?: boolean; condition?: WriteCondition } = {}): Promise<PutFileResult> {
    const { condition } = options;
    const input = { TableName: this.table, Item: toItem(drive, file), ...putCondition(file, options), ReturnValues: 'ALL_OLD' as const };
    try {
      const { Attributes } = await this.client.send(new PutItemCommand(input));
      const replaced = Attributes && fromItem(Attributes);
      // An SDK retry of a write that was saved finds our own record: nothing was replaced.
      return { ok: true, replaced: replaced?.kind === 'file' && replaced.id !== file.id ? replaced : undefined };
    } catch (error) {
      // Only a folder (or, not replacing, any node) fails the condition; with a request's condition, that condition.
      if (error instanceof ConditionalCheckFailedException) return condition ? { ok: false, precondition: true } : { ok: false };
      // Refused outright at every attempt (a throttle, say): surely not written, which the caller may rely on.
      throw markRefusal(error, input);
    }
  }

  async removeIfSame(drive: string, path: string, id: string, only?: RemoveCondition): Promise<boolean> {
    // The condition on marks rides in the same conditional delete: no read first.
    return writtenIfSame(this.client.send(new DeleteItemCommand({ TableName: this.table, Key: keyOf(drive, path), ...(only ? sameIdAnd(id, only) : sameId(id)) })));
  }

  async restoreIfSame(drive: string, _path: string, id: string, previous: DriveNode): Promise<boolean> {
    return writtenIfSame(this.client.send(new PutItemCommand({ TableName: this.table, Item: toItem(drive, previous), ...sameId(id) })));
  }

  async markDeleting(drive: string, folder: FolderNode, mark: DeleteMark, only?: { unmarked: true }): Promise<FolderNode | undefined> {
    // `recursive` is never downgraded to `empty`: a delete that takes everything stays that delete. A writer
    // letting go (`unmarked`) takes only a folder nobody else holds, and no mkdir answered for.
    const keep = only?.unmarked
      ? ' AND attribute_not_exists(#deleting) AND attribute_not_exists(#kept)'
      : mark === 'empty'
        ? ' AND (attribute_not_exists(#deleting) OR #deleting = :mark)'
        : '';
    try {
      const { Attributes } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(drive, folder.path),
          UpdateExpression: 'SET #deleting = :mark',
          // A folder a move has taken is not marked: the delete waits for the move (see `moving`).
          ConditionExpression: `#kind = :folder AND #id = :id AND attribute_not_exists(#moving)${keep}`,
          ExpressionAttributeNames: { '#kind': 'kind', '#id': 'id', '#deleting': 'deleting', '#moving': 'moving', ...(only?.unmarked ? { '#kept': 'kept' } : {}) },
          ExpressionAttributeValues: { ':folder': { S: 'folder' }, ':id': { S: folder.id }, ':mark': { S: mark } },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return fromItem(Attributes!) as FolderNode;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      if (only?.unmarked) return undefined;
      const held = error.Item ? fromItem(error.Item) : await this.get(drive, folder.path);
      // Marked `recursive` already (that delete has it, and this one joins it), or taken by a move (the caller
      // sees its `moving`).
      return held?.kind === 'folder' && held.id === folder.id ? held : undefined;
    }
  }

  async markMoving(drive: string, folder: FolderNode, job: string): Promise<FolderNode | undefined> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(drive, folder.path),
          UpdateExpression: 'SET #moving = :job',
          ConditionExpression: '#kind = :folder AND #id = :id AND attribute_not_exists(#deleting) AND (attribute_not_exists(#moving) OR #moving = :job)',
          ExpressionAttributeNames: { '#kind': 'kind', '#id': 'id', '#deleting': 'deleting', '#moving': 'moving' },
          ExpressionAttributeValues: { ':folder': { S: 'folder' }, ':id': { S: folder.id }, ':job': { S: job } },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return fromItem(Attributes!) as FolderNode;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  async unmarkMoving(drive: string, folder: FolderNode, job: string, ended?: 'stopped'): Promise<boolean> {
    return this.conditionally(() =>
      this.client.send(new UpdateItemCommand({
        TableName: this.table,
        Key: keyOf(drive, folder.path),
        UpdateExpression: ended ? 'REMOVE #moving SET #ended = :ended' : 'REMOVE #moving',
        ConditionExpression: '#id = :id AND #moving = :job',
        ExpressionAttributeNames: { '#id': 'id', '#moving': 'moving', ...(ended ? { '#ended': 'ended' } : {}) },
        ExpressionAttributeValues: { ':id': { S: folder.id }, ':job': { S: job }, ...(ended ? { ':ended': { S: ended } } : {}) },
      })),
    );
  }

  async unmarkDeleting(drive: string, folder: FolderNode): Promise<boolean> {
    return this.conditionally(() =>
      this.client.send(new UpdateItemCommand({
        TableName: this.table,
        Key: keyOf(drive, folder.path),
        UpdateExpression: 'REMOVE #deleting',
        ConditionExpression: '#id = :id AND #deleting = :empty',
        ExpressionAttributeNames: { '#id': 'id', '#deleting': 'deleting' },
        ExpressionAttributeValues: { ':id': { S: folder.id }, ':empty': { S: 'empty' } },
      })),
    );
  }

  async removeFolder(drive: string, folder: FolderNode): Promise<boolean> {
    return this.conditionally(() =>
      this.client.send(new DeleteItemCommand({
        TableName: this.table,
        Key: keyOf(drive, folder.path),
        ConditionExpression: '#id = :id AND attribute_exists(#deleting)',
        ExpressionAttributeNames: { '#id': 'id', '#deleting': 'deleting' },
        ExpressionAttributeValues: { ':id': { S: folder.id } },
      })),
    );
  }

  /** Makes a conditional write: true if it was made, false if its condition failed. */
  private async conditionally(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** A strongly consistent query of the partition that holds `folder`'s children. */
  private childrenOf(drive: string, folder: string) {
    return {
      TableName: this.table,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': PK },
      ExpressionAttributeValues: { ':pk': { S: partitionOf(drive, folder) } },
      ConsistentRead: true,
    };
  }
}

/** The partition holding the children of `folder`. */
export function partitionOf(drive: string, folder: string): string {
  return `${drive}#${folder}`;
}

/** The primary key of the node at `path`. */
export function keyOf(drive: string, path: string): Item {
  return { [PK]: { S: partitionOf(drive, parentOf(path)) }, [SK]: { S: nameOf(path) } };
}

/** The item a node is stored as (exported for seeding benchmarks and tools). */
export function toItem(drive: string, node: DriveNode): Item {
  const item: Item = {
    ...keyOf(drive, node.path),
    kind: { S: node.kind },
    id: { S: node.id },
    path: { S: node.path },
    createdAt: { S: node.createdAt },
  };
  if (node.kind === 'folder' && node.deleting) item.deleting = { S: node.deleting };
  if (node.kind === 'folder' && node.moving) item.moving = { S: node.moving };
  // What the change feed tells a folder move's end by: the job's own mark cleared from the folder it made.
  if (node.kind === 'folder' && node.moving && node.movedFrom !== undefined) Object.assign(item, { moveJob: { S: node.moving }, movedFrom: { S: node.movedFrom } });
  if (node.kind === 'folder' && node.kept) item.kept = { BOOL: true };
  if (node.kind === 'file') {
    item.size = { N: String(node.size) };
    item.contentType = { S: node.contentType };
    item.objectKey = { S: node.objectKey };
    item.etag = { S: node.etag };
    if (node.pending) item.pending = { S: node.pending };
    if (node.movedAt) item.movedAt = { S: node.movedAt };
  }
  return item;
}

/** The node an item holds. */
export function fromItem(item: Item): DriveNode {
  const common = { id: item.id.S!, path: item.path.S!, createdAt: item.createdAt.S! };
  if (item.kind.S === 'folder') {
    return {
      kind: 'folder',
      ...common,
      ...(item.deleting?.S ? { deleting: item.deleting.S as DeleteMark } : {}),
      ...(item.moving?.S ? { moving: item.moving.S } : {}),
      ...(item.kept?.BOOL ? { kept: true as const } : {}),
    };
  }
  // Records from before content hashes carry none: their id stands in, which no hash matches.
  return { kind: 'file', ...common, size: Number(item.size.N), contentType: item.contentType.S!, objectKey: item.objectKey.S!, etag: item.etag?.S ?? item.id.S!, ...(item.pending?.S ? { pending: item.pending.S } : {}), ...(item.movedAt?.S ? { movedAt: item.movedAt.S } : {}) };
}

/**
 * The condition of a file's write (protocol/README.md, "Transitions"): no folder there; not replacing, nothing
 * there; with a request's condition, that condition. An SDK retry of a saved write finds its own record, so
 * `#id = :id` lets it through wherever the write may not replace. A record from before content hashes has no
 * `etag`: its id stands in (`fromItem`), so `if_match` compares the id there.
 */
function putCondition(file: FileNode, options: { replace?: boolean; condition?: WriteCondition }): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, { S: string }> } {
  const { condition } = options;
  if (condition && 'ifMatch' in condition) {
    return {
      ConditionExpression: '(#kind = :file AND (#etag = :etag OR (attribute_not_exists(#etag) AND #id = :etag))) OR #id = :id',
      ExpressionAttributeNames: { '#kind': 'kind', '#etag': 'etag', '#id': 'id' },
      ExpressionAttributeValues: { ':file': { S: 'file' }, ':etag': { S: condition.ifMatch }, ':id': { S: file.id } },
    };
  }
  if (condition || options.replace === false) {
    return { ConditionExpression: 'attribute_not_exists(#pk) OR #id = :id', ExpressionAttributeNames: { '#pk': PK, '#id': 'id' }, ExpressionAttributeValues: { ':id': { S: file.id } } };
  }
  return { ConditionExpression: 'attribute_not_exists(#pk) OR #kind = :file', ExpressionAttributeNames: { '#pk': PK, '#kind': 'kind' }, ExpressionAttributeValues: { ':file': { S: 'file' } } };
}

/** The condition that the item written over is the node with id `id`. */
function sameId(id: string) {
  return { ConditionExpression: '#id = :id', ExpressionAttributeNames: { '#id': 'id' }, ExpressionAttributeValues: { ':id': { S: id } } };
}

/** `sameId`, and the marks `only` asks of the folder there. */
function sameIdAnd(id: string, only: RemoveCondition) {
  if ('unmarked' in only) {
    return {
      ConditionExpression: '#id = :id AND attribute_not_exists(#deleting) AND attribute_not_exists(#moving) AND attribute_not_exists(#kept)',
      ExpressionAttributeNames: { '#id': 'id', '#deleting': 'deleting', '#moving': 'moving', '#kept': 'kept' },
      ExpressionAttributeValues: { ':id': { S: id } },
    };
  }
  return {
    ConditionExpression: '#id = :id AND #moving = :job',
    ExpressionAttributeNames: { '#id': 'id', '#moving': 'moving' },
    ExpressionAttributeValues: { ':id': { S: id }, ':job': { S: only.movingJob } },
  };
}

/** Whether the write conditioned by `sameId` was made: false when the node there is another (not ours, or written since). */
async function writtenIfSame(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    // Not ours, or someone wrote the path since: their version stands.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
}

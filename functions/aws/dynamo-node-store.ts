import {
  type AttributeValue,
  BatchWriteItemCommand,
  type BatchWriteItemCommandOutput,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { settleLimit } from '../core/concurrency';
import { ROOT, nameOf, parentOf } from '../core/paths';
import { depthOf } from '../core/tree';
import type { DriveNode, FileNode, FolderNode, NodeStore, PutFileResult } from '../core/ports';
import { BATCH_ATTEMPTS, backoff, chunk } from './batches';
import { NODES_PARTITION_KEY as PK, NODES_SORT_KEY as SK } from './schema';

type Item = Record<string, AttributeValue>;

// DynamoDB's limit of items per BatchWriteItem.
const WRITE_BATCH = 25;
const BATCH_CONCURRENCY = 8;

/** Nodes in one DynamoDB table: partition `<drive>#<parent path>`, sort key the node's name. */
export class DynamoNodeStore implements NodeStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async get(drive: string, path: string): Promise<DriveNode | undefined> {
    // The root has no item (its name would be an empty sort key, which DynamoDB refuses).
    if (path === ROOT) return undefined;
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: keyOf(drive, path), ConsistentRead: true }));
    return Item && fromItem(Item);
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

  async hasChildren(drive: string, folder: string): Promise<boolean> {
    const out = await this.client.send(new QueryCommand({ ...this.childrenOf(drive, folder), Limit: 1, ProjectionExpression: '#pk' }));
    return (out.Items?.length ?? 0) > 0;
  }

  async createFolder(drive: string, folder: FolderNode): Promise<FolderNode | undefined> {
    // One update that creates the folder or leaves an existing one as it is, and says which (ALL_OLD);
    // only a file fails the condition, so no read is needed either way.
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

  async putFile(drive: string, file: FileNode): Promise<PutFileResult> {
    try {
      const { Attributes } = await this.client.send(
        new PutItemCommand({
          TableName: this.table,
          Item: toItem(drive, file),
          ConditionExpression: 'attribute_not_exists(#pk) OR #kind = :file',
          ExpressionAttributeNames: { '#pk': PK, '#kind': 'kind' },
          ExpressionAttributeValues: { ':file': { S: 'file' } },
          ReturnValues: 'ALL_OLD',
        }),
      );
      const replaced = Attributes && fromItem(Attributes);
      // An SDK retry of a write that was saved finds our own record: nothing was replaced.
      return { ok: true, replaced: replaced?.kind === 'file' && replaced.id !== file.id ? replaced : undefined };
    } catch (error) {
      // Only a folder fails the condition.
      if (error instanceof ConditionalCheckFailedException) return { ok: false };
      throw error;
    }
  }

  async revert(drive: string, path: string, id: string, previous?: DriveNode): Promise<boolean> {
    const onlyIfOurs = {
      ConditionExpression: '#id = :id',
      ExpressionAttributeNames: { '#id': 'id' },
      ExpressionAttributeValues: { ':id': { S: id } },
    };
    try {
      if (previous) {
        await this.client.send(new PutItemCommand({ TableName: this.table, Item: toItem(drive, previous), ...onlyIfOurs }));
      } else {
        await this.client.send(new DeleteItemCommand({ TableName: this.table, Key: keyOf(drive, path), ...onlyIfOurs }));
      }
      return true;
    } catch (error) {
      // Not ours, or someone wrote the path since: their version stands.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return false;
    }
  }

  async removeFolder(drive: string, path: string): Promise<FolderNode | 'missing' | 'file'> {
    try {
      const { Attributes } = await this.client.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: keyOf(drive, path),
          ConditionExpression: '#kind = :folder',
          ExpressionAttributeNames: { '#kind': 'kind' },
          ExpressionAttributeValues: { ':folder': { S: 'folder' } },
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return fromItem(Attributes!) as FolderNode;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const held = error.Item ? fromItem(error.Item) : await this.get(drive, path);
      return held?.kind === 'file' ? 'file' : 'missing';
    }
  }

  async deleteMany(drive: string, paths: readonly string[], onDeleted?: (paths: readonly string[]) => void): Promise<void> {
    const batches = chunk([...new Set(paths)], WRITE_BATCH);
    const last = batches.pop();
    const deleteBatch = async (batch: string[]) => {
      await this.deleteBatch(drive, batch);
      onDeleted?.(batch);
    };
    // Batches of one depth go together; a batch that spans depths goes alone, after the deeper ones. So a
    // failure never leaves a node whose parent a parallel batch removed.
    for (const wave of waves(batches)) {
      // Every batch settles before a failure is reported, so `onDeleted` has heard of all that went.
      const results = await settleLimit(wave, BATCH_CONCURRENCY, deleteBatch);
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    }
    if (last) await deleteBatch(last);
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

  private async deleteBatch(drive: string, paths: readonly string[]): Promise<void> {
    let requests: WriteRequest[] | undefined = paths.map((path) => ({ DeleteRequest: { Key: keyOf(drive, path) } }));
    for (let attempt = 0; requests && requests.length > 0; attempt++) {
      if (attempt === BATCH_ATTEMPTS) throw new Error(`BatchWriteItem left ${requests.length} deletes unprocessed after ${attempt} attempts`);
      if (attempt > 0) await backoff(attempt);
      const out: BatchWriteItemCommandOutput = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }));
      requests = out.UnprocessedItems?.[this.table];
    }
  }
}

/** Consecutive batches grouped so that each group is one depth, or one batch that spans depths. */
function waves(batches: string[][]): string[][][] {
  const groups: { depth: number | undefined; batches: string[][] }[] = [];
  for (const batch of batches) {
    const depths = new Set(batch.map(depthOf));
    const depth = depths.size === 1 ? [...depths][0] : undefined;
    const current = groups.at(-1);
    if (current && depth !== undefined && current.depth === depth) current.batches.push(batch);
    else groups.push({ depth, batches: [batch] });
  }
  return groups.map((group) => group.batches);
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
  if (node.kind === 'file') {
    item.size = { N: String(node.size) };
    item.contentType = { S: node.contentType };
    item.objectKey = { S: node.objectKey };
    item.etag = { S: node.etag };
  }
  return item;
}

/** The node an item holds. */
export function fromItem(item: Item): DriveNode {
  const common = { id: item.id.S!, path: item.path.S!, createdAt: item.createdAt.S! };
  if (item.kind.S === 'folder') return { kind: 'folder', ...common };
  // Records from before content hashes carry none: their id stands in, which no hash matches.
  return { kind: 'file', ...common, size: Number(item.size.N), contentType: item.contentType.S!, objectKey: item.objectKey.S!, etag: item.etag?.S ?? item.id.S! };
}

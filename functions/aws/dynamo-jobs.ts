import { type AttributeValue, ConditionalCheckFailedException, type DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { claimItem, releaseItem } from './claims';
import { scanAll } from './batches';
import type { BackgroundEntry, Job, JobStore } from '../core/ports';
import { UPLOADS_PARTITION_KEY as PK, UPLOADS_TTL_ATTRIBUTE as TTL } from './schema';

type Item = Record<string, AttributeValue>;

/** Jobs share the upload sessions' table (the work in flight) under ids of their own. */
export const JOB_ID_PREFIX = 'job#';
/**
 * The item listing a drive's jobs in the background (a string set, `running`): not under `job#`, so that the
 * scan for stalled jobs never reads it.
 */
const backgroundKey = (drive: string): Item => ({ [PK]: { S: `background#${drive}` } });
/** The attribute of that item holding when the job `id` was reserved. */
const reservedAttribute = (id: string): string => `reserved#${id}`;
/** How long a finished job stays readable (then DynamoDB's TTL removes it). */
const KEEP_DONE_SECONDS = 24 * 60 * 60;

/** Jobs, one item each; a running job has no TTL, so only its end starts the clock on it. */
export class DynamoJobStore implements JobStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async create(job: Job): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.table, Item: toItem(job), ConditionExpression: 'attribute_not_exists(#id)', ExpressionAttributeNames: { '#id': PK } }));
  }

  async get(drive: string, id: string): Promise<Job | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { [PK]: { S: `${JOB_ID_PREFIX}${id}` } }, ConsistentRead: true }));
    // Another drive's job is not found: its key learns nothing, not even that the id exists.
    return Item && Item.drive?.S === drive ? fromItem(Item) : undefined;
  }

  async claim(drive: string, id: string, leaseMs: number): Promise<Job | 'busy' | undefined> {
    const claimed = await claimItem(this.client, this.table, keyOf(id), drive, leaseMs);
    return claimed === 'busy' || claimed === undefined ? claimed : fromItem(claimed);
  }

  async release(id: string): Promise<void> {
    await releaseItem(this.client, this.table, keyOf(id));
  }

  async advanced(id: string, files: number, cursor?: string, more?: { items: number; bytes: number }): Promise<void> {
    const set = cursor === undefined ? 'SET #updated = :now' : 'SET #updated = :now, #cursor = :cursor';
    const add = more === undefined ? 'ADD #files :files' : 'ADD #files :files, #items :items, #bytes :bytes';
    await this.update(id, `${set} ${add}`, {
      ':files': { N: String(files) },
      ...(cursor === undefined ? {} : { ':cursor': { S: cursor } }),
      ...(more === undefined ? {} : { ':items': { N: String(more.items) }, ':bytes': { N: String(more.bytes) } }),
    });
  }

  async finish(id: string, files: number, ended?: Job['ended']): Promise<void> {
    const expires = Math.floor(Date.now() / 1000) + KEEP_DONE_SECONDS;
    await this.update(id, `SET #updated = :now, #status = :done, #ttl = :expires${ended ? ', #ended = :ended' : ''} ADD #files :files`, {
      ':files': { N: String(files) },
      ':done': { S: 'done' },
      ':expires': { N: String(expires) },
      ...(ended ? { ':ended': { S: ended } } : {}),
    });
  }

  async stalled(before: Date): Promise<Job[]> {
    // The table holds only work in flight, so a filtered scan stays small (as the journal's does).
    const items = await scanAll(this.client, {
      TableName: this.table,
      ConsistentRead: true,
      FilterExpression: 'begins_with(#id, :prefix) AND #status = :running AND #updated < :before',
      ExpressionAttributeNames: { '#id': PK, '#status': 'status', '#updated': 'updatedAt' },
      ExpressionAttributeValues: { ':prefix': { S: JOB_ID_PREFIX }, ':running': { S: 'running' }, ':before': { S: before.toISOString() } },
    });
    return items.map(fromItem);
  }

  async reserveBackground(job: Pick<Job, 'id' | 'drive'>, max: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: backgroundKey(job.drive),
          UpdateExpression: 'ADD #running :id SET #reserved = :now',
          // Checked and written in one step: of requests that arrive together, only as many as there are places pass.
          ConditionExpression: 'attribute_not_exists(#running) OR size(#running) < :max',
          ExpressionAttributeNames: { '#running': 'running', '#reserved': reservedAttribute(job.id) },
          ExpressionAttributeValues: { ':id': { SS: [job.id] }, ':now': { S: new Date().toISOString() }, ':max': { N: String(max) } },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async toBackground(job: Pick<Job, 'id' | 'drive'>): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: backgroundKey(job.drive),
        UpdateExpression: 'ADD #running :id',
        ExpressionAttributeNames: { '#running': 'running' },
        ExpressionAttributeValues: { ':id': { SS: [job.id] } },
      }),
    );
  }

  async fromBackground(job: Pick<Job, 'id' | 'drive'>): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: backgroundKey(job.drive),
          UpdateExpression: 'DELETE #running :id REMOVE #reserved',
          // A drive whose list was never made needs none now.
          ConditionExpression: 'attribute_exists(#key)',
          ExpressionAttributeNames: { '#running': 'running', '#reserved': reservedAttribute(job.id), '#key': PK },
          ExpressionAttributeValues: { ':id': { SS: [job.id] } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async inBackground(drive: string): Promise<BackgroundEntry[]> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: backgroundKey(drive), ConsistentRead: true }));
    return (Item?.running?.SS ?? []).map((id) => {
      const reservedAt = Item?.[reservedAttribute(id)]?.S;
      return reservedAt === undefined ? { id } : { id, reservedAt };
    });
  }

  /** An update of the job `id`, if it exists (a job is never made by an update). */
  private async update(id: string, expression: string, values: Item): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { [PK]: { S: `${JOB_ID_PREFIX}${id}` } },
        UpdateExpression: expression,
        ConditionExpression: 'attribute_exists(#id)',
        ExpressionAttributeNames: { '#id': PK, '#updated': 'updatedAt', '#files': 'filesDeleted', ...(expression.includes('#status') ? { '#status': 'status', '#ttl': TTL } : {}), ...(expression.includes('#ended') ? { '#ended': 'ended' } : {}), ...(expression.includes('#cursor') ? { '#cursor': 'cursor' } : {}), ...(expression.includes('#items') ? { '#items': 'items', '#bytes': 'bytes' } : {}) },
        ExpressionAttributeValues: { ':now': { S: new Date().toISOString() }, ...values },
      }),
    );
  }
}

function keyOf(id: string): Item {
  return { [PK]: { S: `${JOB_ID_PREFIX}${id}` } };
}

function toItem(job: Job): Item {
  return {
    [PK]: { S: `${JOB_ID_PREFIX}${job.id}` },
    drive: { S: job.drive },
    path: { S: job.path },
    // An empty-trash job works on no folder: '' is not written (and read back as '').
    ...(job.folderId ? { folderId: { S: job.folderId } } : {}),
    status: { S: job.status },
    // `filesDeleted`: the name from before moves, kept so that jobs in flight across an update read on.
    filesDeleted: { N: String(job.files) },
    ...(job.kind !== 'delete' ? { kind: { S: job.kind } } : {}),
    ...(job.to !== undefined ? { to: { S: job.to } } : {}),
    ...(job.toId ? { toId: { S: job.toId } } : {}),
    ...(job.toCreatedAt ? { toCreatedAt: { S: job.toCreatedAt } } : {}),
    ...(job.trashId ? { trashId: { S: job.trashId } } : {}),
    ...(job.cursor !== undefined ? { cursor: { S: job.cursor } } : {}),
    ...(job.items !== undefined ? { items: { N: String(job.items) } } : {}),
    ...(job.bytes !== undefined ? { bytes: { N: String(job.bytes) } } : {}),
    createdAt: { S: job.createdAt },
    ...(job.createdBy ? { createdBy: { S: job.createdBy } } : {}),
    updatedAt: { S: job.updatedAt },
  };
}

function fromItem(item: Item): Job {
  return {
    id: item[PK].S!.slice(JOB_ID_PREFIX.length),
    drive: item.drive.S!,
    path: item.path.S!,
    folderId: item.folderId?.S ?? '',
    status: item.status.S === 'done' ? 'done' : 'running',
    kind: item.kind?.S === 'move' || item.kind?.S === 'copy' || item.kind?.S === 'empty' || item.kind?.S === 'restore' || item.kind?.S === 'empty-trash' ? item.kind.S : 'delete',
    ...(item.to?.S ? { to: item.to.S } : {}),
    ...(item.toId?.S ? { toId: item.toId.S } : {}),
    ...(item.toCreatedAt?.S ? { toCreatedAt: item.toCreatedAt.S } : {}),
    ...(item.trashId?.S ? { trashId: item.trashId.S } : {}),
    ...(item.cursor?.S ? { cursor: item.cursor.S } : {}),
    files: Number(item.filesDeleted.N),
    ...(item.items?.N !== undefined ? { items: Number(item.items.N) } : {}),
    ...(item.bytes?.N !== undefined ? { bytes: Number(item.bytes.N) } : {}),
    ...(item.ended?.S ? { ended: item.ended.S as Job['ended'] } : {}),
    createdAt: item.createdAt.S!,
    ...(item.createdBy?.S ? { createdBy: item.createdBy.S } : {}),
    updatedAt: item.updatedAt.S!,
  };
}

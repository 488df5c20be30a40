import { type AttributeValue, BatchWriteItemCommand, type DynamoDBClient, GetItemCommand, PutItemCommand, ScanCommand, type ScanCommandOutput, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand, ListObjectsCommand, type ListObjectsCommandOutput, NotFound, type S3Client } from '@aws-sdk/client-s3';
import type { StoredNode, StoredObject } from '../core/consistency';
import type { CheckCursor, ConsistencySource, CursorStore, OrphanCandidates } from '../core/consistency-check';
import { scanAll } from './batches';
import { leftOf } from './dynamo-upload-journal';
import { fromItem } from './dynamo-node-store';
import { TRASH_ATTRIBUTE, fromMemberItem, fromRowItem } from './dynamo-trash';
import { NODES_PARTITION_KEY, NODES_SORT_KEY, UPLOADS_PARTITION_KEY, UPLOADS_TTL_ATTRIBUTE } from './schema';

/** The uploads-table item that holds the scheduled check's cursor; its role may write this item and no other. */
export const CHECK_CURSOR_ID = 'fsck#cursor';

/**
 * The uploads-table items of orphan candidates start with this, one per object (`fsck#orphan#<object key>`);
 * its role may write these and the cursor, no other item.
 */
export const CHECK_CANDIDATE_PREFIX = 'fsck#orphan#';

/**
 * How long a candidate item lives if no run comes back to its object (TTL): a backstop, since the run that
 * checks its slice again drops or deletes it. Longer than a pass over the bucket should take, or a candidate
 * expires before its second confirmation and the object waits another pass.
 */
const CANDIDATE_TTL_SECONDS = 90 * 24 * 3600;

/** Parallel segments of the nodes scan: a full scan per run is the check's cost, so it runs four pages at a time. */
const SCAN_SEGMENTS = 4;

/** The bucket and tables as the scheduled check reads them, and its cursor and orphan candidates in the uploads table. */
export class AwsConsistencySource implements ConsistencySource, CursorStore, OrphanCandidates {
  constructor(
    private readonly dynamodb: DynamoDBClient,
    private readonly s3: S3Client,
    private readonly names: { nodesTable: string; uploadsTable: string; bucket: string },
  ) {}

  async pendingKeys(): Promise<string[]> {
    return pendingObjectKeys(this.dynamodb, this.names.uploadsTable);
  }

  async listObjects(after: string | undefined, limit: number, deadline: number): Promise<{ objects: StoredObject[]; done: boolean }> {
    // ListObjects (v1) with the last key as the marker: the embedded S3 fails a V2 listing past 1,000 keys,
    // and AWS serves both the same.
    const objects: StoredObject[] = [];
    let marker = after;
    while (objects.length < limit && Date.now() < deadline) {
      const page: ListObjectsCommandOutput = await this.s3.send(new ListObjectsCommand({ Bucket: this.names.bucket, Marker: marker, MaxKeys: Math.min(1000, limit - objects.length) }));
      for (const object of page.Contents ?? []) objects.push(storedObject(object.Key!, object.LastModified, object.Size, object.ETag));
      marker = objects.at(-1)?.key;
      if (page.IsTruncated !== true || (page.Contents ?? []).length === 0) return { objects, done: true };
    }
    return { objects, done: false };
  }

  async scanNodes(keep: (entry: StoredNode) => boolean, deadline: number): Promise<StoredNode[]> {
    const segments = await Promise.all(
      Array.from({ length: SCAN_SEGMENTS }, async (_, segment) => {
        const kept: StoredNode[] = [];
        let start: ScanCommandOutput['LastEvaluatedKey'];
        do {
          if (Date.now() > deadline) throw new Error(`the scan of ${this.names.nodesTable} did not finish in the run's time; see docs/consistency-check.md, "Limits"`);
          const page: ScanCommandOutput = await this.dynamodb.send(
            new ScanCommand({ TableName: this.names.nodesTable, ConsistentRead: true, Segment: segment, TotalSegments: SCAN_SEGMENTS, ExclusiveStartKey: start }),
          );
          for (const item of page.Items ?? []) {
            const entry = item[TRASH_ATTRIBUTE] ? trashEntry(item) : { drive: item[NODES_PARTITION_KEY].S!.split('#')[0], node: fromItem(item) };
            if (entry && keep(entry)) kept.push(entry);
          }
          start = page.LastEvaluatedKey;
        } while (start);
        return kept;
      }),
    );
    return segments.flat();
  }

  async headObject(key: string): Promise<StoredObject | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.names.bucket, Key: key }));
      return storedObject(key, head.LastModified, head.ContentLength, head.ETag);
    } catch (error) {
      // NotFound needs s3:ListBucket; without it S3 answers 403, which must not pass for "missing".
      if (error instanceof NotFound || (error instanceof Error && error.name === 'NotFound')) return undefined;
      throw error;
    }
  }

  async read(): Promise<CheckCursor | undefined> {
    const { Item } = await this.dynamodb.send(new GetItemCommand({ TableName: this.names.uploadsTable, Key: { [UPLOADS_PARTITION_KEY]: { S: CHECK_CURSOR_ID } }, ConsistentRead: true }));
    if (!Item) return undefined;
    return { ...(Item.after?.S ? { after: Item.after.S } : {}), passes: Number(Item.passes?.N ?? 0) };
  }

  async write(cursor: CheckCursor): Promise<void> {
    await this.dynamodb.send(
      new PutItemCommand({
        TableName: this.names.uploadsTable,
        Item: {
          [UPLOADS_PARTITION_KEY]: { S: CHECK_CURSOR_ID },
          ...(cursor.after !== undefined ? { after: { S: cursor.after } } : {}),
          passes: { N: String(cursor.passes) },
          updatedAt: { S: new Date().toISOString() },
        },
      }),
    );
  }

  async listCandidates(): Promise<Map<string, Date>> {
    // The table holds only work in flight, the cursor and the candidates, so a filtered scan stays small.
    const items = await scanAll(this.dynamodb, {
      TableName: this.names.uploadsTable,
      ConsistentRead: true,
      FilterExpression: 'begins_with(#id, :prefix)',
      ExpressionAttributeNames: { '#id': UPLOADS_PARTITION_KEY },
      ExpressionAttributeValues: { ':prefix': { S: CHECK_CANDIDATE_PREFIX } },
    });
    return new Map(items.map((item) => [item[UPLOADS_PARTITION_KEY].S!.slice(CHECK_CANDIDATE_PREFIX.length), new Date(Number(item.notedAt?.N ?? 0))]));
  }

  async addCandidates(keys: readonly string[], at: Date): Promise<void> {
    const expires = String(Math.floor(at.getTime() / 1000) + CANDIDATE_TTL_SECONDS);
    // No `objectKey` attribute: the pending keys (sessions, journal) are read by that name.
    await this.writeBatches(
      keys.map((key) => ({
        PutRequest: { Item: { [UPLOADS_PARTITION_KEY]: { S: `${CHECK_CANDIDATE_PREFIX}${key}` }, notedAt: { N: String(at.getTime()) }, [UPLOADS_TTL_ATTRIBUTE]: { N: expires } } },
      })),
    );
  }

  async removeCandidates(keys: readonly string[]): Promise<void> {
    await this.writeBatches(keys.map((key) => ({ DeleteRequest: { Key: { [UPLOADS_PARTITION_KEY]: { S: `${CHECK_CANDIDATE_PREFIX}${key}` } } } })));
  }

  /** BatchWriteItem, 25 requests a call, sending unprocessed ones again (a few times, then it throws). */
  private async writeBatches(requests: WriteRequest[]): Promise<void> {
    for (let i = 0; i < requests.length; i += 25) {
      let batch: WriteRequest[] = requests.slice(i, i + 25);
      for (let attempt = 0; batch.length > 0; attempt++) {
        if (attempt === 5) throw new Error(`${batch.length} orphan-candidate writes to ${this.names.uploadsTable} stayed unprocessed`);
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
        const { UnprocessedItems } = await this.dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [this.names.uploadsTable]: batch } }));
        batch = UnprocessedItems?.[this.names.uploadsTable] ?? [];
      }
    }
  }
}

/**
 * The object keys that open large-upload sessions and upload-journal entries (functions/aws/dynamo-upload-journal.ts)
 * name: bytes of uploads in flight or interrupted, which no record claims yet.
 */
export async function pendingObjectKeys(dynamodb: DynamoDBClient, uploadsTable: string): Promise<string[]> {
  const keys: string[] = [];
  let start: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page: ScanCommandOutput = await dynamodb.send(new ScanCommand({ TableName: uploadsTable, ConsistentRead: true, ProjectionExpression: 'objectKey, files, #left', ExpressionAttributeNames: { '#left': 'left' }, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) {
      if (item.objectKey?.S) keys.push(item.objectKey.S);
      if (item.files?.S) keys.push(...(JSON.parse(item.files.S) as [string, string][]).map(([, key]) => key));
      // The bytes a withdrawn upload left to the sweep (gap 12): in flight until the sweep judges them.
      keys.push(...leftOf(item).map((file) => file.objectKey));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return keys;
}

function storedObject(key: string, lastModified: Date | undefined, size: number | undefined, etag: string | undefined): StoredObject {
  return { key, lastModified: lastModified ?? new Date(0), size: size ?? 0, etag: etag?.replace(/"/g, '') };
}

/**
 * A trash item as fsck reads it (protocol/README.md, "Trash"): a row (a file's record, or its folder) or a
 * member (its file's record); due entries and the sweep's cursor are none. Their keys are owned, not orphans.
 */
export function trashEntry(item: Record<string, AttributeValue>): StoredNode | undefined {
  const drive = item[NODES_PARTITION_KEY].S!.split('#')[0];
  if (item[TRASH_ATTRIBUTE].S === 'row') {
    const row = fromRowItem(item);
    const trash = { row: row.id, purgeAt: row.purgeAt, ...(row.purging !== undefined ? { purging: true } : {}) };
    if (row.file) return { drive, node: row.file, trash };
    return { drive, node: { kind: 'folder', id: row.folderId ?? row.id, path: row.path, createdAt: row.folderCreatedAt ?? row.deletedAt }, trash };
  }
  if (item[TRASH_ATTRIBUTE].S === 'member') {
    const member = fromMemberItem(item);
    const row = item[NODES_PARTITION_KEY].S!.split('#')[2];
    if (member.file) return { drive, node: member.file, trash: { row, member: item[NODES_SORT_KEY].S! } };
  }
  return undefined;
}

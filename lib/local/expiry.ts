import { type AttributeValue, type DynamoDBClient, DeleteItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What DynamoDB's TTL does in AWS, which dynalite lacks: removes the items of `table` whose TTL attribute
 * (epoch seconds) is past, and nothing more. In AWS nothing of ours runs when TTL removes an upload session:
 * its multipart upload stays until the bucket's lifecycle rule (`abortStaleUploads`), and an object a failed
 * completion assembled becomes an orphan that the scheduled consistency check deletes past its grace period,
 * on its second confirmation a grace period after the first (by default; it only reports it with
 * `DRIVE_FSCK_REPAIR=off`), which the host runs from the same module on
 * its own timer. Returns how many items it removed.
 */
export async function expireItems(dynamodb: DynamoDBClient, table: { name: string; keys: readonly string[]; ttlAttribute: string }, now = Date.now()): Promise<number> {
  const names = { '#ttl': table.ttlAttribute };
  const values = { ':now': { N: String(Math.floor(now / 1000)) } };
  let removed = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: table.name, FilterExpression: '#ttl < :now', ExpressionAttributeNames: names, ExpressionAttributeValues: values, ExclusiveStartKey: start }),
    );
    for (const item of page.Items ?? []) {
      const key = Object.fromEntries(table.keys.map((name) => [name, item[name]]));
      try {
        // As TTL does, an item whose expiry moved on since the scan stays.
        await dynamodb.send(new DeleteItemCommand({ TableName: table.name, Key: key, ConditionExpression: '#ttl < :now', ExpressionAttributeNames: names, ExpressionAttributeValues: values }));
        removed++;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return removed;
}

/** The stack's lifecycle rule aborts multipart uploads a day after they start (lib/drive-stack.ts). */
export const LIFECYCLE_ABORT_AFTER_MS = 24 * 3600_000;

/**
 * What the bucket's lifecycle rule (`abortIncompleteMultipartUploadAfter`) does in AWS: aborts the multipart
 * uploads started more than `afterMs` ago, parts and all. s3rver keeps each in `<bucket>/._S3rver_uploads/<id>/`,
 * its `key` file written at the start. Returns how many it aborted.
 */
export async function abortStaleUploads(s3Directory: string, bucket: string, afterMs: number, now = Date.now()): Promise<number> {
  const uploads = join(s3Directory, bucket, '._S3rver_uploads');
  let aborted = 0;
  for (const id of await readdir(uploads).catch(() => [] as string[])) {
    const started = await stat(join(uploads, id, 'key')).catch(() => undefined);
    if (!started || now - started.mtimeMs <= afterMs) continue;
    await rm(join(uploads, id), { recursive: true, force: true });
    aborted++;
  }
  return aborted;
}

import { type DynamoDBClient, DeleteItemCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { JOB_ID_PREFIX } from '../../functions/aws/dynamo-jobs';
import type { S3Client } from '@aws-sdk/client-s3';
import { DynamoUploadSessions, fromSessionItem } from '../../functions/aws/dynamo-upload-sessions';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { S3MultipartStore } from '../../functions/aws/s3-multipart-store';
import { S3ObjectStore } from '../../functions/aws/s3-object-store';
import { CLAIM_LEASE_MS, discardUpload } from '../../functions/core/large-upload';
import { UPLOADS_PARTITION_KEY, UPLOADS_TTL_ATTRIBUTE } from '../../functions/aws/schema';

/**
 * What DynamoDB's TTL and the bucket's lifecycle rule do in AWS, which the emulators lack: upload
 * sessions past their expiry are removed and their multipart uploads aborted, parts and all (with an
 * object a failed completion assembled and nobody recorded); finished delete jobs past theirs are removed.
 * Returns how many it ended.
 */
export async function sweepExpiredUploads(
  dynamodb: DynamoDBClient,
  s3: S3Client,
  resources: { uploadsTable: string; nodesTable: string; bucket: string },
): Promise<number> {
  const sessions = new DynamoUploadSessions(dynamodb, resources.uploadsTable);
  const stores = {
    nodes: new DynamoNodeStore(dynamodb, resources.nodesTable),
    objects: new S3ObjectStore(s3, resources.bucket),
    parts: new S3MultipartStore(s3, resources.bucket),
  };
  let ended = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({
        TableName: resources.uploadsTable,
        FilterExpression: '#ttl < :now',
        ExpressionAttributeNames: { '#ttl': UPLOADS_TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': { N: String(Math.floor(Date.now() / 1000)) } },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      if (item[UPLOADS_PARTITION_KEY]?.S?.startsWith(JOB_ID_PREFIX)) {
        await dynamodb.send(new DeleteItemCommand({ TableName: resources.uploadsTable, Key: { [UPLOADS_PARTITION_KEY]: item[UPLOADS_PARTITION_KEY] } }));
        continue;
      }
      const expired = fromSessionItem(item);
      // Claimed first, as a completion claims it: a `complete` in flight keeps its session (and its
      // assembled object) until it is done; the next sweep finds the session if it is still there.
      const session = await sessions.claim(expired.drive, expired.id, CLAIM_LEASE_MS);
      if (!session || session === 'busy') continue;
      await discardUpload(stores, session);
      await sessions.remove(session.id);
      ended++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return ended;
}

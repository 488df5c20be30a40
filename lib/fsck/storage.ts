import { DynamoDBClient, ScanCommand, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { DeleteObjectsCommand, ListObjectsCommand, type ListObjectsCommandOutput, S3Client } from '@aws-sdk/client-s3';
import { pendingObjectKeys, trashEntry } from '../../functions/aws/consistency-source';
import { TRASH_ATTRIBUTE } from '../../functions/aws/dynamo-trash';
import { DynamoNodeStore, fromItem } from '../../functions/aws/dynamo-node-store';
import { S3ObjectStore } from '../../functions/aws/s3-object-store';
import { NODES_PARTITION_KEY } from '../../functions/aws/schema';
import { rawSetting, setting } from '../../functions/config';
import { LOCAL_REGION, LOCAL_RESOURCES, localCredentials, runningHost, startEmulators } from '../local/emulators';
import type { StoredNode, StoredObject } from '../../functions/core/consistency';

/** The tables and bucket fsck works on, deployed or local, and what it needs to read and repair them. */
export interface Storage {
  where: string;
  nodes: DynamoNodeStore;
  objects: S3ObjectStore;
  readNodes(): Promise<StoredNode[]>;
  readObjects(): Promise<StoredObject[]>;
  /** The object keys of open large-upload sessions: an object there may be assembled and not yet recorded. */
  readSessionKeys(): Promise<string[]>;
  deleteObjects(keys: string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Deployed storage when `DRIVE_NODES_TABLE` and `DRIVE_BUCKET` are set (AWS credentials from the usual
 * chain); else the local data dir, through a running `npm start`'s emulators or embedded ones of its own.
 */
export async function openStorage(): Promise<Storage> {
  const table = rawSetting('nodesTable');
  const bucket = rawSetting('bucket');
  if (table && bucket) {
    const where = `table ${table} and bucket ${bucket}`;
    return storage(new DynamoDBClient({}), new S3Client({}), { table, uploadsTable: rawSetting('uploadsTable'), bucket }, where, async () => undefined);
  }

  const dataDir = setting('dataDir');
  const running = await runningHost(dataDir);
  const embedded = running ? undefined : await startEmulators(dataDir);
  const config = { region: LOCAL_REGION, credentials: await localCredentials(dataDir) };
  return storage(
    new DynamoDBClient({ ...config, endpoint: running?.dynamodb ?? embedded!.dynamodbEndpoint }),
    new S3Client({ ...config, endpoint: running?.s3 ?? embedded!.s3Endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }),
    { table: LOCAL_RESOURCES.nodesTable, uploadsTable: LOCAL_RESOURCES.uploadsTable, bucket: LOCAL_RESOURCES.bucket },
    `local data dir ${dataDir}`,
    async () => embedded?.close(),
  );
}

function storage(
  dynamodb: DynamoDBClient,
  s3: S3Client,
  { table, uploadsTable, bucket }: { table: string; uploadsTable?: string; bucket: string },
  where: string,
  release: () => Promise<unknown>,
): Storage {
  return {
    where,
    nodes: new DynamoNodeStore(dynamodb, table),
    objects: new S3ObjectStore(s3, bucket),
    readNodes: async () => {
      const nodes: StoredNode[] = [];
      let start: ScanCommandOutput['LastEvaluatedKey'];
      do {
        const page: ScanCommandOutput = await dynamodb.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) {
          // A trash item is no node (protocol/README.md, "Trash"): its key is owned; due entries are skipped.
          const entry = item[TRASH_ATTRIBUTE] ? trashEntry(item) : { drive: item[NODES_PARTITION_KEY].S!.split('#')[0], node: fromItem(item) };
          if (entry) nodes.push(entry);
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return nodes;
    },
    readObjects: async () => {
      // ListObjects (v1) with the last key as the marker: the embedded S3 fails a V2 listing past 1,000
      // keys, and AWS serves both the same.
      const objects: StoredObject[] = [];
      let marker: string | undefined;
      let truncated = true;
      while (truncated) {
        const page: ListObjectsCommandOutput = await s3.send(new ListObjectsCommand({ Bucket: bucket, Marker: marker }));
        for (const object of page.Contents ?? []) {
          objects.push({ key: object.Key!, lastModified: object.LastModified ?? new Date(0), size: object.Size ?? 0, etag: object.ETag?.replace(/"/g, '') });
        }
        truncated = page.IsTruncated === true && objects.length > 0;
        marker = objects.at(-1)?.key;
      }
      return objects;
    },
    readSessionKeys: async () => (uploadsTable ? pendingObjectKeys(dynamodb, uploadsTable) : []),
    deleteObjects: async (keys) => {
      for (let i = 0; i < keys.length; i += 1000) {
        await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }));
      }
    },
    close: async () => {
      dynamodb.destroy();
      s3.destroy();
      await release();
    },
  };
}

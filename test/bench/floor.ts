import {
  type AttributeValue,
  BatchWriteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { keyOf, partitionOf, toItem } from '../../functions/aws/dynamo-node-store';
import { joinPath } from '../../functions/core/paths';
import { mapLimit } from '../../functions/core/concurrency';

/**
 * The least work that could do each job: the same bytes and records moved by the SDK straight to the
 * same S3 and DynamoDB, with the fewest calls, as parallel as the job allows. What Drive is judged against.
 */
export class Floor {
  constructor(
    private readonly s3: S3Client,
    private readonly dynamodb: DynamoDBClient,
    private readonly bucket: string,
    private readonly table: string,
  ) {}

  /** k files into a folder known to exist: k PutObject + k PutItem. */
  async upload(drive: string, folder: string, files: { name: string; data: Buffer }[]): Promise<void> {
    await Promise.all(
      files.map(async ({ name, data }) => {
        const id = randomUUID();
        const objectKey = `${drive}/${id}`;
        // The MD5 that becomes the etag, sent as Content-MD5: S3 checks the bytes by it, and a client made with
        // `signWithContentMd5` (as the handlers' is) does not hash them again for the signature.
        const md5 = createHash('md5').update(data).digest();
        await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: objectKey, Body: data, ContentLength: data.length, ContentType: 'application/octet-stream', ContentMD5: md5.toString('base64') }));
        const node = { kind: 'file' as const, id, path: joinPath(folder, name), size: data.length, contentType: 'application/octet-stream', createdAt: new Date().toISOString(), objectKey, etag: md5.toString('hex') };
        await this.dynamodb.send(new PutItemCommand({ TableName: this.table, Item: toItem(drive, node) }));
      }),
    );
  }

  /** GetItem + GetObject, the body read to the end. */
  async download(drive: string, path: string): Promise<number> {
    const { Item } = await this.dynamodb.send(new GetItemCommand({ TableName: this.table, Key: keyOf(drive, path) }));
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: Item!.objectKey.S! }));
    let size = 0;
    for await (const chunk of out.Body as Readable) size += (chunk as Buffer).length;
    return size;
  }

  /** One Query per 1 MB page. */
  async list(drive: string, folder: string): Promise<Record<string, AttributeValue>[]> {
    const items: Record<string, AttributeValue>[] = [];
    let start: QueryCommandOutput['LastEvaluatedKey'];
    do {
      const page: QueryCommandOutput = await this.dynamodb.send(
        new QueryCommand({ TableName: this.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: partitionOf(drive, folder) } }, ExclusiveStartKey: start }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** One Query per folder visited, 16 at a time. */
  async listRecursive(drive: string, folder: string): Promise<Record<string, AttributeValue>[]> {
    const found: Record<string, AttributeValue>[] = [];
    let level = [folder];
    while (level.length > 0) {
      const pages = await mapLimit(level, 16, (f) => this.list(drive, f));
      level = [];
      for (const item of pages.flat()) {
        found.push(item);
        if (item.kind.S === 'folder') level.push(item.path.S!);
      }
    }
    return found;
  }

  /** A chain of new folders: one PutItem each, all at once. */
  async createFolders(drive: string, paths: string[]): Promise<void> {
    const createdAt = new Date().toISOString();
    await Promise.all(paths.map((path) => this.dynamodb.send(new PutItemCommand({ TableName: this.table, Item: toItem(drive, { kind: 'folder', id: randomUUID(), path, createdAt }) }))));
  }

  /** m Query + ⌈n/1000⌉ DeleteObjects + ⌈(n+m)/25⌉ BatchWriteItem. */
  async deleteTree(drive: string, folder: string): Promise<void> {
    const items = await this.listRecursive(drive, folder);
    const keys = [...items.map((item) => item.path.S!), folder].map((path) => keyOf(drive, path));
    const batches: Record<string, AttributeValue>[][] = [];
    for (let i = 0; i < keys.length; i += 25) batches.push(keys.slice(i, i + 25));
    await mapLimit(batches, 8, (batch) => this.dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: batch.map((Key) => ({ DeleteRequest: { Key } })) } })));
    const objects = items.filter((item) => item.kind.S === 'file').map((item) => ({ Key: item.objectKey.S! }));
    for (let i = 0; i < objects.length; i += 1000) {
      await this.s3.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: objects.slice(i, i + 1000), Quiet: true } }));
    }
  }
}

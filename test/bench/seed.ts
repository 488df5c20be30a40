import { BatchWriteItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { toItem } from '../../functions/aws/dynamo-node-store';
import { mapLimit } from '../../functions/core/concurrency';
import { ancestorsOf, joinPath } from '../../functions/core/paths';
import type { DriveNode } from '../../functions/core/ports';

/** Writes datasets straight to the tables and bucket, much faster than through the API. */
export class Seeder {
  constructor(
    private readonly s3: S3Client,
    private readonly dynamodb: DynamoDBClient,
    private readonly bucket: string,
    private readonly table: string,
  ) {}

  /**
   * A tree under `root`: `folders` subfolders of `filesPerFolder` files each, with the root's ancestors.
   * With `bytes`, every file gets an object of that many bytes; without, records only (for listings).
   */
  async tree(drive: string, root: string, folders: number, filesPerFolder: number, bytes?: number): Promise<void> {
    const createdAt = new Date().toISOString();
    const nodes: DriveNode[] = [...ancestorsOf(root), root].map((path) => ({ kind: 'folder', id: randomUUID(), path, createdAt }));
    for (let f = 0; f < folders; f++) {
      const folder = joinPath(root, `folder-${f}`);
      nodes.push({ kind: 'folder', id: randomUUID(), path: folder, createdAt });
      for (let i = 0; i < filesPerFolder; i++) {
        const id = randomUUID();
        nodes.push({ kind: 'file', id, path: joinPath(folder, `file-${i}.bin`), size: bytes ?? 0, contentType: 'application/octet-stream', createdAt, objectKey: `${drive}/${id}`, etag: id });
      }
    }
    if (bytes !== undefined) {
      const body = Buffer.alloc(bytes, 7);
      const files = nodes.filter((node) => node.kind === 'file');
      await mapLimit(files, 32, (file) => this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: file.objectKey, Body: body, ContentLength: body.length })));
    }
    await this.records(drive, nodes);
  }

  /** A folder of `count` file records, without bytes. */
  async flat(drive: string, folder: string, count: number): Promise<void> {
    const createdAt = new Date().toISOString();
    const nodes: DriveNode[] = [...ancestorsOf(folder), folder].map((path) => ({ kind: 'folder', id: randomUUID(), path, createdAt }));
    for (let i = 0; i < count; i++) {
      const id = randomUUID();
      nodes.push({ kind: 'file', id, path: joinPath(folder, `file-${String(i).padStart(4, '0')}.bin`), size: 0, contentType: 'application/octet-stream', createdAt, objectKey: `${drive}/${id}`, etag: id });
    }
    await this.records(drive, nodes);
  }

  private async records(drive: string, nodes: DriveNode[]): Promise<void> {
    const batches: DriveNode[][] = [];
    for (let i = 0; i < nodes.length; i += 25) batches.push(nodes.slice(i, i + 25));
    await mapLimit(batches, 8, async (batch) => {
      let requests = batch.map((node) => ({ PutRequest: { Item: toItem(drive, node) } }));
      while (requests.length > 0) {
        const out = await this.dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }));
        requests = (out.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    });
  }
}

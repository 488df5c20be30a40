import { DeleteObjectsCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { mapLimit } from '../core/concurrency';
import type { ByteRange, ObjectStore } from '../core/ports';
import { BATCH_ATTEMPTS, backoff, chunk } from './batches';

// S3's limit of keys per DeleteObjects call.
const DELETE_BATCH = 1000;
const DELETE_CONCURRENCY = 4;

/** File bytes in one S3 bucket. */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    // The whole body is in memory (API Gateway buffers uploads), so a single PutObject with a known length
    // beats a multipart upload: one round trip, no buffering of parts.
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: contentType }),
    );
  }

  async open(key: string, range?: ByteRange): Promise<{ body: Readable; size: number } | undefined> {
    try {
      // S3 serves the range itself (one range per GetObject), so a part of a large file is never read whole.
      const Range = range ? `bytes=${range.start}-${range.end}` : undefined;
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range }));
      return { body: out.Body as Readable, size: out.ContentLength ?? 0 };
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw error;
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    await mapLimit(chunk([...new Set(keys)], DELETE_BATCH), DELETE_CONCURRENCY, async (batch) => {
      let pending = batch;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`DeleteObjects failed for ${pending.length} keys after ${attempt} attempts`);
        if (attempt > 0) await backoff(attempt);
        const out = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: pending.map((Key) => ({ Key })), Quiet: true } }),
        );
        const failed = new Set((out.Errors ?? []).map((e) => e.Key));
        pending = pending.filter((key) => failed.has(key));
      }
    });
  }
}

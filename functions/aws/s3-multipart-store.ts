import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListPartsCommand,
  NoSuchUpload,
  NotFound,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { mapLimit } from '../core/concurrency';
import type { MultipartStore, StoredPart } from '../core/ports';

// Signing is local CPU work (HMACs), so a few at a time keep the event loop responsive.
const SIGN_CONCURRENCY = 16;

/** S3 multipart uploads in one bucket, their parts sent by clients to presigned `UploadPart` URLs. */
export class S3MultipartStore implements MultipartStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    /** The client that signs part URLs: one that adds no checksum parameters (see functions/wiring/signer.ts). */
    private readonly signer: S3Client = client,
  ) {}

  async begin(key: string, contentType: string): Promise<string> {
    const out = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }));
    if (!out.UploadId) throw new Error('CreateMultipartUpload returned no UploadId');
    return out.UploadId;
  }

  partUrls(key: string, multipartId: string, first: number, count: number, expiresInSeconds: number): Promise<string[]> {
    const numbers = Array.from({ length: count }, (_, i) => first + i);
    return mapLimit(numbers, SIGN_CONCURRENCY, (PartNumber) =>
      getSignedUrl(this.signer, new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: multipartId, PartNumber }), { expiresIn: expiresInSeconds }),
    );
  }

  async listParts(key: string, multipartId: string): Promise<StoredPart[] | undefined> {
    const parts: StoredPart[] = [];
    let marker: string | undefined;
    try {
      do {
        const out = await this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: multipartId, PartNumberMarker: marker }));
        for (const part of out.Parts ?? []) parts.push({ number: part.PartNumber ?? 0, etag: part.ETag ?? '', size: part.Size ?? 0 });
        marker = out.IsTruncated ? out.NextPartNumberMarker : undefined;
      } while (marker);
    } catch (error) {
      if (isNoSuchUpload(error)) return undefined;
      throw error;
    }
    return parts;
  }

  async complete(key: string, multipartId: string, parts: readonly { number: number; etag: string }[]): Promise<'done' | 'gone' | 'rejected'> {
    try {
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: multipartId,
          MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.number, ETag: part.etag })) },
        }),
      );
      return 'done';
    } catch (error) {
      if (isNoSuchUpload(error)) return 'gone';
      if (error instanceof Error && ['InvalidPart', 'InvalidPartOrder', 'EntityTooSmall'].includes(error.name)) return 'rejected';
      throw error;
    }
  }

  async head(key: string): Promise<{ size: number; etag: string } | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, etag: (head.ETag ?? '').replace(/"/g, '') };
    } catch (error) {
      // NotFound needs s3:ListBucket; without it S3 answers 403, which must not pass for "missing".
      if (error instanceof NotFound || (error instanceof Error && error.name === 'NotFound')) return undefined;
      throw error;
    }
  }

  async abort(key: string, multipartId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: multipartId }));
    } catch (error) {
      if (!isNoSuchUpload(error)) throw error;
    }
  }
}

function isNoSuchUpload(error: unknown): boolean {
  return error instanceof NoSuchUpload || (error instanceof Error && error.name === 'NoSuchUpload');
}

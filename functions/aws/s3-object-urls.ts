import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ObjectUrls, ReadUrlHeaders } from '../core/ports';

/** Presigned `GetObject` URLs of one bucket: a client reads the bytes from S3 at S3's speed. */
export class S3ObjectUrls implements ObjectUrls {
  constructor(
    /** A client that adds no checksum parameters to what it signs (functions/wiring/signer.ts). */
    private readonly signer: S3Client,
    private readonly bucket: string,
  ) {}

  readUrl(key: string, headers: ReadUrlHeaders, expiresInSeconds: number): Promise<string> {
    // The response-* overrides are part of the signed query: whoever holds the URL cannot change them.
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: headers.contentType,
      ResponseContentDisposition: headers.contentDisposition,
      ResponseCacheControl: headers.cacheControl,
    });
    return getSignedUrl(this.signer, command, { expiresIn: expiresInSeconds });
  }
}

import { createHash } from 'node:crypto';

// S3's rules for an object made of parts, apart from the large-upload protocol: the object store copies a
// large object in parts by them, and needs none of that protocol to do so.

const MiB = 1024 * 1024;
/** The smallest part offered: S3 needs 5 MiB for every part but the last; 8 MiB is what its own tools use. */
export const MIN_PART_BYTES = 8 * MiB;
/** The most parts one upload is cut into: S3's own limit. Their URLs are issued a page at a time. */
export const MAX_PARTS = 10_000;

/** Bytes per part for a file of `size` bytes: whole MiB, at least 8 MiB, at most `MAX_PARTS` parts. */
export function partSizeFor(size: number): number {
  return Math.max(MIN_PART_BYTES, Math.ceil(size / MAX_PARTS / MiB) * MiB);
}

/** S3's ETag of an object assembled from `parts`: the MD5 of their MD5s, then the number of parts. */
export function multipartEtag(parts: readonly { etag: string }[]): string {
  const digests = Buffer.concat(parts.map((part) => Buffer.from(unquote(part.etag), 'hex')));
  return `${createHash('md5').update(digests).digest('hex')}-${parts.length}`;
}

/** An ETag without its quotes. */
export function unquote(etag: string): string {
  return etag.replace(/"/g, '');
}

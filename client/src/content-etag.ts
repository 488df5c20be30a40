import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

const MiB = 1024 * 1024;

/** The most parts Drive cuts a large upload into: S3's 10,000 now; 2,000 before 2026-11-25. */
const PART_LIMITS = [10_000, 2_000];

/**
 * The part size Drive gives a large upload of `size` bytes: whole MiB, at least 8 MiB, at most 10,000 parts.
 * A pure function of the size, so a file's multipart ETag can be computed without asking the server. Given
 * the `parts` a stored copy's ETag names (its `-<parts>`), the size that cut it into that many: files stored
 * while Drive allowed 2,000 parts were cut in larger parts past 15.6 GiB.
 */
export function partSizeFor(size: number, parts?: number): number {
  const sizes = PART_LIMITS.map((limit) => Math.max(8 * MiB, Math.ceil(size / limit / MiB) * MiB));
  return (parts !== undefined ? sizes.find((partSize) => Math.max(1, Math.ceil(size / partSize)) === parts) : undefined) ?? sizes[0];
}

/** The number of parts a multipart ETag names (`…-<parts>`), or undefined for another form. */
export function partsOf(etag: string): number | undefined {
  const parts = /-([1-9][0-9]*)$/.exec(etag)?.[1];
  return parts === undefined ? undefined : Number(parts);
}

/** The byte ranges `[start, end)` of a file of `size` bytes cut into parts of `partSize` (every part full but the last). */
export function partRanges(size: number, partSize: number): { number: number; start: number; end: number }[] {
  const count = Math.max(1, Math.ceil(size / partSize));
  return Array.from({ length: count }, (_, i) => ({ number: i + 1, start: i * partSize, end: Math.min(size, (i + 1) * partSize) }));
}

/** How a Drive `etag` was made: hex MD5 (`single`), S3's multipart form (`multipart`), or no content hash at all (older records carry the file id). */
export function etagForm(etag: string | undefined): 'single' | 'multipart' | 'none' {
  if (etag === undefined) return 'none';
  if (/^[0-9a-f]{32}$/.test(etag)) return 'single';
  if (/^[0-9a-f]{32}-[1-9][0-9]*$/.test(etag)) return 'multipart';
  return 'none';
}

/** S3's ETag of a multipart object: the MD5 of the parts' binary MD5s, then `-<number of parts>`. */
export function multipartEtag(partMd5s: readonly Buffer[]): string {
  const hash = createHash('md5');
  for (const md5 of partMd5s) hash.update(md5);
  return `${hash.digest('hex')}-${partMd5s.length}`;
}

/** The ETag S3 gave a part (hex MD5 in quotes) as the binary digest `multipartEtag` takes. */
export function partEtagDigest(etag: string): Buffer {
  return Buffer.from(etag.replace(/"/g, ''), 'hex');
}

/**
 * The `etag` Drive would give bytes stored the `form` way, fed a chunk at a time (`update`) and read once
 * they are all in (`digest`): `single`, hex MD5; `multipart`, S3's form with parts cut at
 * `partSizeFor(size, parts)` (`parts`: what the stored copy's ETag names, if known).
 */
export class ContentEtagHash {
  private readonly partSize: number;
  private readonly digests: Buffer[] = [];
  private part = createHash('md5');
  private inPart = 0;

  constructor(
    size: number,
    private readonly form: 'single' | 'multipart',
    parts?: number,
  ) {
    this.partSize = form === 'single' ? Infinity : partSizeFor(size, parts);
  }

  update(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(chunk.length - at, this.partSize - this.inPart);
      this.part.update(chunk.subarray(at, at + take));
      at += take;
      this.inPart += take;
      if (this.inPart === this.partSize) {
        this.digests.push(this.part.digest());
        this.part = createHash('md5');
        this.inPart = 0;
      }
    }
  }

  digest(): string {
    if (this.form === 'single') return this.part.digest('hex');
    if (this.inPart > 0 || this.digests.length === 0) this.digests.push(this.part.digest());
    return multipartEtag(this.digests);
  }
}

/** `ContentEtagHash` of `bytes`, a file of `size` bytes. */
export async function contentEtag(bytes: AsyncIterable<Uint8Array>, size: number, form: 'single' | 'multipart', parts?: number): Promise<string> {
  const hash = new ContentEtagHash(size, form, parts);
  for await (const chunk of bytes) hash.update(chunk);
  return hash.digest();
}

/**
 * `contentEtag` of a local file. Read in chunks of at most 1 MiB and at most the file's `size`: a file stream
 * allocates a buffer of its chunk size for every read, and a 1 MiB one for each of 3,000 small files cost the
 * sync more CPU in the garbage collector (2.7 s) than all its reading, hashing and listing.
 */
export function fileContentEtag(file: string, size: number, form: 'single' | 'multipart', parts?: number): Promise<string> {
  return contentEtag(createReadStream(file, { highWaterMark: Math.max(1, Math.min(MiB, size)) }), size, form, parts);
}

import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { partSizeFor as serverPartSizeFor } from '../../../functions/core/multipart-rules';
import { contentEtag, etagForm, fileContentEtag, multipartEtag, partRanges, partSizeFor, partsOf } from '../../src/content-etag';

const MiB = 1024 * 1024;
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest();

async function* chunksOf(bytes: Buffer, size: number): AsyncIterable<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe('Function: partSizeFor', () => {
  it('is 8 MiB up to 10,000 parts of it, then whole MiB so that no file has more than 10,000 parts', () => {
    expect(partSizeFor(1)).toBe(8 * MiB);
    expect(partSizeFor(10_000 * 8 * MiB)).toBe(8 * MiB);
    expect(partSizeFor(10_000 * 8 * MiB + 1)).toBe(9 * MiB);
    expect(partSizeFor(5 * 1024 * 1024 * MiB)).toBe(525 * MiB);
    // As the server cuts it (functions/core/large-upload.ts), a size alone gives today's parts.
    expect(partSizeFor(20 * 1024 * MiB)).toBe(serverPartSizeFor(20 * 1024 * MiB));
    expect(partSizeFor(5 * 1024 * 1024 * MiB)).toBe(serverPartSizeFor(5 * 1024 * 1024 * MiB));
  });

  it('gives the part size that cut a stored copy into the parts its ETag names, from before 2,000 parts became 10,000', () => {
    // 20 GiB: 2,000 parts of 11 MiB then (1,862 parts), 2,560 parts of 8 MiB now.
    expect(partSizeFor(20 * 1024 * MiB, 1862)).toBe(11 * MiB);
    expect(partSizeFor(20 * 1024 * MiB, 2560)).toBe(8 * MiB);
    expect(partSizeFor(20 * 1024 * MiB, 7)).toBe(8 * MiB);
    expect(partsOf('0123456789abcdef0123456789abcdef-1862')).toBe(1862);
    expect(partsOf('0123456789abcdef0123456789abcdef')).toBeUndefined();
  });
});

describe('Function: partRanges', () => {
  it('cuts every part at part_size but the last, numbered from 1', () => {
    expect(partRanges(20, 8)).toEqual([
      { number: 1, start: 0, end: 8 },
      { number: 2, start: 8, end: 16 },
      { number: 3, start: 16, end: 20 },
    ]);
    expect(partRanges(16, 8)).toHaveLength(2);
    expect(partRanges(1, 8)).toEqual([{ number: 1, start: 0, end: 1 }]);
  });
});

describe('Function: etagForm', () => {
  it('tells hex MD5, the multipart form and anything else (an older record shows its id)', () => {
    expect(etagForm('9e107d9d372bb6826bd81d3542a419d6')).toBe('single');
    expect(etagForm('9e107d9d372bb6826bd81d3542a419d6-12')).toBe('multipart');
    expect(etagForm('3f1b0c2e-8a1d-4c5b-9f00-1234567890ab')).toBe('none');
    expect(etagForm('9e107d9d372bb6826bd81d3542a419d6-0')).toBe('none');
    expect(etagForm(undefined)).toBe('none');
  });
});

describe('Function: contentEtag', () => {
  it('single: the hex MD5 of the bytes', async () => {
    expect(await contentEtag(chunksOf(Buffer.from('The quick brown fox jumps over the lazy dog'), 7), 43, 'single')).toBe('9e107d9d372bb6826bd81d3542a419d6');
  });

  it('multipart: the MD5 of the parts’ binary MD5s and the part count, parts cut at partSizeFor, whatever the read chunks', async () => {
    // Prepare: 20 MiB + 3 bytes is parts of 8, 8 and 4 MiB + 3.
    const bytes = randomBytes(20 * MiB + 3);
    const parts = partRanges(bytes.length, 8 * MiB).map((range) => md5(bytes.subarray(range.start, range.end)));
    const expected = `${createHash('md5').update(Buffer.concat(parts)).digest('hex')}-3`;

    // Act / Assess: chunks that straddle part boundaries
    expect(await contentEtag(chunksOf(bytes, 1_000_003), bytes.length, 'multipart')).toBe(expected);
    expect(multipartEtag(parts)).toBe(expected);
  });

  it('multipart of an exact multiple of the part size has no empty last part', async () => {
    const bytes = randomBytes(16 * MiB);
    const etag = await contentEtag(chunksOf(bytes, MiB), bytes.length, 'multipart');
    expect(etag).toBe(multipartEtag([md5(bytes.subarray(0, 8 * MiB)), md5(bytes.subarray(8 * MiB))]));
  });
});

describe('Function: fileContentEtag', () => {
  it('reads a local file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'etag-'));
    try {
      await writeFile(join(dir, 'f'), 'The quick brown fox jumps over the lazy dog');
      expect(await fileContentEtag(join(dir, 'f'), 43, 'single')).toBe('9e107d9d372bb6826bd81d3542a419d6');
      expect(await fileContentEtag(join(dir, 'f'), 43, 'multipart')).toBe(multipartEtag([Buffer.from('9e107d9d372bb6826bd81d3542a419d6', 'hex')]));
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});

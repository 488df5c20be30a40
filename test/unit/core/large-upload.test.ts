import { S3_MAX_OBJECT_BYTES } from '../../../functions/core/large-upload';
import { MAX_PARTS, MIN_PART_BYTES, partSizeFor } from '../../../functions/core/multipart-rules';

const MiB = 1024 * 1024;

describe('Function: partSizeFor', () => {
  it.each([
    [1, 8 * MiB, 1],
    [8 * MiB, 8 * MiB, 1],
    [8 * MiB + 1, 8 * MiB, 2],
    [200 * MiB, 8 * MiB, 25],
    [2000 * 8 * MiB, 8 * MiB, 2000],
    [10_000 * 8 * MiB, 8 * MiB, 10_000],
    [10_000 * 8 * MiB + 1, 9 * MiB, 8889],
    [S3_MAX_OBJECT_BYTES, 525 * MiB, 9987],
  ])('cuts %d bytes into parts of %d (%d parts)', (size, partSize, parts) => {
    expect(partSizeFor(size)).toBe(partSize);
    expect(Math.ceil(size / partSizeFor(size))).toBe(parts);
  });

  it("keeps every size within S3's part rules: at least 5 MiB, at most 5 GiB, at most 10,000 parts", () => {
    for (let size = 1; size <= S3_MAX_OBJECT_BYTES; size = Math.ceil(size * 1.37) + 12345) {
      const partSize = partSizeFor(size);
      expect(partSize).toBeGreaterThanOrEqual(Math.max(MIN_PART_BYTES, 5 * MiB));
      expect(partSize).toBeLessThanOrEqual(5 * 1024 * MiB);
      expect(partSize % MiB).toBe(0);
      expect(Math.ceil(size / partSize)).toBeLessThanOrEqual(MAX_PARTS);
    }
  });
});

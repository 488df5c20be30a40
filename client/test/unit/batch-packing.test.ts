import fc from 'fast-check';
import { type BatchCosts, type BatchLimits, packBatches } from '../../src/batch-packing';
import { METADATA_FIXED_BYTES, REQUEST_FIXED_BYTES, fileCost } from '../../src/upload-form';

interface Item {
  path: string;
  size: number;
}

const DRIVE_LIMITS: BatchLimits = { maxBytes: 4.5 * 1024 * 1024, maxFiles: 1000, maxMetadataBytes: 1024 * 1024 };
const FORM_COSTS: BatchCosts<Item> = { fixedBytes: REQUEST_FIXED_BYTES, fixedMetadataBytes: METADATA_FIXED_BYTES, cost: fileCost };

function batchBytes(batch: Item[]): number {
  return REQUEST_FIXED_BYTES + batch.reduce((sum, item) => sum + fileCost(item).bytes, 0);
}

describe('Function: packBatches', () => {
  it('packs 2,000 files of 4 KiB into 2 requests: the 1,000-file limit binds, not the bytes', () => {
    const items = Array.from({ length: 2000 }, (_, i) => ({ path: `/tree/d${i % 20}/f${i}.txt`, size: 4096 }));
    const { batches, oversize } = packBatches(items, FORM_COSTS, DRIVE_LIMITS);
    expect(batches.map((batch) => batch.length)).toEqual([1000, 1000]);
    expect(oversize).toEqual([]);
  });

  it('packs 1,000 files of 100 KiB into as many requests as their bytes need (23), each under 4.5 MiB with its part headers', () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({ path: `/batch/${i}.bin`, size: 100 * 1024 }));
    const { batches } = packBatches(items, FORM_COSTS, DRIVE_LIMITS);
    // 45 files of 100 KiB make 4.39 MiB; a 46th would pass 4.5 MiB.
    expect(batches).toHaveLength(Math.ceil(1000 / 45));
    for (const batch of batches) expect(batchBytes(batch)).toBeLessThanOrEqual(DRIVE_LIMITS.maxBytes);
  });

  it('keeps the metadata field under its limit when paths are long and JSON escapes them (1 MiB binds before 1,000 files)', () => {
    const longPath = `/${'"'.repeat(600)}`;
    const items = Array.from({ length: 2000 }, (_, i) => ({ path: `${longPath}/${i}`, size: 1 }));
    const { batches } = packBatches(items, FORM_COSTS, DRIVE_LIMITS);
    for (const batch of batches) {
      expect(Buffer.byteLength(JSON.stringify(batch.map((item) => ({ path: item.path }))))).toBeLessThanOrEqual(DRIVE_LIMITS.maxMetadataBytes);
    }
    expect(batches.length).toBeGreaterThan(2);
  });

  it('splits 1,000 files each in its own 3-level folder so that no request names more than 1,000 folders', () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({ path: `/day-${i}/in/out/f.txt`, size: 10 }));
    const folders = (item: Item) => item.path.split('/').slice(1, -1).map((_, depth, parts) => `/${parts.slice(0, depth + 1).join('/')}`);
    const costs: BatchCosts<Item> = { ...FORM_COSTS, cost: (item) => ({ ...fileCost(item), folders: folders(item) }) };

    const { batches } = packBatches(items, costs, { ...DRIVE_LIMITS, maxFolders: 1000 });

    expect(batches.flat()).toHaveLength(1000);
    for (const batch of batches) expect(new Set(batch.flatMap(folders)).size).toBeLessThanOrEqual(1000);
    // 333 files name 999 folders; a 334th would pass 1,000.
    expect(batches.length).toBe(Math.ceil(1000 / 333));
  });

  it('returns a file that cannot fit even alone as oversize', () => {
    const big = { path: '/big', size: DRIVE_LIMITS.maxBytes };
    expect(packBatches([big, { path: '/small', size: 1 }], FORM_COSTS, DRIVE_LIMITS)).toEqual({ batches: [[{ path: '/small', size: 1 }]], oversize: [big] });
  });

  it('for any files: each lands in exactly one request, every request is within every limit, and at most one request is under half full', () => {
    const limits: BatchLimits = { maxBytes: 64 * 1024, maxFiles: 50, maxMetadataBytes: 4096 };
    fc.assert(
      fc.property(fc.array(fc.record({ path: fc.string({ minLength: 1, maxLength: 40 }).map((s) => `/${s}`), size: fc.nat(40 * 1024) }), { maxLength: 300 }), (items) => {
        const { batches, oversize } = packBatches(items, FORM_COSTS, limits);
        expect([...batches.flat(), ...oversize].sort((a, b) => items.indexOf(a) - items.indexOf(b))).toEqual(items);
        for (const batch of batches) {
          expect(batch.length).toBeLessThanOrEqual(limits.maxFiles);
          expect(batchBytes(batch)).toBeLessThanOrEqual(limits.maxBytes);
          expect(METADATA_FIXED_BYTES + batch.reduce((sum, item) => sum + fileCost(item).metadataBytes, 0)).toBeLessThanOrEqual(limits.maxMetadataBytes);
        }
        // First fit never leaves two requests that could have been one, so at most one is less than half full by every measure.
        const underHalf = batches.filter((batch) => batchBytes(batch) <= limits.maxBytes / 2 && batch.length <= limits.maxFiles / 2 && batch.reduce((s, i) => s + fileCost(i).metadataBytes, 0) <= limits.maxMetadataBytes / 2);
        expect(underHalf.length).toBeLessThanOrEqual(1);
      }),
    );
  });
});

/** The most one `POST /drive/upload` may carry. */
export interface BatchLimits {
  /** Body bytes per request (Drive: 4,500,000, what a buffered Lambda can take after base64 with its headers). */
  maxBytes: number;
  /** Files per request (Drive: 1,000). */
  maxFiles: number;
  /** Bytes of the `metadata` field (Drive: 1 MiB). */
  maxMetadataBytes: number;
  /** Distinct folders the destinations of one request name, ancestors included (Drive: 1,000). */
  maxFolders?: number;
}

/** What a request costs before any file, and what each file adds. */
export interface BatchCosts<T> {
  fixedBytes: number;
  fixedMetadataBytes: number;
  /** `folders`: the folders the item's destination names, ancestors included. */
  cost(item: T): { bytes: number; metadataBytes: number; folders?: readonly string[] };
}

interface Bin<T> {
  items: T[];
  bytes: number;
  metadataBytes: number;
  folders: Set<string>;
}

/**
 * Packs items into as few requests as the limits allow: first-fit decreasing (largest first, each into
 * the first request it fits), which is within 22% of the fewest possible and near it for many small files.
 * Items that do not fit even alone come back in `oversize`.
 */
export function packBatches<T>(items: readonly T[], costs: BatchCosts<T>, limits: BatchLimits): { batches: T[][]; oversize: T[] } {
  const sized = items.map((item) => ({ item, ...costs.cost(item) })).sort((a, b) => b.bytes - a.bytes);
  const bins: Bin<T>[] = [];
  const oversize: T[] = [];
  const maxFolders = limits.maxFolders ?? Number.POSITIVE_INFINITY;
  for (const { item, bytes, metadataBytes, folders = [] } of sized) {
    if (costs.fixedBytes + bytes > limits.maxBytes || costs.fixedMetadataBytes + metadataBytes > limits.maxMetadataBytes || folders.length > maxFolders) {
      oversize.push(item);
      continue;
    }
    const newFolders = (bin: Bin<T>) => folders.filter((folder) => !bin.folders.has(folder)).length;
    const fits = (bin: Bin<T>) =>
      bin.items.length < limits.maxFiles &&
      bin.bytes + bytes <= limits.maxBytes &&
      bin.metadataBytes + metadataBytes <= limits.maxMetadataBytes &&
      bin.folders.size + newFolders(bin) <= maxFolders;
    let bin = bins.find(fits);
    if (!bin) bins.push((bin = { items: [], bytes: costs.fixedBytes, metadataBytes: costs.fixedMetadataBytes, folders: new Set() }));
    bin.items.push(item);
    bin.bytes += bytes;
    bin.metadataBytes += metadataBytes;
    for (const folder of folders) bin.folders.add(folder);
  }
  return { batches: bins.map((bin) => bin.items), oversize };
}

/** What a request may carry now: the hard limits, lowered to what the latency observed says fits the target. */
export interface BatchSize {
  maxFiles: number;
  maxBytes: number;
}

/** The fewest bytes a request is lowered to: below it, the request's own overhead is most of its time. */
const MIN_BATCH_BYTES = 64 * 1024;

/**
 * Sizes upload requests so that each stays well inside API Gateway's 29 s (issue 26: 1,000-file requests took
 * 55–90 s on a loaded host, and every one was answered 504). It starts at `startFiles` files and the byte
 * limit, and after each request scales towards what would have taken `targetMs`, taking its time as linear in
 * files and bytes: a slow request lowers both limits to its own size scaled down (at most to a quarter at a
 * time); a fast one raises the limit it filled (at most to double at a time), never past the hard limits.
 */
export class BatchSizer {
  private files: number;
  private bytes: number;

  constructor(
    private readonly hard: BatchSize,
    readonly targetMs = 10_000,
    startFiles = 100,
  ) {
    this.files = Math.max(1, Math.min(hard.maxFiles, startFiles));
    this.bytes = hard.maxBytes;
  }

  /** The limits of the next request. */
  limits(): BatchSize {
    return { maxFiles: this.files, maxBytes: this.bytes };
  }

  /** How many of `sizes` (bytes each, in order) the next request takes: those that fit the limits, one at least. */
  fit(sizes: readonly number[]): number {
    let bytes = 0;
    let count = 0;
    for (const size of sizes) {
      if (count >= this.files || (count > 0 && bytes + size > this.bytes)) break;
      bytes += size;
      count++;
    }
    return Math.max(1, count);
  }

  /** Notes a request of `files` files and `bytes` bytes that took `ms` to answer (one attempt, no retry). */
  observe(files: number, bytes: number, ms: number): void {
    if (files <= 0 || !(ms > 0)) return;
    const factor = Math.min(2, Math.max(0.25, this.targetMs / ms));
    if (factor < 1) {
      this.files = Math.min(this.files, Math.max(1, Math.floor(files * factor)));
      this.bytes = Math.min(this.bytes, Math.max(MIN_BATCH_BYTES, Math.floor(bytes * factor)));
      return;
    }
    // Only a limit the request came near says anything about how far it may grow.
    if (files * 2 >= this.files) this.files = Math.min(this.hard.maxFiles, Math.max(this.files, Math.floor(files * factor)));
    if (bytes * 2 >= this.bytes) this.bytes = Math.min(this.hard.maxBytes, Math.max(this.bytes, Math.floor(bytes * factor)));
  }
}

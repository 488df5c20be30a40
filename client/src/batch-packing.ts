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

/** The part of s3rver's filesystem store whose bucket configurations are kept in memory. */
export interface ConfigStore {
  getSubresource(bucket: string, key: string | undefined, type: string): Promise<unknown>;
  putSubresource(bucket: string, key: string | undefined, resource: { type: string }): Promise<void>;
  deleteSubresource(bucket: string, key: string | undefined, type: string): Promise<void>;
}

/**
 * s3rver reads a bucket's CORS and website configurations from their XML files, and parses them, on every
 * request (its `cors` and `website` middleware): the bucket's configurations (`key` undefined) are kept in
 * memory once read, absent ones too. They change only by `putSubresource` and `deleteSubresource` (PutBucketCors,
 * DeleteBucketCors and the like, and the bucket's configuration at start), which empty what is kept for that
 * bucket and type before and after the write; a read that one of them overlapped is not kept. Nothing else
 * writes those files while the host runs. An object's configurations (its tagging, `key` set) are read as before.
 */
export function cacheBucketConfigs(store: ConfigStore): void {
  const kept = new Map<string, unknown>();
  const generations = new Map<string, number>();
  const name = (bucket: string, type: string) => `${bucket}\u0000${type}`;
  const changed = (id: string) => {
    generations.set(id, (generations.get(id) ?? 0) + 1);
    kept.delete(id);
  };
  const { getSubresource, putSubresource, deleteSubresource } = store;
  store.getSubresource = async (bucket, key, type) => {
    if (key !== undefined) return getSubresource.call(store, bucket, key, type);
    const id = name(bucket, type);
    if (kept.has(id)) return kept.get(id);
    const from = generations.get(id) ?? 0;
    const config = await getSubresource.call(store, bucket, key, type);
    if ((generations.get(id) ?? 0) === from) kept.set(id, config);
    return config;
  };
  store.putSubresource = async (bucket, key, resource) => {
    if (key !== undefined) return putSubresource.call(store, bucket, key, resource);
    const id = name(bucket, resource.type);
    changed(id);
    try {
      await putSubresource.call(store, bucket, key, resource);
    } finally {
      changed(id);
    }
  };
  store.deleteSubresource = async (bucket, key, type) => {
    if (key !== undefined) return deleteSubresource.call(store, bucket, key, type);
    const id = name(bucket, type);
    changed(id);
    try {
      await deleteSubresource.call(store, bucket, key, type);
    } finally {
      changed(id);
    }
  };
}

/** The part of s3rver's filesystem store that lists objects. */
export interface ListingStore {
  listObjects(bucket: string, options: Record<string, unknown>): Promise<unknown>;
}

/** How many times a listing that met a vanishing file is walked again before its error stands. */
export const LISTING_ATTEMPTS = 10;

/**
 * Makes a listing that raced a delete walk the folders again instead of failing with `InternalError`:
 * s3rver reads a folder and then stats each entry, and a delete running meanwhile (on libuv's threads) may
 * remove an entry, or its emptied folder, between the two (ENOENT from `stat` or `scandir`).
 */
export function listingsThroughDeletes(store: ListingStore): void {
  const list = store.listObjects.bind(store);
  store.listObjects = async (bucket, options) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await list(bucket, options);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= LISTING_ATTEMPTS) throw error;
      }
    }
  };
}

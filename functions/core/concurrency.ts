/**
 * Maps `items` through `fn` with at most `limit` calls in flight; results keep the input order. The first
 * failure stops new calls, and the promise rejects with it only once the calls already running have
 * settled: a caller that cleans up after a failure (deletes what a batch wrote, say) never races calls
 * still writing. client/src/pool.ts and dashboard/map-limit.js hold twins of this (they ship without this
 * folder); test/unit/core/concurrency.test.ts holds the three to the same behaviour.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return results;
}

/** Like `mapLimit`, but runs every call and reports each outcome instead of stopping at the first failure. */
export async function settleLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  return mapLimit(items, limit, (item, i) =>
    fn(item, i).then(
      (value): PromiseSettledResult<R> => ({ status: 'fulfilled', value }),
      (reason: unknown): PromiseSettledResult<R> => ({ status: 'rejected', reason }),
    ),
  );
}

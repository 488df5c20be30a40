// @ts-check
/**
 * Maps `items` through `fn`, at most `limit` at a time; results keep the input order. The first failure stops
 * new calls, and the promise rejects with it once the calls already running have settled (the page loads no
 * modules from the API's code, so this is a twin of functions/core/concurrency.ts, with the same behaviour;
 * test/unit/core/concurrency.test.ts runs both).
 * @template T, R
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T) => Promise<R>} fn
 * @returns {Promise<R[]>}
 */
export async function mapLimit(items, limit, fn) {
  /** @type {R[]} */
  const results = new Array(items.length);
  let next = 0;
  /** @type {{ error: unknown } | undefined} */
  let failure;
  const worker = async () => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        results[i] = await fn(items[i]);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return results;
}

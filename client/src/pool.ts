import { abortReason } from './errors';

/**
 * Runs `fn` on every item, at most `limit` at a time, in input order; results keep that order. The first
 * failure stops new calls, and the promise rejects with it only once the calls already running have
 * settled, so that what they started (a large-upload session, say) is cleaned up before the caller goes
 * on. An aborted `signal` stops new calls the same way. The package ships on its own, so it keeps this twin
 * of functions/core/concurrency.ts (the same loop; test/unit/core/concurrency.test.ts runs both).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure && !signal?.aborted) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (signal?.aborted) throw abortReason(signal);
  if (failure) throw failure.error;
  return results;
}

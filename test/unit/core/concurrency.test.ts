import { mapLimit as serverMapLimit } from '../../../functions/core/concurrency';
import { mapLimit as clientMapLimit } from '../../../client/src/pool';
import { mapLimit as dashboardMapLimit } from '../../../dashboard/map-limit.js';

type MapLimit = <T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>) => Promise<R[]>;

/** A promise settled by hand, so a test decides the order in which calls finish. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Lets every callback queued so far run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

// The three copies ship apart (the API's functions, the published client, the dashboard page); they behave as one.
describe.each([
  ['functions/core/concurrency.ts', serverMapLimit as MapLimit],
  ['client/src/pool.ts', clientMapLimit as MapLimit],
  ['dashboard/map-limit.js', dashboardMapLimit as MapLimit],
])('mapLimit of %s', (_name, mapLimit) => {
  it('keeps the input order whatever order the calls finish in', async () => {
    // Prepare
    const calls = [deferred<string>(), deferred<string>(), deferred<string>()];
    // Act
    const result = mapLimit([0, 1, 2], 3, (i) => calls[i].promise);
    calls[2].resolve('c');
    calls[0].resolve('a');
    calls[1].resolve('b');
    // Assess
    await expect(result).resolves.toEqual(['a', 'b', 'c']);
  });

  it('never has more than limit calls in flight', async () => {
    let running = 0;
    let most = 0;
    const result = await mapLimit([...Array(20).keys()], 3, async (i) => {
      most = Math.max(most, ++running);
      await flush();
      running--;
      return i * 2;
    });
    expect(most).toBe(3);
    expect(result).toEqual([...Array(20).keys()].map((i) => i * 2));
  });

  it('stops new calls at the first failure and rejects with it only once the running calls have settled', async () => {
    const calls = [deferred<number>(), deferred<number>(), deferred<number>(), deferred<number>()];
    const started: number[] = [];
    let settled = false;
    const result = mapLimit([0, 1, 2, 3], 2, (i) => {
      started.push(i);
      return calls[i].promise;
    }).finally(() => (settled = true));
    result.catch(() => undefined);
    calls[0].reject(new Error('first'));
    await flush();
    // Call 1 still runs: the promise waits for it, and no call starts after the failure.
    expect(settled).toBe(false);
    expect(started).toEqual([0, 1]);
    calls[1].reject(new Error('second'));
    await expect(result).rejects.toThrow('first');
    expect(started).toEqual([0, 1]);
  });

  it('answers an empty list with an empty list, and treats a limit below 1 as 1', async () => {
    await expect(mapLimit([], 4, async () => 1)).resolves.toEqual([]);
    await expect(mapLimit([1, 2], 0, async (x: number) => x + 1)).resolves.toEqual([2, 3]);
  });
});

import { PARTITION_WRITES_PER_SECOND, PartitionPacer } from '../../../functions/core/partition-pacer';

// A delete's writes to one folder's partition stay under DynamoDB's 1,000 writes a second in every second,
// bursts included: counted on a virtual clock, so the figure is exact on any machine.

it('lets no second hold more than the pace plus a tenth of a second\'s burst, from the first write on', async () => {
  let now = 1_000_000;
  const pacer = new PartitionPacer(PARTITION_WRITES_PER_SECOND, { now: () => now, sleep: async (ms) => void (now += ms) });
  const times: number[] = [];
  for (let i = 0; i < 5000; i++) {
    await pacer.take();
    times.push(now);
  }
  let most = 0;
  for (let first = 0, last = 0; first < times.length; first++) {
    while (last < times.length && times[last] < times[first] + 1000) last++;
    most = Math.max(most, last - first);
  }
  expect(most).toBeLessThanOrEqual(PARTITION_WRITES_PER_SECOND * 1.1 + 1);
  expect(most).toBeGreaterThanOrEqual(PARTITION_WRITES_PER_SECOND);
  // 5,000 writes at 800 a second take about 6.1 s, not less.
  expect(times.at(-1)! - times[0]).toBeGreaterThanOrEqual(6000);
});

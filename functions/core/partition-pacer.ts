/**
 * Writes a second a job makes in one folder. A folder's records share a DynamoDB partition, which takes 1,000
 * writes a second; staying under it leaves room for the folder's other writers and no throttling to retry.
 */
export const PARTITION_WRITES_PER_SECOND = 800;

/** How far ahead of the pace writes may go at once: a tenth of a second's worth, so no second holds much more than `perSecond`. */
const BURST_MS = 100;

/**
 * Spaces a job's writes (records deleted or moved, folders marked and removed) to the folder it is in, whose
 * records share a partition, at most `perSecond` apart on average; `take` waits for the next slot. One step
 * at a time works on a job (its claim), so one pacer speaks for the job.
 */
export class PartitionPacer {
  private next: number;
  constructor(
    private readonly perSecond: number,
    private readonly clock: { now: () => number; sleep: (ms: number) => Promise<void> } = { now: Date.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
  ) {
    this.next = clock.now();
  }

  async take(): Promise<void> {
    const now = this.clock.now();
    this.next = Math.max(this.next, now - BURST_MS) + 1000 / this.perSecond;
    const wait = this.next - now - BURST_MS;
    if (wait > 0) await this.clock.sleep(wait);
  }
}

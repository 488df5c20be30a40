import { performance } from 'node:perf_hooks';

export interface LoadStats {
  ops: number;
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * Runs `op` from `concurrency` workers until `maxOps` are done or `seconds` have passed, after `warmup`
 * unrecorded runs, and reports throughput and latency percentiles.
 */
export async function load(
  concurrency: number,
  limits: { maxOps: number; seconds: number; warmup?: number },
  op: (i: number) => Promise<void>,
): Promise<LoadStats> {
  let next = 0;
  for (let w = 0; w < (limits.warmup ?? 0); w++) await op(next++);
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + limits.seconds * 1000;
  const end = next + limits.maxOps;
  const worker = async () => {
    while (next < end && performance.now() < deadline) {
      const i = next++;
      const t = performance.now();
      await op(i);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { ops: latencies.length, opsPerSecond: latencies.length / elapsed, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

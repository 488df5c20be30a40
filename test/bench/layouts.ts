import { readFileSync } from 'node:fs';
import { type BenchEnvironment, startNpmStart, startSeparated } from './environment';
import { load } from './load';
import { SCENARIOS, seedShared } from './scenarios';

/** The lines `npm start` is held to: within `NPM_START_TARGET` of the separated layout's time at c=16. */
const LAYOUT_SCENARIOS = ['upload-4kib', 'download-4kib', 'list-400'];
const CONCURRENCY = 16;
export const NPM_START_TARGET = 1.3;

/**
 * `npm run bench -- --npm-start`: the API through `npm start` (one process: handlers, and storage on a
 * thread) against the bench's separated layout (storage and host in two processes), each line in `rounds`
 * rounds alternating which layout goes first, the median round kept. Prints time per operation of each,
 * their ratio, and CPU per operation of every process (the client's included), which holds steady on a
 * busy machine where throughput swings.
 */
export async function compareLayouts(rounds: number): Promise<void> {
  const layouts = { separated: await startSeparated(), npmStart: await startNpmStart() };
  try {
    await seedShared(layouts.separated);
    await seedShared(layouts.npmStart);
    console.log(['scenario', 'separated ops/s', 'npm start ops/s', 'ratio', `≤ ${NPM_START_TARGET}`, 'CPU ms/op separated', 'CPU ms/op npm start', 'rounds'].join('\t'));
    for (const id of LAYOUT_SCENARIOS) {
      const scenario = SCENARIOS.find((s) => s.id === id)!;
      const budget = scenario.budget[CONCURRENCY];
      const measured: { ratio: number; separated: number; npmStart: number; cpu: { separated: number; npmStart: number } }[] = [];
      for (let round = 0; round < rounds; round++) {
        const base = 5_000_000 + round * 1_000_000;
        const run = async (env: BenchEnvironment, pids: number[]) => {
          const before = cpuSeconds(pids);
          const stats = await load(CONCURRENCY, budget, (i) => scenario.drive(env, base + i, CONCURRENCY));
          return { opsPerSecond: stats.opsPerSecond, cpuMs: ((cpuSeconds(pids) - before) * 1000) / (stats.ops + budget.warmup) };
        };
        const separated = () => run(layouts.separated, [layouts.separated.pids.host, layouts.separated.pids.storage]);
        const npmStart = () => run(layouts.npmStart, [layouts.npmStart.pids.host]);
        const [a, b] = round % 2 === 0 ? [await separated(), await npmStart()] : [await npmStart(), await separated()].reverse();
        measured.push({ ratio: a.opsPerSecond / b.opsPerSecond, separated: a.opsPerSecond, npmStart: b.opsPerSecond, cpu: { separated: a.cpuMs, npmStart: b.cpuMs } });
      }
      const median = [...measured].sort((x, y) => x.ratio - y.ratio)[Math.floor(measured.length / 2)];
      console.log(
        [
          scenario.name,
          median.separated.toFixed(1),
          median.npmStart.toFixed(1),
          median.ratio.toFixed(2),
          median.ratio <= NPM_START_TARGET ? 'met' : 'MISSED',
          median.cpu.separated.toFixed(2),
          median.cpu.npmStart.toFixed(2),
          measured.map((m) => m.ratio.toFixed(2)).join(', '),
        ].join('\t'),
      );
    }
  } finally {
    await layouts.separated.close();
    await layouts.npmStart.close();
  }
}

/** CPU seconds of this process (the client) and of `pids`, every thread of each. */
function cpuSeconds(pids: number[]): number {
  const usage = process.cpuUsage();
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux).
  const ticks = pids.map((pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')).reduce((sum, f) => sum + Number(f[11]) + Number(f[12]), 0);
  return (usage.user + usage.system) / 1e6 + ticks / 100;
}

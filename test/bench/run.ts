import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { SPEC_RATE_LIMITS } from '../../functions/core/access';
import { CallCounter } from './call-counter';
import { type ColdStart, measureColdStarts } from './cold-start';
import type { HostCpu } from '../../lib/local/host-cpu';
import { startHostInProcess, startSeparated } from './environment';
import { compareLayouts } from './layouts';
import { type LoadStats, load } from './load';
import { type MemoryResult, measureDownloadMemory } from './memory';
import { SCENARIOS, expectOk, seedShared } from './scenarios';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ROOT = resolve(__dirname, '..', '..');
const CONCURRENCIES = [1, 16] as const;

/** CPU time per operation, in ms, of each process: where the time of a line goes. */
interface CpuPerOp {
  client: number;
  host: number;
  storage: number;
  /** The host's CPU inside the handlers' invocations (what Lambda bills): exact at concurrency 1, where they do not overlap. */
  handler: number;
  /** The host's own synchronous steps around them (proxy event built and delivered, result written), exact at any concurrency. */
  emulation: number;
}

interface CpuTimes extends Omit<CpuPerOp, 'handler' | 'emulation'> {
  hostCpu: HostCpu;
}

interface Line {
  scenario: string;
  concurrency: number;
  drive: LoadStats & { cpu: CpuPerOp };
  floor: LoadStats & { cpu: CpuPerOp };
  /** Drive's time per operation over the floor's: floor ops/s ÷ Drive ops/s. */
  ratio: number;
  target?: number;
  met?: boolean;
  /**
   * At concurrency 16: the whole system's CPU per operation, Drive's three processes over the floor's two, of
   * the round with the median CPU ratio (rounds listed), against issue 24's target where it sets one.
   */
  cpu?: { drive: number; floor: number; ratio: number; rounds: number[]; target?: number; met?: boolean };
}

interface CallLine {
  operation: string;
  calls: Record<string, number>;
  total: number;
  lowerBound: number;
  bound: string;
  met: boolean;
}

/** `npm run bench`: Drive against the floor of its own storage; prints tables and writes a JSON report. */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--scale')) {
    // The scale section runs on its own (it takes minutes): test/bench/scale.ts, with the rest of the arguments.
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(ROOT, 'test/bench/scale.ts'), ...args.filter((a) => a !== '--scale')], { stdio: 'inherit', cwd: ROOT });
    process.exitCode = run.status ?? 1;
    return;
  }
  if (args.includes('--cold-start')) {
    // The cold-start section on its own (a minute or two): each handler's import against its bare SDK clients'.
    const coldStarts = await measureColdStarts();
    console.log(['handler', 'bundle KiB', 'import ms', 'bare SDK ms', 'ratio', '≤ 1.25'].join('\t'));
    for (const c of coldStarts) console.log([c.handler, (c.bundleBytes / 1024).toFixed(0), c.importMs.toFixed(1), c.bareClientsImportMs.toFixed(1), c.ratio.toFixed(2), c.ratio <= 1.25 ? 'met' : 'MISSED'].join('\t'));
    const ratios = coldStarts.map((c) => c.ratio).sort((a, b) => a - b);
    console.log(`median ratio ${ratios[Math.floor(ratios.length / 2)].toFixed(2)}, highest ${ratios.at(-1)!.toFixed(2)}`);
    return;
  }
  if (args.includes('--npm-start')) {
    // `npm start` (one process, storage on a thread) against the separated layout, at c=16.
    await compareLayouts(throughputOptions(args.filter((a) => a !== '--npm-start')).rounds);
    return;
  }
  if (args.includes('--calls')) {
    console.log(JSON.stringify(await countCalls()));
    return;
  }
  const out = resolve(args.find((a) => a.startsWith('--out='))?.slice(6) ?? 'bench-report.json');
  const options = throughputOptions(args);
  const started = Date.now();

  log('Throughput and latency (DRIVE_RATE_LIMITS=off, verified keys cached as in a warm Lambda)…');
  const lines = await throughput(options);
  // --only measures the throughput of the scenarios named, and nothing else.
  const all = options.only === undefined;
  if (all) log('AWS calls per operation (rate limits on)…');
  const calls = all ? (JSON.parse(await callsInChild()) as CallLine[]) : [];
  if (all) log('Cold start: bundles and import times…');
  const coldStarts = all ? await measureColdStarts() : [];
  if (all) log('Memory of npm start while downloading 256 MiB…');
  const memory = all ? await measureDownloadMemory(256) : undefined;

  const report = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    seconds: Math.round((Date.now() - started) / 1000),
    throughput: lines,
    calls,
    coldStarts,
    memory: memory && { ...memory, targetMiB: 64, met: memory.growthMiB <= 64 },
  };
  printReport(lines, calls, coldStarts, report.memory);
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  log(`Report written to ${out} (${report.seconds} s).`);
}

interface ThroughputOptions {
  /** The ids of the scenarios to run (`--only=upload-1mib,list-400`); all of them when undefined. */
  only?: string[];
  /** Rounds of each quick line (`--rounds=5`); 3 by default. */
  rounds: number;
}

function throughputOptions(args: string[]): ThroughputOptions {
  const only = args.find((a) => a.startsWith('--only='))?.slice(7).split(',');
  const unknown = only?.filter((id) => !SCENARIOS.some((s) => s.id === id)) ?? [];
  if (unknown.length > 0) throw new Error(`--only: no scenario ${unknown.join(', ')}; the ids are ${SCENARIOS.map((s) => s.id).join(', ')}`);
  const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds % 2 === 0) throw new Error('--rounds must be an odd whole number, so that one round is the median');
  return { only, rounds };
}

async function throughput(options: ThroughputOptions): Promise<Line[]> {
  const env = await startSeparated();
  try {
    await seedShared(env);
    const lines: Line[] = [];
    for (const scenario of SCENARIOS.filter((s) => options.only?.includes(s.id) ?? true)) {
      for (const concurrency of CONCURRENCIES) {
        const budget = scenario.budget[concurrency];
        // Quick lines run in three rounds (or --rounds), alternating which side goes first, and keep the
        // median round: two cores shared by three processes make single runs noisy.
        const rounds = budget.seconds <= 5 ? options.rounds : 1;
        const measured: { drive: Line['drive']; floor: Line['floor']; ratio: number }[] = [];
        for (let round = 0; round < rounds; round++) {
          await scenario.prepare?.(env, concurrency, budget.maxOps + budget.warmup);
          const base = round * 1_000_000; // fresh names every round
          const run = async (side: 'drive' | 'floor') => {
            const before = await cpuTimes(env);
            const stats = await load(concurrency, budget, (i) => scenario[side](env, base + i, concurrency));
            return { ...stats, cpu: perOp(before, await cpuTimes(env), stats.ops + budget.warmup) };
          };
          const first = round % 2 === 0 ? await run('floor') : await run('drive');
          const second = round % 2 === 0 ? await run('drive') : await run('floor');
          const [floor, drive] = round % 2 === 0 ? [first, second] : [second, first];
          measured.push({ drive, floor, ratio: floor.opsPerSecond / drive.opsPerSecond });
        }
        const cpuRounds = measured.map((m) => ({ drive: wholeSystem(m.drive.cpu), floor: wholeSystem(m.floor.cpu) })).map((c) => ({ ...c, ratio: c.drive / c.floor }));
        const cpuMedian = [...cpuRounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(cpuRounds.length / 2)];
        const { drive, floor, ratio } = measured.sort((a, b) => a.ratio - b.ratio)[Math.floor(measured.length / 2)];
        const target = concurrency === 16 ? scenario.target : undefined;
        const cpu =
          concurrency === 16
            ? { ...cpuMedian, rounds: cpuRounds.map((c) => c.ratio), target: scenario.cpuTarget, met: scenario.cpuTarget === undefined ? undefined : cpuMedian.ratio <= scenario.cpuTarget }
            : undefined;
        lines.push({ scenario: scenario.name, concurrency, drive, floor, ratio, target, met: target === undefined ? undefined : ratio <= target, cpu });
        log(`  ${scenario.name} ×${concurrency}: Drive ${drive.opsPerSecond.toFixed(1)} ops/s, floor ${floor.opsPerSecond.toFixed(1)} ops/s, ratio ${ratio.toFixed(2)} (rounds: ${measured.map((m) => m.ratio.toFixed(2)).join(', ')})`);
      }
    }
    return lines;
  } finally {
    await env.close();
  }
}

/** CPU seconds used so far by this process (the client), the host and the storage, and the host's own split. */
async function cpuTimes(env: { pids: { host: number; storage: number }; hostCpu(): Promise<HostCpu> }): Promise<CpuTimes> {
  const hostCpu = await env.hostCpu();
  const usage = process.cpuUsage();
  return { client: (usage.user + usage.system) / 1e6, host: processCpu(env.pids.host), storage: processCpu(env.pids.storage), hostCpu };
}

function processCpu(pid: number): number {
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU ms per operation of every process on a side: the floor's host is 0 (it has none). */
function wholeSystem(cpu: CpuPerOp): number {
  return cpu.client + cpu.host + cpu.storage;
}

function perOp(before: CpuTimes, after: CpuTimes, ops: number): CpuPerOp {
  const ms = (key: 'client' | 'host' | 'storage') => ((after[key] - before[key]) * 1000) / ops;
  const host = (key: 'handlerMicros' | 'emulationMicros') => (after.hostCpu[key] - before.hostCpu[key]) / 1000 / ops;
  return { client: ms('client'), host: ms('host'), storage: ms('storage'), handler: host('handlerMicros'), emulation: host('emulationMicros') };
}

/** Runs the call count in a process of its own, since rate limits are read once per process. */
async function callsInChild(): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', __filename, '--calls'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim().split('\n').at(-1)!;
}

async function countCalls(): Promise<CallLine[]> {
  // Limits on (so each request pays its rate-limit update) but far above what this run sends.
  const env = await startHostInProcess(Object.keys(SPEC_RATE_LIMITS).map((name) => `${name}=1000000`).join(','));
  // Before any request: the clients resolve their middleware once (cacheMiddleware).
  const counter = new CallCounter(env.handlerClients.dynamodb, env.handlerClients.s3);
  try {
    await seedShared(env);
    await env.seeder.tree('count-delete', '/tree', 10, 100, 16);
    const deleter = await env.clientFor('count-delete');
    await expectOk(deleter.get('/drive/list', { folder: '/' })); // caches its key
    const lines: CallLine[] = [];
    const measure = async (operation: string, bound: string, lowerBound: number, op: (i: number) => Promise<unknown>, warm = true) => {
      if (warm) await op(0); // caches the key and makes the rate bucket, as in a warm container
      const calls = await counter.during(() => op(1));
      const total = Object.values(calls).reduce((a, b) => a + b, 0);
      lines.push({ operation, calls, total, lowerBound, bound, met: total <= lowerBound });
    };
    const file = (name: string) => ({ data: Buffer.alloc(4096, 1), filename: name });
    await measure('upload 1 file into an existing folder', '1 PutObject + 1 item write + 1 rate-limit update', 3, (i) => expectOk(env.api.upload([file(`c1-${i}`)], [{ folder: '/up' }])));
    await measure('upload 20 files into an existing folder', '20 PutObject + 20 item writes + 1 rate-limit update', 41, (i) =>
      expectOk(env.api.upload(Array.from({ length: 20 }, (_, k) => file(`c20-${i}-${k}`)), Array.from({ length: 20 }, () => ({ folder: '/up' })))),
    );
    await measure('download', 'GetItem + GetObject + 1 rate-limit update', 3, () => expectOk(env.api.get('/drive/download', { path: '/dl/4k.bin' })));
    await measure('list a folder of 1,000 files', '1 Query (one 1 MB page) + 1 rate-limit update', 2, () => expectOk(env.api.get('/drive/list', { folder: '/list1000' })));
    await measure('recursive list, 10,000 files in 1,000 folders', '1,001 Query (one per folder) + 1 rate-limit update', 1002, () => expectOk(env.api.get('/drive/list', { folder: '/tree10k', recursive: 'true' })));
    await measure('create a 5-deep folder', '5 item writes + 1 rate-limit update', 6, (i) => expectOk(env.api.createFolder(`/count-mk-${i}/a/b/c/d`)));
    await measure(
      'recursive delete, 1,000 files in 11 folders',
      '11 Query + ⌈1000/1000⌉ DeleteObjects + ⌈1011/25⌉ BatchWriteItem + 1 rate-limit update',
      11 + 1 + 41 + 1,
      () => expectOk(deleter.deleteFolder('/tree')),
      false,
    );
    return lines;
  } finally {
    await env.close();
  }
}

/** Issue 24: a handler invocation's CPU at most this many times the floor's client doing the same job, every line. */
const HANDLER_TARGET = 2.0;

function printReport(lines: Line[], calls: CallLine[], coldStarts: ColdStart[], memory: (MemoryResult & { met: boolean }) | undefined): void {
  const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  table(
    'Throughput and latency: Drive (client → local host → storage) against the floor (client → storage, the SDK alone)',
    ['operation', 'conc', 'Drive ops/s', 'p50 ms', 'p99 ms', 'floor ops/s', 'p50 ms', 'p99 ms', 'ratio', 'target'],
    lines.map((l) => [l.scenario, String(l.concurrency), f(l.drive.opsPerSecond), f(l.drive.p50Ms), f(l.drive.p99Ms), f(l.floor.opsPerSecond), f(l.floor.p50Ms), f(l.floor.p99Ms), f(l.ratio, 2), l.target === undefined ? '' : `≤ ${l.target} ${l.met ? 'met' : 'MISSED'}`]),
  );
  table(
    'CPU per operation (ms) of each process, at concurrency 16: where the difference goes',
    ['operation', 'Drive client', 'Drive host', 'Drive storage', 'floor client', 'floor storage'],
    lines.filter((l) => l.concurrency === 16).map((l) => [l.scenario, f(l.drive.cpu.client, 2), f(l.drive.cpu.host, 2), f(l.drive.cpu.storage, 2), f(l.floor.cpu.client, 2), f(l.floor.cpu.storage, 2)]),
  );
  table(
    "Whole-system CPU per operation (ms) at concurrency 16, Drive's client + host + storage against the floor's client + storage: issue 24's measure (median round by this ratio)",
    ['operation', 'Drive ms', 'floor ms', 'ratio', 'rounds', 'target'],
    lines
      .filter((l) => l.cpu !== undefined)
      .map((l) => {
        const cpu = l.cpu!;
        return [l.scenario, f(cpu.drive, 2), f(cpu.floor, 2), f(cpu.ratio, 2), cpu.rounds.map((r) => f(r, 2)).join(', '), cpu.target === undefined ? '' : `≤ ${cpu.target} ${cpu.met ? 'met' : 'MISSED'}`];
      }),
  );
  table(
    "The host's CPU per operation (ms), split: the handler (what Lambda bills) against the floor's client (the SDK doing the same job)",
    ['operation', 'conc', 'Drive host', 'emulation', 'host less emulation', 'handler', 'floor client', 'handler ÷ floor', 'target'],
    lines.map((l) => {
      // Invocations overlap at 16 clients, so their windows count shared CPU more than once: exact at 1 only.
      const handler = l.concurrency === 1 ? l.drive.cpu.handler : NaN;
      const handlerRatio = handler / l.floor.cpu.client;
      const target = l.concurrency === 1 ? `≤ ${HANDLER_TARGET} ${handlerRatio <= HANDLER_TARGET ? 'met' : 'MISSED'}` : '';
      return [l.scenario, String(l.concurrency), f(l.drive.cpu.host, 2), f(l.drive.cpu.emulation, 2), f(l.drive.cpu.host - l.drive.cpu.emulation, 2), f(handler, 2), f(l.floor.cpu.client, 2), f(handlerRatio, 2), target];
    }),
  );
  if (!memory) return; // --only: the throughput tables alone
  table(
    'AWS calls per operation (warm: key cached, rate limits on)',
    ['operation', 'calls', 'total', 'lower bound', ''],
    calls.map((c) => [c.operation, Object.entries(c.calls).map(([k, v]) => `${v} ${k}`).join(', '), String(c.total), `${c.lowerBound} (${c.bound})`, c.met ? 'met' : `+${c.total - c.lowerBound}`]),
  );
  table(
    'Cold start: bundled handler (as the stack builds it) against a bundle of the SDK clients it uses',
    ['handler', 'bundle KiB', 'SDK clients', 'import ms', 'bare clients ms', 'ratio', 'target ≤ 1.25'],
    coldStarts.map((c) => [c.handler, f(c.bundleBytes / 1024, 0), c.sdkClients.join(' + '), f(c.importMs), f(c.bareClientsImportMs), f(c.ratio, 2), c.ratio <= 1.25 ? 'met' : 'MISSED']),
  );
  table(
    'Memory: resident memory of npm start while a client downloads the file',
    ['file', 'RSS before MiB', 'peak MiB', 'growth MiB', 'seconds', 'target ≤ 64 MiB'],
    [[`${memory.fileBytes / 1024 / 1024} MiB`, f(memory.rssBeforeMiB), f(memory.rssPeakMiB), f(memory.growthMiB), f(memory.seconds), memory.met ? 'met' : 'MISSED']],
  );
}

function table(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${title}\n`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

function log(message: string): void {
  console.error(message);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);


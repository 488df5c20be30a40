// The cost of a sync that finds nothing to do: N small files already in the drive, synced again.
//
//   node --import tsx client/bench/sync-unchanged.ts [N=10000] [N2 …]     e.g. 10000 100000
//
// For each N, in a temporary folder: writes N files of 0-200 bytes in 100 folders, seeds a fresh data dir's
// drive with the same files behind the API's back (`seedDataDir`: the host's own store adapters on its
// embedded S3 and DynamoDB, no HTTP, so 100,000 files take minutes, not hours), starts the local host on it,
// then runs `drive.sync(tree, 'drive:/bench')` over HTTP as a user would, in a child process of its own so that
// its figures are the sync's alone. The child counts its requests (POSTs must be 0), the recursive listing pages
// it reads, its CPU seconds, its peak RSS (VmHWM), and its live heap (after a full GC) before the
// sync, as each listing page is asked for, once the plan is made, and after: the first page's heap less the
// baseline is the local index; what the heap gains from the first page to the plan is what the pages leave
// behind (nothing, if memory is the index and one page). One JSON line per N at the end.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Drive } from '../src/drive';

const KEY = 'bench-sync-key-7Hq2Lx9Vb4Nc8Zr1';
const MiB = 1024 * 1024;

interface ChildFigures {
  ms: number;
  cpuSeconds: number;
  report: { unchanged: number; transferred: { files: number }; failed: number; interrupted: boolean };
  requests: Record<string, number>;
  pages: number;
  posts: number;
  baselineRssMiB: number;
  maxRssMiB: number;
  /** Live heap (after a full GC), MiB: before the sync, as each recursive listing page was asked for, after it. */
  heapBeforeMiB: number;
  heapAtPagesMiB: number[];
  /** Once the plan is made: every page read, the plan whole. */
  heapAtPlanMiB: number;
  heapAfterMiB: number;
}

/**
 * This process's peak RSS, MiB: the kernel's VmHWM of its own memory. Not getrusage's maxrss, which on Linux
 * carries over the parent's peak at the fork (the bench's, after seeding 100,000 files: 378 MiB).
 */
const peakRssMiB = (): number => {
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return hwm ? Number(hwm[1]) / 1024 : process.resourceUsage().maxRSS / 1024;
};

const liveHeapMiB = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / MiB;
};

async function child(url: string, local: string): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) throw new Error('the child needs --expose-gc');
  const requests: Record<string, number> = {};
  const heapAtPages: number[] = [];
  let pages = 0;
  let posts = 0;
  const fetchCounting = (input: string | URL | Request, init?: RequestInit) => {
    const at = new URL(String(input));
    const method = init?.method ?? 'GET';
    const kind = `${method} ${at.pathname}`;
    requests[kind] = (requests[kind] ?? 0) + 1;
    if (method === 'POST') posts++;
    if (at.pathname === '/drive/list' && at.searchParams.get('recursive') === 'true') {
      pages++;
      heapAtPages.push(liveHeapMiB());
    }
    return fetch(input, init);
  };
  const drive = new Drive({ baseUrl: url, apiKey: KEY, fetch: fetchCounting });
  const heapBeforeMiB = liveHeapMiB();
  const baselineRssMiB = peakRssMiB();
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  let heapAtPlanMiB = 0;
  const report = await drive.sync(local, 'drive:/bench', { onPlan: () => void (heapAtPlanMiB = liveHeapMiB()) });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const used = process.cpuUsage(cpu);
  const maxRssMiB = peakRssMiB();
  const heapAfterMiB = liveHeapMiB();
  const figures: ChildFigures = {
    ms,
    cpuSeconds: (used.user + used.system) / 1e6,
    report: { unchanged: report.unchanged, transferred: report.transferred, failed: report.failed.length, interrupted: report.interrupted },
    requests,
    pages,
    posts,
    baselineRssMiB,
    maxRssMiB,
    heapBeforeMiB,
    heapAtPagesMiB: heapAtPages,
    heapAtPlanMiB,
    heapAfterMiB,
  };
  process.stdout.write(JSON.stringify(figures));
}

async function measure(n: number): Promise<Record<string, unknown>> {
  // Imported here, not above: the child that measures the sync loads the client alone, not the emulators.
  const { seedDataDir, startHost, stopHost } = await import('../../test/support/local-host');
  const { smallFiles, writeTree } = await import('../test/support/trees');
  const dir = await mkdtemp(join(tmpdir(), 'drive-bench-sync-'));
  try {
    const local = join(dir, 'tree');
    const dataDir = join(dir, 'data');
    let started = Date.now();
    const tree = await writeTree(local, smallFiles(n, 100, 200));
    console.log(`n=${n}: wrote the local tree in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    started = Date.now();
    await seedDataDir(
      dataDir,
      'default',
      tree.map((file) => ({ path: `/bench/${file.relative}`, read: () => readFile(file.local) })),
      { onProgress: (done) => done % 20_000 === 0 && console.log(`n=${n}: seeded ${done} files`) },
    );
    const seedSeconds = (Date.now() - started) / 1000;
    console.log(`n=${n}: seeded the drive behind the API in ${seedSeconds.toFixed(1)} s`);

    started = Date.now();
    const host = await startHost({ DRIVE_API_KEYS: `default:${KEY}` }, dataDir, undefined, 600);
    console.log(`n=${n}: the host started on it in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    try {
      const load = loadavg()[0];
      // SYNC_BENCH_PROFILE=<dir> writes the measured sync's CPU profile there (`--cpu-prof`).
      const profile = process.env.SYNC_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SYNC_BENCH_PROFILE}`] : [];
      const run = spawnSync(process.execPath, [...profile, '--expose-gc', '--import', 'tsx', resolve(__filename), '--child', host.url, local], { encoding: 'utf8', maxBuffer: 64 * MiB });
      if (run.status !== 0) throw new Error(`child failed: ${run.stderr}`);
      const m = JSON.parse(run.stdout) as ChildFigures;
      const firstPage = m.heapAtPagesMiB[0] ?? m.heapBeforeMiB;
      const lastPage = m.heapAtPagesMiB.at(-1) ?? firstPage;
      const indexMiB = firstPage - m.heapBeforeMiB;
      const pagesGrowthMiB = Math.max(...m.heapAtPagesMiB, firstPage) - firstPage;
      console.log(
        `n=${n}: ${m.report.unchanged} unchanged, uploads ${m.report.transferred.files} (POSTs ${m.posts}), ${m.pages} listing pages, ` +
          `${(m.ms / 1000).toFixed(1)} s wall, ${m.cpuSeconds.toFixed(1)} CPU-s in the client; peak RSS ${m.maxRssMiB.toFixed(0)} MiB ` +
          `(${m.baselineRssMiB.toFixed(0)} before, +${(m.maxRssMiB - m.baselineRssMiB).toFixed(0)}); live heap ${m.heapBeforeMiB.toFixed(1)} MiB before, ` +
          `+${indexMiB.toFixed(1)} at the first page (the index: ${((indexMiB * MiB) / n).toFixed(0)} B a file), ` +
          `+${pagesGrowthMiB.toFixed(1)} more at most over the pages (last page +${(lastPage - firstPage).toFixed(1)}, the plan made +${(m.heapAtPlanMiB - firstPage).toFixed(1)}), ${(m.heapAfterMiB - m.heapBeforeMiB).toFixed(1)} after; load ${load.toFixed(1)} at the start`,
      );
      console.log(`n=${n}: requests ${JSON.stringify(m.requests)}`);
      return {
        bench: 'sync-unchanged',
        files: n,
        seedSeconds,
        syncSeconds: Number((m.ms / 1000).toFixed(1)),
        cpuSeconds: Number(m.cpuSeconds.toFixed(1)),
        pages: m.pages,
        uploads: m.report.transferred.files,
        posts: m.posts,
        unchanged: m.report.unchanged,
        failed: m.report.failed,
        baselineRssMiB: Number(m.baselineRssMiB.toFixed(1)),
        peakRssMiB: Number(m.maxRssMiB.toFixed(1)),
        heapBeforeMiB: Number(m.heapBeforeMiB.toFixed(1)),
        indexHeapMiB: Number(indexMiB.toFixed(1)),
        pagesHeapGrowthMiB: Number(pagesGrowthMiB.toFixed(1)),
        planHeapGrowthMiB: Number((m.heapAtPlanMiB - firstPage).toFixed(1)),
        heapAfterMiB: Number(m.heapAfterMiB.toFixed(1)),
        loadAtStart: Number(load.toFixed(2)),
        loadAtEnd: Number(loadavg()[0].toFixed(2)),
      };
    } finally {
      await stopHost(host);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3], process.argv[4]);
  const sizes = process.argv.slice(2).map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`usage: sync-unchanged.ts [N …] (got ${process.argv.slice(2).join(' ')})`);
  const results = [];
  for (const n of sizes.length > 0 ? sizes : [10_000]) results.push(await measure(n));
  for (const result of results) console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

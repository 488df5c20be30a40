// The cost of a sync that finds nothing to do: N small files already in the drive, synced again.
//
//   node --import tsx client/bench/sync-unchanged.ts [N=10000]
//
// Starts a local host (test/support/local-host.ts, data in a temporary folder), writes N files of 0-200 bytes in
// 100 folders, seeds the drive with one `drive.sync` up (timed, for reference), then runs the measured sync again
// in a child process of its own, so that its peak RSS (getrusage's maxrss) is the sync's alone: the local index,
// one listing page, the plan. Prints the seeding time, the measured time, the requests by kind (POSTs must be 0),
// and the peak RSS; one JSON line at the end.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHost, stopHost } from '../../test/support/local-host';
import { Drive } from '../src/drive';
import { countingFetch, smallFiles, writeTree } from '../test/support/trees';

const KEY = 'bench-sync-key-7Hq2Lx9Vb4Nc8Zr1';

async function child(url: string, local: string): Promise<void> {
  const fetch = countingFetch();
  const drive = new Drive({ baseUrl: url, apiKey: KEY, fetch });
  const baselineRssMiB = process.resourceUsage().maxRSS / 1024;
  const started = process.hrtime.bigint();
  const report = await drive.sync(local, 'drive:/bench');
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  process.stdout.write(JSON.stringify({ ms, report: { ...report, failed: report.failed.length }, requests: fetch.byKind, maxRssMiB: process.resourceUsage().maxRSS / 1024, baselineRssMiB }));
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3], process.argv[4]);
  const n = Number(process.argv[2] ?? 10_000);
  const dir = await mkdtemp(join(tmpdir(), 'drive-bench-sync-'));
  const host = await startHost({ DRIVE_API_KEYS: `default:${KEY}` });
  try {
    const local = join(dir, 'tree');
    await writeTree(local, smallFiles(n, 100, 200));
    // Seeded in requests of 100 files: on a loaded 2-core host a 1,000-file request can outlive the host's
    // 29 s gateway limit (issue 26), and the seed is not what is measured.
    const drive = new Drive({ baseUrl: host.url, apiKey: KEY, maxFilesPerRequest: 100, concurrency: 2 });
    let started = Date.now();
    const seed = await drive.sync(local, 'drive:/bench');
    const seedSeconds = (Date.now() - started) / 1000;
    console.log(`seeded ${seed.transferred.files} files in ${seedSeconds.toFixed(1)} s (failed ${seed.failed.length})`);
    if (seed.failed.length > 0) throw new Error(`the seed failed for ${seed.failed.length} files, e.g. ${JSON.stringify(seed.failed[0].error)}`);

    started = Date.now();
    const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(__filename), '--child', host.url, local], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (run.status !== 0) throw new Error(`child failed: ${run.stderr}`);
    const measured = JSON.parse(run.stdout) as { ms: number; report: { unchanged: number; transferred: { files: number } }; requests: Record<string, number>; maxRssMiB: number; baselineRssMiB: number };
    console.log(`unchanged sync of ${n} files: ${(measured.ms / 1000).toFixed(1)} s in the sync, peak RSS ${measured.maxRssMiB.toFixed(0)} MiB (${measured.baselineRssMiB.toFixed(0)} MiB before it); unchanged ${measured.report.unchanged}, sent ${measured.report.transferred.files}`);
    console.log(`requests: ${JSON.stringify(measured.requests)}`);
    console.log(JSON.stringify({ bench: 'sync-unchanged', files: n, seedSeconds, syncSeconds: measured.ms / 1000, peakRssMiB: Number(measured.maxRssMiB.toFixed(1)), baselineRssMiB: Number(measured.baselineRssMiB.toFixed(1)), requests: measured.requests, unchanged: measured.report.unchanged, sent: measured.report.transferred.files }));
  } finally {
    await stopHost(host);
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

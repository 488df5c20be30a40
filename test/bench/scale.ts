import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { mapLimit } from '../../functions/core/concurrency';
import { listPage } from '../../functions/core/list-folder';
import { LOCAL_REGION, LOCAL_RESOURCES } from '../../lib/local/emulators';
import type { Credentials } from '../../lib/local/signed-gateway';
import { launchChromium } from '../support/browser';
import { removeDataDir } from '../support/local-host';
import { CallCounter } from './call-counter';
import { BENCH_KEY, DRIVE, benchDir, spawnUntil } from './environment';
import { Seeder } from './seed';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** The dashboard signs in with an admin key; the bench's own key is read-write. */
const ADMIN_KEY = 'scale-admin-key-AbJ9eQiGKwZ4ujW4Oc7R';

/**
 * `npm run bench -- --scale` (or `node --import tsx test/bench/scale.ts`): Drive as the drive grows. Storage
 * (embedded S3 and DynamoDB) and the host run in processes of their own, as in AWS, with the host enforcing
 * AWS's limits. Options: `--sizes=1000,10000,100000`, `--tree-folders=10000`, `--move-sizes=1000,10000`, `--delete-files=100000` (seeded through the API)
 * (0 skips the delete), `--kills=3`, `--out=scale-report.json`.
 *
 * - pages of 1,000 from folders of each size: time over HTTP (the median page) and DynamoDB calls (counted on the same store
 *   code the handler runs), and the ratio of the largest size's to the smallest's;
 * - the same for a recursive listing of a tree of `tree-folders` folders;
 * - the unpaged (streamed) listing of each folder;
 * - the host's CPU for each, and its memory growth during the unpaged listings;
 * - `drive ls -r` and `drive upload --skip-existing` on the largest folder (seconds, peak memory), and the dashboard
 *   opened on it in headless Chromium (time to the first rows, DOM size);
 * - a recursive delete of `delete-files` files, its host killed `kills` times on the way, to nothing.
 */
async function main(): Promise<void> {
  const args = new Map(process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => [a.slice(2).split('=')[0], a.split('=')[1] ?? '']));
  const sizes = (args.get('sizes') || '1000,10000,100000').split(',').map(Number);
  const treeFolders = Number(args.get('tree-folders') || 10_000);
  const deleteFiles = Number(args.get('delete-files') ?? 100_000);
  const moveSizes = (args.get('move-sizes') ?? '1000,10000').split(',').filter((v) => v !== '').map(Number);
  const kills = Number(args.get('kills') || 3);
  const out = resolve(args.get('out') || 'scale-report.json');
  const started = Date.now();

  const dataDir = await mkdtemp(join(benchDir(), 'drive-scale-'));
  const storage = await spawnUntil(['test/bench/storage-process.ts', join(dataDir, 'storage')], {}, /^(\{.*\})$/m);
  const endpoints = JSON.parse(storage.match) as { dynamodb: string; s3: string; credentials: Credentials };
  const config = { region: LOCAL_REGION, credentials: endpoints.credentials };
  const dynamodb = new DynamoDBClient({ ...config, endpoint: endpoints.dynamodb });
  const s3 = new S3Client({ ...config, endpoint: endpoints.s3, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  const counter = new CallCounter(dynamodb, s3);
  const nodes = new DynamoNodeStore(dynamodb, LOCAL_RESOURCES.nodesTable);
  const seeder = new Seeder(s3, dynamodb, LOCAL_RESOURCES.bucket, LOCAL_RESOURCES.nodesTable);
  let host = await startHost(dataDir, storage.match);

  try {
    const report: Record<string, unknown> = { date: new Date().toISOString() };
    log(`Seeding folders of ${sizes.join(', ')} file records and a tree of ${treeFolders} folders…`);
    for (const size of sizes) await seeder.flat(DRIVE, `/flat-${size}`, size);
    await seeder.tree(DRIVE, '/tree', treeFolders, 1);

    log('Pages of 1,000…');
    const pages = [];
    for (const size of sizes) pages.push({ what: `folder of ${size.toLocaleString('en')} files`, ...(await pageCost(host.url, host.child.pid!, counter, nodes, `/flat-${size}`, false)) });
    pages.push({ what: `tree of ${treeFolders.toLocaleString('en')} folders (recursive)`, ...(await pageCost(host.url, host.child.pid!, counter, nodes, '/tree', true)) });
    const smallest = pages[0];
    const largest = pages[sizes.length - 1];
    const ratio = { ms: largest.msPerPage / smallest.msPerPage, calls: largest.callsPerPage / smallest.callsPerPage };
    report.pages = pages;
    report.pageRatio = { ...ratio, target: 1.3, met: ratio.ms <= 1.3 && ratio.calls <= 1.3 };

    log('Unpaged listings (streamed)…');
    const unpaged = [];
    for (const size of sizes) unpaged.push({ what: `folder of ${size.toLocaleString('en')} files`, ...(await timed(host.url, host.child.pid!, `/drive/list?folder=/flat-${size}`)) });
    unpaged.push({ what: `tree of ${treeFolders.toLocaleString('en')} folders (recursive)`, ...(await timed(host.url, host.child.pid!, '/drive/list?folder=/tree&recursive=true')) });
    report.unpaged = unpaged;

    const biggest = `/flat-${Math.max(...sizes)}`;
    log(`The CLI and the dashboard on ${biggest}…`);
    report.cli = await cliAtScale(host.url, dataDir, `/flat-${Math.min(...sizes)}`, biggest);
    report.dashboard = await dashboardAtScale(host.url, biggest);

    if (moveSizes.length > 0) {
      log(`Folder moves of ${moveSizes.join(', ')} files…`);
      const moves = [];
      for (const size of moveSizes) {
        // Records only: a move copies no byte, so the records are what it works on.
        await seeder.flat(DRIVE, `/to-move-${size}/inner`, size);
        moves.push({ files: size, ...(await timedMove(host.url, host.child.pid!, `/to-move-${size}`, `/moved-${size}`)) });
      }
      report.moves = moves;
    }

    if (deleteFiles > 0) {
      const baseline = await countStored(dynamodb, join(dataDir, 'storage', 's3', LOCAL_RESOURCES.bucket), '/doomed');
      log(`Seeding ${deleteFiles.toLocaleString('en')} files with bytes for the delete…`);
      // Through the API, 100 files a request: the records and bytes as uploads make them.
      const requests = Array.from({ length: Math.ceil(deleteFiles / 100) }, (_, r) => r);
      await mapLimit(requests, 8, async (r) => {
        const form = new FormData();
        for (let i = 0; i < 100; i++) form.append('files', new Blob([`${r}-${i}`]), `f-${r}-${i}.txt`);
        form.append('metadata', JSON.stringify(Array.from({ length: 100 }, () => ({ folder: `/doomed/d${r % 100}` }))));
        const res = await fetch(`${host.url}/drive/upload`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${BENCH_KEY}` } });
        if (res.status !== 200) throw new Error(`seeding upload answered ${res.status}: ${await res.text()}`);
      });
      const bucketDir = join(dataDir, 'storage', 's3', LOCAL_RESOURCES.bucket);
      const before = await countStored(dynamodb, bucketDir, '/doomed');
      // Objects are named by id, not path: the drive's others (the CLI's uploads) are counted out.
      before.objects -= baseline.objects;
      log(`Deleting them, the host killed ${kills} times on the way…`);
      // The host's CPU over the delete (the worker runs in it), summed over each host the kills leave.
      let cpuSeconds = -(await processStats(host.child.pid!)).cpuSeconds;
      const t0 = Date.now();
      const answer = await fetch(`${host.url}/drive/folders?path=/doomed&recursive=true`, { method: 'DELETE', headers: { Authorization: `Bearer ${BENCH_KEY}` } });
      const body = (await answer.json()) as { data: { job?: { id: string } } };
      const killedAt: number[] = [];
      for (let kill = 0; kill < kills && answer.status === 202; kill++) {
        await sleep(5_000 + kill * 2_000);
        cpuSeconds += (await processStats(host.child.pid!)).cpuSeconds;
        host.child.kill('SIGKILL');
        await new Promise((done) => host.child.once('exit', done));
        killedAt.push(Math.round((Date.now() - t0) / 1000));
        host = await startHost(dataDir, storage.match);
        cpuSeconds -= (await processStats(host.child.pid!)).cpuSeconds;
      }
      const job = body.data.job ? await finished(host.url, body.data.job.id) : undefined;
      const seconds = (Date.now() - t0) / 1000;
      cpuSeconds += (await processStats(host.child.pid!)).cpuSeconds;
      const after = await countStored(dynamodb, bucketDir, '/doomed');
      after.objects -= baseline.objects;
      report.delete = { files: before.objects, records: before.records, status: answer.status, killedAtSeconds: killedAt, seconds, filesPerSecond: before.objects / seconds, cpuMsPer1000Files: (cpuSeconds * 1e6) / before.objects, job, left: after };
    }

    report.seconds = Math.round((Date.now() - started) / 1000);
    print(report);
    await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
    log(`Report written to ${out} (${report.seconds} s).`);
  } finally {
    host.child.kill('SIGTERM');
    storage.child.kill('SIGTERM');
    dynamodb.destroy();
    s3.destroy();
    await sleep(500);
    await removeDataDir(dataDir);
  }
}

/** The host in a process of its own over the shared storage, on the same data dir each time (its queue is there). */
async function startHost(dataDir: string, storage: string): Promise<{ url: string; child: ChildProcess }> {
  const { child, match } = await spawnUntil(['test/bench/host-process.ts', join(dataDir, 'host')], { DRIVE_STORAGE: storage, DRIVE_API_KEYS: `${DRIVE}:${BENCH_KEY},${DRIVE}:${ADMIN_KEY}:admin`, DRIVE_RATE_LIMITS: 'off' }, /listening on (http:\/\/\S+)/);
  return { url: match, child };
}

/**
 * Every page of 1,000 of `folder`: the mean time of a page over HTTP (the list function, streamed) and the
 * mean DynamoDB calls of a page (the same store code, counted here), and the most of either.
 */
async function pageCost(url: string, hostPid: number, counter: CallCounter, nodes: DynamoNodeStore, folder: string, recursive: boolean) {
  const times: number[] = [];
  let cpu = 0;
  // One request first, so that no page pays for the connection or the function's first call.
  await fetch(`${url}/drive/list?${new URLSearchParams({ folder, limit: '1' })}`, { headers: { Authorization: `Bearer ${BENCH_KEY}` } }).then((res) => res.arrayBuffer());
  let cursor: string | null = null;
  do {
    const t = process.hrtime.bigint();
    const before = await processStats(hostPid);
    const res = await fetch(`${url}/drive/list?${new URLSearchParams({ folder, limit: '1000', ...(recursive ? { recursive: 'true' } : {}), ...(cursor ? { cursor } : {}) })}`, { headers: { Authorization: `Bearer ${BENCH_KEY}` } });
    const page = (await res.json()) as { data: { next_cursor: string | null } };
    if (res.status !== 200) throw new Error(`list of ${folder} answered ${res.status}`);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    cpu += (await processStats(hostPid)).cpuSeconds - before.cpuSeconds;
    cursor = page.data.next_cursor;
  } while (cursor);
  const calls: number[] = [];
  let after: string | undefined;
  do {
    let next: string | undefined;
    const counted = await counter.during(async () => {
      next = (await listPage(nodes, DRIVE, folder, { recursive, limit: 1000, after })).after;
    });
    calls.push(Object.values(counted).reduce((a, b) => a + b, 0));
    after = next;
  } while (after !== undefined);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { pages: times.length, msPerPage: median(times), maxMsPerPage: Math.max(...times), cpuMsPerPage: (cpu * 1000) / times.length, callsPerPage: mean(calls), maxCallsPerPage: Math.max(...calls) };
}

/** One GET, read as it arrives: its status, time and bytes, and the host's CPU and resident memory meanwhile. */
async function timed(url: string, hostPid: number, path: string) {
  const before = await processStats(hostPid);
  let peak = before.rssMiB;
  const sampler = setInterval(() => void processStats(hostPid).then((stats) => (peak = Math.max(peak, stats.rssMiB)), () => undefined), 25);
  const t = Date.now();
  const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${BENCH_KEY}` } });
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  clearInterval(sampler);
  const after = await processStats(hostPid);
  return { status: res.status, seconds: (Date.now() - t) / 1000, megabytes: bytes / 1e6, cpuSeconds: after.cpuSeconds - before.cpuSeconds, rssGrowthMiB: Math.max(peak, after.rssMiB) - before.rssMiB };
}

/** A process's resident memory (MiB) and the CPU it has used (user + system, seconds), from /proc. */
async function processStats(pid: number): Promise<{ rssMiB: number; cpuSeconds: number }> {
  const [status, stat] = await Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')]);
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100 a second).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssMiB: Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024, cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
}

/** Runs the `drive` CLI under /usr/bin/time: exit code, stdout's lines (counted, not kept), its last line, seconds and peak resident memory. */
async function drive(url: string, args: string[]): Promise<{ code: number; lines: number; last: string; seconds: number; maxRssMiB: number }> {
  const t = Date.now();
  const child = spawn('/usr/bin/time', ['-f', 'maxrss-kb=%M', process.execPath, 'client/bin/drive.cjs', ...args], {
    env: { ...process.env, DRIVE_URL: url, DRIVE_API_KEY: BENCH_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let lines = 0;
  let last = '';
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    lines += parts.length;
    if (parts.length > 0) last = parts.at(-1)!;
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const code = await new Promise<number>((done) => child.once('close', (exit) => done(exit ?? 1)));
  const kb = Number(/maxrss-kb=(\d+)/.exec(stderr)?.[1] ?? NaN);
  if (code !== 0) throw new Error(`drive ${args.join(' ')} exited ${code}: ${stderr}`);
  return { code, lines, last, seconds: (Date.now() - t) / 1000, maxRssMiB: kb / 1024 };
}

/**
 * `drive ls -r` of the smallest and the largest folder (its memory should not grow with the folder), and
 * `drive upload --skip-existing` of 100 local files into the largest, twice: the first sends them, the second
 * skips them all after paging the folder's 100,000 entries.
 */
async function cliAtScale(url: string, dataDir: string, smallest: string, largest: string) {
  const local = join(dataDir, 'local-files');
  await mkdir(local, { recursive: true });
  await Promise.all(Array.from({ length: 100 }, (_, i) => writeFile(join(local, `extra-${String(i).padStart(3, '0')}.txt`), `extra ${i}\n`)));
  const lsSmall = await drive(url, ['ls', '-r', smallest]);
  const lsLarge = await drive(url, ['ls', '-r', largest]);
  const first = await drive(url, ['upload', local, '--to', largest, '--skip-existing']);
  const second = await drive(url, ['upload', local, '--to', largest, '--skip-existing']);
  return {
    ls: [
      { folder: smallest, lines: lsSmall.lines, seconds: lsSmall.seconds, maxRssMiB: lsSmall.maxRssMiB },
      { folder: largest, lines: lsLarge.lines, seconds: lsLarge.seconds, maxRssMiB: lsLarge.maxRssMiB },
    ],
    skipExisting: [
      { run: 'first', summary: first.last, seconds: first.seconds, maxRssMiB: first.maxRssMiB },
      { run: 'second', summary: second.last, seconds: second.seconds, maxRssMiB: second.maxRssMiB },
    ],
  };
}

/** The dashboard opened on `folder` in headless Chromium: time to its first rows, rows shown, and the page's DOM size. */
async function dashboardAtScale(url: string, folder: string) {
  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    await page.goto(`${url}/`);
    await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
    const t = Date.now();
    await page.goto(`${url}/#/files${folder}`);
    await page.locator('.listing tbody tr').first().waitFor();
    const firstRowsSeconds = (Date.now() - t) / 1000;
    const rows = await page.locator('.listing tbody tr').count();
    const domNodes = await page.evaluate('document.getElementsByTagName("*").length');
    return { folder, firstRowsSeconds, rows, domNodes: domNodes as number };
  } finally {
    await browser.close();
  }
}

/** Reads the job until it is done (the host may be starting again meanwhile). */
async function finished(url: string, id: string): Promise<unknown> {
  for (;;) {
    const res = await fetch(`${url}/drive/jobs/${id}`, { headers: { Authorization: `Bearer ${BENCH_KEY}` } }).catch(() => undefined);
    const job = res?.status === 200 ? ((await res.json()) as { data: { job: { status: string } } }).data.job : undefined;
    if (job?.status === 'done') return job;
    await sleep(1000);
  }
}

/** The records whose path starts with `prefix`, and every object of the bench's drive. */
async function countStored(dynamodb: DynamoDBClient, bucketDir: string, prefix: string): Promise<{ records: number; objects: number }> {
  const { ScanCommand } = await import('@aws-sdk/client-dynamodb');
  let records = 0;
  let start: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(new ScanCommand({ TableName: LOCAL_RESOURCES.nodesTable, FilterExpression: 'begins_with(#path, :prefix)', ExpressionAttributeNames: { '#path': 'path' }, ExpressionAttributeValues: { ':prefix': { S: prefix } }, ExclusiveStartKey: start }));
    records += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  // The objects, counted in the embedded S3's own folder (s3rver keeps each as `<key>._S3rver_object`).
  const objects = (await readdir(join(bucketDir, DRIVE)).catch(() => [] as string[])).filter((name) => name.endsWith('._S3rver_object')).length;
  return { records, objects };
}

function print(report: Record<string, unknown>): void {
  const pages = report.pages as { what: string; pages: number; msPerPage: number; maxMsPerPage: number; cpuMsPerPage: number; callsPerPage: number; maxCallsPerPage: number }[];
  console.log('\n| listing, pages of 1,000 | pages | ms a page (median / max) | host CPU ms a page | DynamoDB calls a page (mean / max) |\n|---|---:|---:|---:|---:|');
  for (const p of pages) console.log(`| ${p.what} | ${p.pages} | ${p.msPerPage.toFixed(0)} / ${p.maxMsPerPage.toFixed(0)} | ${p.cpuMsPerPage.toFixed(0)} | ${p.callsPerPage.toFixed(1)} / ${p.maxCallsPerPage} |`);
  const ratio = report.pageRatio as { ms: number; calls: number; met: boolean };
  console.log(`\nLargest folder's page over the smallest's: ${ratio.ms.toFixed(2)}× the time, ${ratio.calls.toFixed(2)}× the calls (target ≤ 1.3: ${ratio.met ? 'met' : 'NOT met'})`);
  console.log('\n| unpaged listing (streamed) | status | seconds | MB | host CPU s | host memory growth MiB |\n|---|---:|---:|---:|---:|---:|');
  for (const u of report.unpaged as { what: string; status: number; seconds: number; megabytes: number; cpuSeconds: number; rssGrowthMiB: number }[]) {
    console.log(`| ${u.what} | ${u.status} | ${u.seconds.toFixed(1)} | ${u.megabytes.toFixed(1)} | ${u.cpuSeconds.toFixed(2)} | ${u.rssGrowthMiB.toFixed(0)} |`);
  }
  const cli = report.cli as { ls: { folder: string; lines: number; seconds: number; maxRssMiB: number }[]; skipExisting: { run: string; summary: string; seconds: number; maxRssMiB: number }[] };
  console.log('\n| CLI | lines or summary | seconds | peak memory MiB |\n|---|---|---:|---:|');
  for (const l of cli.ls) console.log(`| drive ls -r ${l.folder} | ${l.lines.toLocaleString('en')} lines | ${l.seconds.toFixed(1)} | ${l.maxRssMiB.toFixed(0)} |`);
  for (const u of cli.skipExisting) console.log(`| drive upload --skip-existing (${u.run}) | ${u.summary.replace(/\|/g, '/')} | ${u.seconds.toFixed(1)} | ${u.maxRssMiB.toFixed(0)} |`);
  const dash = report.dashboard as { folder: string; firstRowsSeconds: number; rows: number; domNodes: number };
  console.log(`\nDashboard on ${dash.folder}: first rows in ${dash.firstRowsSeconds.toFixed(2)} s; ${dash.rows} rows shown; ${dash.domNodes.toLocaleString('en')} DOM elements`);
  const moves = report.moves as { files: number; status: number; seconds: number; filesPerSecond: number; cpuMsPer1000Files: number; filesMoved: number }[] | undefined;
  if (moves) {
    console.log('\n| folder move | answer | seconds | files/s | host CPU ms per 1,000 files | files moved |\n|---|---:|---:|---:|---:|---:|');
    for (const m of moves) console.log(`| ${m.files.toLocaleString('en')} files | ${m.status} | ${m.seconds.toFixed(1)} | ${m.filesPerSecond.toFixed(0)} | ${m.cpuMsPer1000Files.toFixed(0)} | ${m.filesMoved.toLocaleString('en')} |`);
  }
  const del = report.delete as { files: number; status: number; killedAtSeconds: number[]; seconds: number; filesPerSecond: number; cpuMsPer1000Files: number; left: { records: number; objects: number } } | undefined;
  if (del) {
    console.log(
      `\nRecursive delete of ${del.files.toLocaleString('en')} files: answered ${del.status}; host killed at ${del.killedAtSeconds.join(', ')} s; done in ${del.seconds.toFixed(0)} s ` +
        `(${del.filesPerSecond.toFixed(0)} files/s; host CPU ${del.cpuMsPer1000Files.toFixed(0)} ms per 1,000 files); left ${del.left.records} records and ${del.left.objects} objects`,
    );
  }
}

/** A folder move through the API, its job followed to the end: seconds, files a second, and the host's CPU per 1,000 files. */
async function timedMove(url: string, hostPid: number, from: string, to: string): Promise<{ status: number; seconds: number; filesPerSecond: number; cpuMsPer1000Files: number; filesMoved: number }> {
  const headers = { Authorization: `Bearer ${BENCH_KEY}`, 'Content-Type': 'application/json' };
  const cpuBefore = (await processStats(hostPid)).cpuSeconds;
  const t0 = Date.now();
  const res = await fetch(`${url}/drive/move`, { method: 'POST', headers, body: JSON.stringify({ from, to }) });
  const body = (await res.json()) as { data: { job?: { url: string } } };
  let filesMoved = -1;
  if (res.status === 202) {
    for (;;) {
      const job = (await (await fetch(body.data.job!.url, { headers })).json()) as { data: { job: { status: string; files_moved: number } } };
      if (job.data.job.status === 'done') {
        filesMoved = job.data.job.files_moved;
        break;
      }
      await sleep(200);
    }
  } else if (res.status !== 200) {
    throw new Error(`the move answered ${res.status}: ${JSON.stringify(body)}`);
  }
  const seconds = (Date.now() - t0) / 1000;
  const cpu = (await processStats(hostPid)).cpuSeconds - cpuBefore;
  const files = Number(from.split('-').at(-1));
  return { status: res.status, seconds, filesPerSecond: files / seconds, cpuMsPer1000Files: (cpu * 1e6) / files, filesMoved: filesMoved < 0 ? files : filesMoved };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function log(line: string): void {
  console.error(`[scale] ${line}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

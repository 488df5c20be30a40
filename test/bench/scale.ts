import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { mapLimit } from '../../functions/core/concurrency';
import { listPage } from '../../functions/core/list-folder';
import { LOCAL_REGION, LOCAL_RESOURCES } from '../../lib/local/emulators';
import type { Credentials } from '../../lib/local/signed-gateway';
import { removeDataDir } from '../support/local-host';
import { CallCounter } from './call-counter';
import { BENCH_KEY, DRIVE, benchDir, spawnUntil } from './environment';
import { Seeder } from './seed';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * `npm run bench -- --scale` (or `node --import tsx test/bench/scale.ts`): Drive as the drive grows. Storage
 * (embedded S3 and DynamoDB) and the host run in processes of their own, as in AWS, with the host enforcing
 * AWS's limits. Options: `--sizes=1000,10000,100000`, `--tree-folders=10000`, `--delete-files=100000` (seeded through the API)
 * (0 skips the delete), `--kills=3`, `--out=scale-report.json`.
 *
 * - pages of 1,000 from folders of each size: time over HTTP (the median page) and DynamoDB calls (counted on the same store
 *   code the handler runs), and the ratio of the largest size's to the smallest's;
 * - the same for a recursive listing of a tree of `tree-folders` folders;
 * - the unpaged (streamed) listing of each folder;
 * - a recursive delete of `delete-files` files, its host killed `kills` times on the way, to nothing.
 */
async function main(): Promise<void> {
  const args = new Map(process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => [a.slice(2).split('=')[0], a.split('=')[1] ?? '']));
  const sizes = (args.get('sizes') || '1000,10000,100000').split(',').map(Number);
  const treeFolders = Number(args.get('tree-folders') || 10_000);
  const deleteFiles = Number(args.get('delete-files') ?? 100_000);
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
    for (const size of sizes) pages.push({ what: `folder of ${size.toLocaleString('en')} files`, ...(await pageCost(host.url, counter, nodes, `/flat-${size}`, false)) });
    pages.push({ what: `tree of ${treeFolders.toLocaleString('en')} folders (recursive)`, ...(await pageCost(host.url, counter, nodes, '/tree', true)) });
    const smallest = pages[0];
    const largest = pages[sizes.length - 1];
    const ratio = { ms: largest.msPerPage / smallest.msPerPage, calls: largest.callsPerPage / smallest.callsPerPage };
    report.pages = pages;
    report.pageRatio = { ...ratio, target: 1.3, met: ratio.ms <= 1.3 && ratio.calls <= 1.3 };

    log('Unpaged listings (streamed)…');
    const unpaged = [];
    for (const size of sizes) unpaged.push({ what: `folder of ${size.toLocaleString('en')} files`, ...(await timed(host.url, `/drive/list?folder=/flat-${size}`)) });
    unpaged.push({ what: `tree of ${treeFolders.toLocaleString('en')} folders (recursive)`, ...(await timed(host.url, '/drive/list?folder=/tree&recursive=true')) });
    report.unpaged = unpaged;

    if (deleteFiles > 0) {
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
      const before = await countStored(dynamodb, join(dataDir, 'storage', 's3', LOCAL_RESOURCES.bucket), '/doomed');
      log(`Deleting them, the host killed ${kills} times on the way…`);
      const t0 = Date.now();
      const answer = await fetch(`${host.url}/drive/folders?path=/doomed&recursive=true`, { method: 'DELETE', headers: { Authorization: `Bearer ${BENCH_KEY}` } });
      const body = (await answer.json()) as { data: { job?: { id: string } } };
      const killedAt: number[] = [];
      for (let kill = 0; kill < kills && answer.status === 202; kill++) {
        await sleep(5_000 + kill * 2_000);
        host.child.kill('SIGKILL');
        await new Promise((done) => host.child.once('exit', done));
        killedAt.push(Math.round((Date.now() - t0) / 1000));
        host = await startHost(dataDir, storage.match);
      }
      const job = body.data.job ? await finished(host.url, body.data.job.id) : undefined;
      const seconds = (Date.now() - t0) / 1000;
      const after = await countStored(dynamodb, join(dataDir, 'storage', 's3', LOCAL_RESOURCES.bucket), '/doomed');
      report.delete = { files: before.objects, records: before.records, status: answer.status, killedAtSeconds: killedAt, seconds, filesPerSecond: before.objects / seconds, job, left: after };
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
  const { child, match } = await spawnUntil(['test/bench/host-process.ts', join(dataDir, 'host')], { DRIVE_STORAGE: storage, DRIVE_API_KEYS: `${DRIVE}:${BENCH_KEY}`, DRIVE_RATE_LIMITS: 'off' }, /listening on (http:\/\/\S+)/);
  return { url: match, child };
}

/**
 * Every page of 1,000 of `folder`: the mean time of a page over HTTP (the list function, streamed) and the
 * mean DynamoDB calls of a page (the same store code, counted here), and the most of either.
 */
async function pageCost(url: string, counter: CallCounter, nodes: DynamoNodeStore, folder: string, recursive: boolean) {
  const times: number[] = [];
  // One request first, so that no page pays for the connection or the function's first call.
  await fetch(`${url}/drive/list?${new URLSearchParams({ folder, limit: '1' })}`, { headers: { Authorization: `Bearer ${BENCH_KEY}` } }).then((res) => res.arrayBuffer());
  let cursor: string | null = null;
  do {
    const t = process.hrtime.bigint();
    const res = await fetch(`${url}/drive/list?${new URLSearchParams({ folder, limit: '1000', ...(recursive ? { recursive: 'true' } : {}), ...(cursor ? { cursor } : {}) })}`, { headers: { Authorization: `Bearer ${BENCH_KEY}` } });
    const page = (await res.json()) as { data: { next_cursor: string | null } };
    if (res.status !== 200) throw new Error(`list of ${folder} answered ${res.status}`);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
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
  return { pages: times.length, msPerPage: median(times), maxMsPerPage: Math.max(...times), callsPerPage: mean(calls), maxCallsPerPage: Math.max(...calls) };
}

/** One GET, read whole: its status, time and bytes. */
async function timed(url: string, path: string) {
  const t = Date.now();
  const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${BENCH_KEY}` } });
  const bytes = (await res.arrayBuffer()).byteLength;
  return { status: res.status, seconds: (Date.now() - t) / 1000, megabytes: bytes / 1e6 };
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
  const pages = report.pages as { what: string; pages: number; msPerPage: number; maxMsPerPage: number; callsPerPage: number; maxCallsPerPage: number }[];
  console.log('\n| listing, pages of 1,000 | pages | ms a page (median / max) | DynamoDB calls a page (mean / max) |\n|---|---:|---:|---:|');
  for (const p of pages) console.log(`| ${p.what} | ${p.pages} | ${p.msPerPage.toFixed(0)} / ${p.maxMsPerPage.toFixed(0)} | ${p.callsPerPage.toFixed(1)} / ${p.maxCallsPerPage} |`);
  const ratio = report.pageRatio as { ms: number; calls: number; met: boolean };
  console.log(`\nLargest folder's page over the smallest's: ${ratio.ms.toFixed(2)}× the time, ${ratio.calls.toFixed(2)}× the calls (target ≤ 1.3: ${ratio.met ? 'met' : 'NOT met'})`);
  console.log('\n| unpaged listing (streamed) | status | seconds | MB |\n|---|---:|---:|---:|');
  for (const u of report.unpaged as { what: string; status: number; seconds: number; megabytes: number }[]) console.log(`| ${u.what} | ${u.status} | ${u.seconds.toFixed(1)} | ${u.megabytes.toFixed(1)} |`);
  const del = report.delete as { files: number; status: number; killedAtSeconds: number[]; seconds: number; filesPerSecond: number; left: { records: number; objects: number } } | undefined;
  if (del) {
    console.log(`\nRecursive delete of ${del.files.toLocaleString('en')} files: answered ${del.status}; host killed at ${del.killedAtSeconds.join(', ')} s; done in ${del.seconds.toFixed(0)} s (${del.filesPerSecond.toFixed(0)} files/s); left ${del.left.records} records and ${del.left.objects} objects`);
  }
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

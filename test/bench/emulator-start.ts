import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3Object from 's3rver/lib/models/object';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { mapLimit } from '../../functions/core/concurrency';
import { LOCAL_RESOURCES, S3_WRITES_DIR, startEmulators } from '../../lib/local/emulators';

/**
 * `node --import tsx test/bench/emulator-start.ts [--objects 100000] [--data-dir <dir>]`: the embedded
 * emulators' start on a data dir of that many objects (seeded once, straight into s3rver's store, as Drive
 * lays them out: `<drive>/<uuid>`), timed and its CPU counted twice each way: without the write journal
 * (the data dir from before it, every object's metadata read, as each start did before) and with it.
 */
const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const objects = Number(arg('--objects') ?? 100_000);

async function seed(dataDir: string): Promise<void> {
  const store = new FilesystemStore(join(dataDir, 's3'));
  await store.putBucket(LOCAL_RESOURCES.bucket);
  const held = await readdir(join(dataDir, 's3', LOCAL_RESOURCES.bucket)).then((drives) => drives.length, () => 0);
  if (held > 0) return;
  const keys = Array.from({ length: objects }, (_, i) => `drive-${i % 4}/${randomUUID()}`);
  await mapLimit(keys, 32, async (key) => {
    await store.putObject(new S3Object(LOCAL_RESOURCES.bucket, key, Buffer.from(key), { 'content-type': 'application/octet-stream' }));
  });
}

async function timedStart(dataDir: string): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const emulators = await startEmulators(dataDir);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await emulators.close();
  return { wallMs: Math.round(wallMs), cpuMs: Math.round((used.user + used.system) / 1000) };
}

async function main(): Promise<void> {
  const given = arg('--data-dir');
  const dataDir = given ?? (await mkdtemp(join(tmpdir(), 'drive-start-')));
  try {
    const seeding = performance.now();
    await seed(dataDir);
    console.log(`seeded ${objects} objects in ${Math.round(performance.now() - seeding)} ms`);
    await timedStart(dataDir); // the tables made, the folders warmed in the page cache
    for (const round of [1, 2]) {
      await rm(join(dataDir, S3_WRITES_DIR), { recursive: true, force: true });
      console.log(JSON.stringify({ round, objects, journal: false, ...(await timedStart(dataDir)) }));
      console.log(JSON.stringify({ round, objects, journal: true, ...(await timedStart(dataDir)) }));
    }
  } finally {
    if (!given) await rm(dataDir, { recursive: true, force: true });
  }
}

void main();

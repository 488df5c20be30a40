import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DRIVE, FLOOR_DRIVE, startSeparated } from './environment';
import { load } from './load';
import { SCENARIOS, expectOk } from './scenarios';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * `BENCH_PROFILE_DIR=<dir> node --import tsx test/bench/profile-load.ts --only=download-4kib [--side=drive] [--ops=2000]`:
 * the separated layout with only what the named lines read, then `ops` operations of one side at 16 clients, so
 * that the host's and the storage's profiles hold the line's load and little else (no 10,000-file seed). Prints
 * CPU ms per operation of each process.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? ['download-4kib'];
  const side = (args.find((a) => a.startsWith('--side='))?.slice(7) ?? 'drive') as 'drive' | 'floor';
  const ops = Number(args.find((a) => a.startsWith('--ops='))?.slice(6) ?? 2000);
  const env = await startSeparated();
  try {
    const KiB4 = randomBytes(4 * 1024);
    const MiB1 = randomBytes(1024 * 1024);
    await expectOk(env.api.createFolder('/up'));
    await env.floor.createFolders(FLOOR_DRIVE, ['/up']);
    await expectOk(env.api.upload([{ data: KiB4, filename: '4k.bin' }, { data: MiB1, filename: '1m.bin' }], [{ folder: '/dl' }, { folder: '/dl' }]));
    await env.floor.upload(FLOOR_DRIVE, '/dl', [{ name: '4k.bin', data: KiB4 }, { name: '1m.bin', data: MiB1 }]);
    for (const drive of [DRIVE, FLOOR_DRIVE]) await env.seeder.flat(drive, '/list400', 400);
    for (const id of only) {
      const scenario = SCENARIOS.find((s) => s.id === id)!;
      const cpu = () => ({ client: process.cpuUsage(), host: ticks(env.pids.host), storage: ticks(env.pids.storage) });
      const before = cpu();
      const stats = await load(16, { maxOps: ops, seconds: 600, warmup: 10 }, (i) => scenario[side](env, 9_000_000 + i, 16));
      const after = cpu();
      const n = stats.ops + 10;
      const client = (after.client.user + after.client.system - before.client.user - before.client.system) / 1000 / n;
      console.log(`${id} ${side}: ${stats.opsPerSecond.toFixed(1)} ops/s; CPU ms/op client ${client.toFixed(2)}, host ${(((after.host - before.host) * 10) / n).toFixed(2)}, storage ${(((after.storage - before.storage) * 10) / n).toFixed(2)}`);
    }
  } finally {
    await env.close();
  }
}

function ticks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { removeDataDir } from '../support/local-host';
import { benchDir, handlerEnvironment, spawnUntil } from './environment';

/**
 * `node --import tsx test/bench/handler-alone.ts [--ops=200] [--bytes=1048576] [--rounds=2] [-- <node flags>]`:
 * the upload handler alone in a process of its own, as a Lambda container holds it, against the storage in
 * another: bundled by esbuild (packages left in node_modules) and through tsx, taking turns; each prints its CPU
 * per upload (median and mean), the full collections of its run and its heap. Node flags after `--` go to
 * both children (Lambda's own for a 1,024 MB function: `--max-semi-space-size=51 --max-old-space-size=922`).
 * It tells what of a 1 MiB upload's cost is the handler's heap, its loader, or the event itself
 * (docs/performance.md, "A full collection every few 1 MiB uploads").
 */
const ROOT = resolve(__dirname, '..', '..');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string, fallback: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
  const nodeFlags = args.includes('--') ? args.slice(args.indexOf('--') + 1) : [];
  const [ops, bytes, rounds] = [flag('ops', 200), flag('bytes', 1024 * 1024), flag('rounds', 2)];
  const dataDir = await mkdtemp(join(benchDir(), 'drive-handler-alone-'));
  const storage = await spawnUntil(['test/bench/storage-process.ts', join(dataDir, 'storage')], {}, /^(\{.*\})$/m);
  try {
    const endpoints = JSON.parse(storage.match) as { dynamodb: string; s3: string; credentials: { accessKeyId: string; secretAccessKey: string } };
    // Beside node_modules, where the bundle's packages are found.
    const bundle = join(ROOT, 'node_modules', '.cache', 'drive-bench', 'handler-alone-child.js');
    await build({ entryPoints: [join(ROOT, 'test/bench/handler-alone-child.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', packages: 'external', outfile: bundle, logLevel: 'error' });
    const env = { ...process.env, ...handlerEnvironment(endpoints, 'drive-upload'), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
    for (let round = 1; round <= rounds; round++) {
      for (const [label, run] of [['bundled', [bundle]], ['tsx', ['--import', 'tsx', join(ROOT, 'test/bench/handler-alone-child.ts')]]] as const) {
        await child([...nodeFlags, ...run], { ...env, HANDLER_ALONE: JSON.stringify({ accessTable: LOCAL_RESOURCES.accessTable, bytes, ops, label: `${label}, round ${round}` }) });
      }
    }
  } finally {
    storage.child.kill('SIGTERM');
    await new Promise((done) => storage.child.once('exit', done));
    await removeDataDir(dataDir);
  }
}

/** Runs one child to its end: its request log lines (stdout) dropped, its summary (stderr) shown. */
function child(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
    proc.once('exit', (code) => (code === 0 ? done() : fail(new Error(`the handler's process exited ${code}`))));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { build, type Plugin } from 'esbuild';
import { mkdir, readFile } from 'node:fs/promises';
import { isBuiltin, createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { BUNDLED_ENTRIES, PLAIN_ENTRIES, bundleFile } from './host-bundle-files';
import { CONTRACT_ROUTES, DASHBOARD_ROUTES, LINK_ROUTES, QUEUE_WORKERS, ROUTES, SCHEDULED, SEQUENCER, TOKEN_ROUTES } from '../../lib/routes';

// The local host as the suite runs it: one esbuild bundle of each entry a test starts (`bin/local.ts`, the fault
// host) and one of the storage thread, built once a run (Jest's globalSetup, test/host-bundle-setup.ts), instead
// of tsx transpiling and resolving Drive's modules at each of the suite's 60-odd host starts, on two threads
// (docs/testing.md, "Where the time goes"). The bundles hold Drive's own code only: packages are loaded from
// node_modules as `npm start` loads them. `npm start`, fsck and the other tools still run through tsx, as does
// `test/integration/host-start.test.ts`'s own start of `bin/local.ts`.

const ROOT = resolve(__dirname, '..', '..');

/**
 * Each module of Drive's keeps its own `__dirname` and `__filename` in the bundle (the host finds the handler
 * modules, the dashboard's files and the OpenAPI document by them), as it has them when tsx runs it.
 */
const ownPaths: Plugin = {
  name: 'own-paths',
  setup(plugin) {
    plugin.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const contents = source.replace(/\b__dirname\b/g, JSON.stringify(dirname(path))).replace(/\b__filename\b/g, JSON.stringify(path));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Packages stay outside the bundle, each required by the absolute path Node would resolve from the module that
 * names it (the workspaces' own node_modules included), so the bundle may live anywhere.
 */
const packagesWhereTheyAre: Plugin = {
  name: 'packages-where-they-are',
  setup(plugin) {
    plugin.onResolve({ filter: /^[^./]/ }, ({ path, importer, resolveDir }) => {
      if (isBuiltin(path) || importer === '') return undefined;
      return { path: createRequire(join(resolveDir, 'importer.js')).resolve(path), external: true };
    });
  },
};

/** Every module the host loads by path (lib/local/preloaded.ts), absolute path → a require the bundler follows. */
function preloadedModules(): string {
  const entries = [...ROUTES, ...LINK_ROUTES, ...TOKEN_ROUTES, ...CONTRACT_ROUTES, ...DASHBOARD_ROUTES, ...QUEUE_WORKERS, ...SCHEDULED, SEQUENCER].map((route) => route.entry);
  const paths = [...new Set([...entries, 'functions/wiring/guard.ts', 'functions/wiring/dynamodb.ts', 'functions/wiring/objects.ts', 'functions/wiring/job-queue.ts'])].map((entry) => join(ROOT, entry));
  return paths.map((path) => `  ${JSON.stringify(path)}: () => require(${JSON.stringify(path)}),`).join('\n');
}

/** Builds the bundles of `entries` into `dir` (made if missing); resolves once every file is in place. */
export async function buildHostBundle(dir: string, entries: readonly string[] = BUNDLED_ENTRIES): Promise<void> {
  await mkdir(dir, { recursive: true });
  const common = {
    bundle: true,
    platform: 'node' as const,
    format: 'cjs' as const,
    target: 'node20',
    sourcemap: 'linked' as const,
    sourcesContent: false,
    logLevel: 'error' as const,
    tsconfig: join(ROOT, 'tsconfig.json'),
    plugins: [ownPaths, packagesWhereTheyAre],
  };
  const worker = bundleFile(dir, 'lib/local/storage-worker.ts');
  await build({ ...common, entryPoints: [join(ROOT, 'lib/local/storage-worker.ts')], outfile: worker });
  const registry = `globalThis[Symbol.for('drive.local.preloaded')] = {\n storageWorker: ${JSON.stringify(worker)},\n modules: {\n${preloadedModules()}\n },\n};\n`;
  for (const entry of entries) {
    // An entry's `require.main === module` holds in its bundle too: esbuild leaves `module` the bundle's own.
    const run = `require(${JSON.stringify(join(ROOT, entry))});\n`;
    await build({
      ...common,
      // The registry first (but for a plain entry), then the entry itself, as `node --import tsx <entry>` would run it.
      stdin: { contents: `${PLAIN_ENTRIES.includes(entry) ? '' : registry}${run}`, resolveDir: ROOT, sourcefile: `bundle-of-${entry}`, loader: 'js' },
      outfile: bundleFile(dir, entry),
    });
  }
}

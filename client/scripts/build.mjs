// npm run build -w client: the ESM and CommonJS bundles of the library, the CLI, and the .d.ts files.
// `node scripts/build.mjs <outdir>` builds elsewhere (the build test does, so as not to race the CLI tests,
// which run the source while client/dist does not exist).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = resolve(process.argv[2] ?? join(root, 'dist'));
rmSync(outdir, { recursive: true, force: true });

// No runtime dependencies: everything but Node's own modules is bundled.
const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning', absWorkingDir: root };
await Promise.all([
  build({ ...common, entryPoints: ['src/index.ts'], format: 'esm', outfile: join(outdir, 'index.mjs') }),
  build({ ...common, entryPoints: ['src/index.ts'], format: 'cjs', outfile: join(outdir, 'index.cjs') }),
  build({ ...common, entryPoints: ['src/cli/main.ts'], format: 'cjs', outfile: join(outdir, 'cli.cjs') }),
]);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(outdir, 'types')], { stdio: 'inherit' });

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * Prints, for every handler module in functions/, the files of functions/ its bundle pulls in and their
 * size: the import closure a reader of that handler may have to open, and what its cold start loads besides
 * the SDK. Figures only, not a test. `node --import tsx test/bench/closure.ts [--files handler...]` lists the
 * files of the handlers named.
 */

const ROOT = resolve(__dirname, '..', '..');

interface Closure {
  handler: string;
  files: { path: string; bytes: number; lines: number }[];
}

/** The files of functions/ in the bundle of `handler`, in the order esbuild met them. */
export async function closureOf(handler: string): Promise<Closure> {
  const { metafile } = await build({
    entryPoints: [join(ROOT, 'functions', `${handler}.ts`)],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    metafile: true,
    logLevel: 'silent',
    // Packages are not the reader's to open; leaving them out also keeps this fast.
    packages: 'external',
  });
  const files = Object.keys(metafile.inputs)
    .filter((path) => path.startsWith('functions/'))
    .map((path) => {
      const text = readFileSync(join(ROOT, path), 'utf8');
      return { path, bytes: Buffer.byteLength(text), lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) };
    });
  return { handler, files };
}

/** Every handler module: the top-level .ts files of functions/ that export `handler`. */
function handlers(): string[] {
  const { readdirSync } = require('node:fs') as typeof import('node:fs');
  return readdirSync(join(ROOT, 'functions'))
    .filter((name) => name.endsWith('.ts') && /export const handler\b/.test(readFileSync(join(ROOT, 'functions', name), 'utf8')))
    .map((name) => name.replace(/\.ts$/, ''))
    .sort();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const listFiles = args[0] === '--files';
  const names = listFiles ? args.slice(1) : handlers();
  const rows = await Promise.all(names.map(closureOf));
  if (listFiles) {
    for (const { handler, files } of rows) {
      console.log(`${handler}: ${files.length} files, ${files.reduce((n, f) => n + f.lines, 0)} lines`);
      for (const file of files) console.log(`  ${String(file.lines).padStart(5)}  ${file.path}`);
    }
    return;
  }
  console.log(`${'handler'.padEnd(20)} ${'files'.padStart(5)} ${'lines'.padStart(6)} ${'bytes'.padStart(7)}`);
  for (const { handler, files } of rows) {
    const lines = files.reduce((n, f) => n + f.lines, 0);
    const bytes = files.reduce((n, f) => n + f.bytes, 0);
    console.log(`${handler.padEnd(20)} ${String(files.length).padStart(5)} ${String(lines).padStart(6)} ${String(bytes).padStart(7)}`);
  }
}

if (require.main === module) void main();

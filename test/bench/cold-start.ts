import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { BUNDLING } from '../../lib/drive-function';
import { ROUTES } from '../../lib/routes';

const ROOT = resolve(__dirname, '..', '..');
const IMPORT_RUNS = 7;

export interface ColdStart {
  handler: string;
  bundleBytes: number;
  sdkClients: string[];
  importMs: number;
  bareClientsImportMs: number;
  ratio: number;
}

/**
 * Bundles each handler as the stack does and measures its import in fresh Node processes (the median of
 * several) against a bundle of just the SDK clients it constructs.
 */
export async function measureColdStarts(): Promise<ColdStart[]> {
  const dir = await mkdtemp(join(tmpdir(), 'drive-cold-'));
  try {
    const results: ColdStart[] = [];
    for (const route of ROUTES.filter((r, i) => ROUTES.findIndex((other) => other.handler === r.handler) === i)) {
      const out = join(dir, `${route.handler}.mjs`);
      const { metafile } = await build({ ...esbuildOptions(), entryPoints: [join(ROOT, route.entry)], outfile: out, metafile: true });
      const sdkClients = [...new Set(Object.keys(metafile.inputs).flatMap((input) => /@aws-sdk\/(client-[a-z0-9-]+|lib-[a-z-]+)\//.exec(input)?.[1] ?? []))].sort();

      const bare = join(dir, `${route.handler}-bare.mjs`);
      const entry = join(dir, `${route.handler}-bare-entry.mjs`);
      await writeFile(
        entry,
        sdkClients
          .map((client) => {
            const name = ({ 'client-s3': 'S3Client', 'client-sqs': 'SQSClient' } as Record<string, string>)[client] ?? 'DynamoDBClient';
            return `import { ${name} } from '@aws-sdk/${client}';\nexport const ${name.toLowerCase()} = new ${name}({});\n`;
          })
          .join(''),
      );
      await build({ ...esbuildOptions(), entryPoints: [entry], outfile: bare, nodePaths: [join(ROOT, 'node_modules')] });

      const [importMs, bareClientsImportMs] = medianImports([out, bare]);
      results.push({ handler: route.handler, bundleBytes: (await stat(out)).size, sdkClients, importMs, bareClientsImportMs, ratio: importMs / bareClientsImportMs });
    }
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function esbuildOptions() {
  return {
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    target: BUNDLING.target,
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    mainFields: BUNDLING.mainFields,
    banner: { js: BUNDLING.banner! },
    logLevel: 'silent' as const,
  };
}

// What the Lambda runtime gives a module before it is imported: its globals and the stack's environment.
const PRELUDE = `
globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', DRIVE_NODES_TABLE: 'n', DRIVE_ACCESS_TABLE: 'a', DRIVE_BUCKET: 'b', DRIVE_UPLOADS_TABLE: 'u', DRIVE_CHANGES_TABLE: 'c', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
`;

/** The median import time of each file, each in fresh processes, the files taking turns so that a change in the machine's load falls on all alike. */
function medianImports(files: string[]): number[] {
  const times = files.map(() => [] as number[]);
  for (let run = 0; run < IMPORT_RUNS; run++) {
    files.forEach((file, i) => {
      const script = `${PRELUDE}
const t = performance.now();
await import(${JSON.stringify(`file://${file}`)});
console.log(performance.now() - t);`;
      times[i].push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim()));
    });
  }
  return times.map((list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)]);
}

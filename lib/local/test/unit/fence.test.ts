import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// The fence around the local host: its files reach Drive only through what AWS itself reads of it, and the
// rest comes in through `LocalDomain` (lib/local/domain.ts), which the root builds (lib/local-host.ts).

const PACKAGE = resolve(__dirname, '..', '..');
const ROOT = resolve(PACKAGE, '..', '..');

/**
 * What a file of the package may import from outside it, as paths from the project root without extension:
 * - the route table (lib/routes.ts, from functions/http/routes.ts) and the functions' sizing and API
 *   Gateway's limits (lib/aws-limits.ts): what the CDK stack reads to make the API and its functions;
 * - the settings table (functions/config.ts) and the table schema (functions/aws/schema.ts), as the stack does;
 * - functions/http/cors.ts, as the stack does: the preflight API Gateway answers, with the functions' origins;
 * - the exceptions, the functions' telemetry formats, which hold no rule of the domain:
 *   functions/telemetry/log.ts (the JSON line the host logs a failed invocation in, as a function would) and
 *   functions/telemetry/trace.ts (the X-Ray trace header read and the segment timed, as Lambda's runtime does).
 * The handler modules are imported by the route table's `entry`, as Lambda loads them, never by name.
 */
const ALLOWED = ['lib/routes', 'lib/aws-limits', 'functions/config', 'functions/aws/schema', 'functions/http/cors', 'functions/telemetry/log', 'functions/telemetry/trace'];

/** The package's source files: every .ts file but its tests. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'test' || entry.name === 'node_modules' ? [] : sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative module specifiers a file imports, statically or with `import()` / `require()`. */
function relativeImports(text: string): string[] {
  const found = text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]*)['"]/gm);
  return [...found].map((match) => match[1]);
}

/** Where a file of the package reaches outside it other than through ALLOWED. */
function breaches(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const outside = relativeImports(text)
    .map((specifier) => relative(ROOT, resolve(dirname(file), specifier)).replace(/\.(ts|js)$/, ''))
    .filter((target) => !target.startsWith('lib/local/') && !ALLOWED.includes(target));
  // A path to the domain built at run time (`join(root, 'functions/…')`) reaches past the fence as well.
  const built = [...text.matchAll(/['"`](functions\/[^'"`]*)['"`]/g)].map((match) => match[1]);
  return [...outside, ...built];
}

it('lets no file of the local host import Drive beyond the route table, the settings, the schema and the listed exceptions', () => {
  const files = sources(PACKAGE);
  expect(files.length).toBeGreaterThan(15);
  const found = Object.fromEntries(files.map((file) => [relative(ROOT, file), breaches(file)]).filter(([, list]) => list.length > 0));
  expect(found).toEqual({});
});

it('catches each way of importing that the scan knows', () => {
  const text = [
    "import { a } from '../../functions/core/access';",
    "import type { B } from '../../functions/core/ports';",
    "const c = await import('../../functions/openapi/document.js');",
    "const d = require('../../functions/wiring/guard');",
    "import '../../functions/side-effect';",
  ].join('\n');
  expect(relativeImports(text)).toEqual(['../../functions/core/access', '../../functions/core/ports', '../../functions/openapi/document.js', '../../functions/wiring/guard', '../../functions/side-effect']);
});

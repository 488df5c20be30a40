/**
 * The docs smoke test: the README and every page under docs/ link only inside the repository, and every
 * command they show runs. Fenced blocks tagged `sh` (or `bash`) run, in order, one bash script per page,
 * against a fresh local host; `curl` fails on any 4xx or 5xx. Blocks tagged `sh aws` (need an AWS account)
 * or `sh long` (minutes long: the whole test suite, the benchmarks, a synth) do not run here, but each
 * `npm run <script>` they (or any inline code) name must exist. Two placeholders are filled in, as a reader
 * would: `http://127.0.0.1:3000` is the host's address, `drv_…` its admin key.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_OPTIONS } from '../../client/src/drive';
import { ROLES, ROLE_PERMISSIONS } from '../../functions/core/access';
import { ROUTES } from '../../lib/routes';
import { runFsck } from '../support/fsck';
import { HOST_BUNDLE_ENV, bundleFile } from '../support/host-bundle-files';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const ROOT = resolve(__dirname, '..', '..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
/** Tags of blocks that are shell but do not run here, and why. */
const NOT_RUN = {
  aws: 'needs an AWS account',
  cloud: "runs inside a cloud job (Cloud Run, GKE, ECS), asking its platform for an identity token",
  long: 'minutes long, or serves until stopped; CI or a benchmark runs it',
  writes: "rewrites files of the clone; the test that checks those files runs the same code",
  installs: 'installs a command for the whole machine; client/test/build installs the packed tarball into a scratch prefix',
} as const;

interface Block {
  page: string;
  line: number;
  info: string;
  text: string;
}

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    blocks.push({ page, line: start + 1, info: open[1].trim(), text: body.join('\n') });
  }
  return blocks;
}

/** What a runnable block must not do: the blocks run with the clone as their project, so an install there, or a deploy, would be real. */
const RISKY = /\b(npm (ci|install|i|uninstall|update)\b|cdk (deploy|destroy|bootstrap)|aws |git )|(?<!drive )\brm -r/;

const isShell = (block: Block) => /^(sh|bash)(\s|$)/.test(block.info);
const runs = (block: Block) => block.info === 'sh' || block.info === 'bash';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.*)$/gm)].map((match) => slug(match[1])));
}

/** Text outside fenced blocks, where links live. */
const prose = (page: string) => readFileSync(join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');

describe('the README and docs/', () => {
  it.each(PAGES)('%s links only to files and headings inside the repository', (page) => {
    const problems: string[] = [];
    const text = prose(page);
    for (const match of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        problems.push(`${target}: outside the repository`);
        continue;
      }
      const [path, anchor] = target.split('#');
      const file = path ? resolve(ROOT, dirname(page), path) : join(ROOT, page);
      if (relative(ROOT, file).startsWith('..')) problems.push(`${target}: outside the repository`);
      else if (!existsSync(file)) problems.push(`${target}: no such file`);
      else if (anchor && statSync(file).isFile() && file.endsWith('.md') && !anchorsOf(file).has(anchor)) problems.push(`${target}: no such heading`);
    }
    for (const match of text.matchAll(/<(https?:[^>]+)>/g)) problems.push(`${match[1]}: outside the repository`);
    if (text.includes('../shared')) problems.push('names ../shared, which a clone does not have');
    expect(problems).toEqual([]);
  });

  it('tags every shell block it does not run with a reason, and names only npm scripts that exist', () => {
    const scripts = {
      root: Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts),
      client: Object.keys(JSON.parse(readFileSync(join(ROOT, 'client', 'package.json'), 'utf8')).scripts),
    };
    const problems: string[] = [];
    for (const page of PAGES) {
      for (const block of blocksOf(page).filter(isShell)) {
        const tag = block.info.split(/\s+/)[1];
        if (tag !== undefined && !(tag in NOT_RUN)) problems.push(`${page}:${block.line}: unknown tag "${tag}" (run it, or tag it ${Object.keys(NOT_RUN).join(' or ')})`);
      }
      const everything = readFileSync(join(ROOT, page), 'utf8');
      for (const match of everything.matchAll(/npm run(?: -s)? ([a-z][\w-]*(?::[\w-]+)*)(?: -w (\w+))?/g)) {
        const known = match[2] === 'client' ? scripts.client : scripts.root;
        if (!known.includes(match[1])) problems.push(`${page}: npm run ${match[1]} is no script${match[2] ? ` of ${match[2]}` : ''}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

/**
 * A command that runs the package named `drive` from the registry wherever the workspace's bin is not
 * installed: outside the clone, `npx drive` fetched an unrelated public package of that name.
 */
const REGISTRY_DRIVE = /\b(?:npx|npm\s+(?:exec|x))\s+(?:-\S+\s+)*(?:--\s+)?(?:drive|@drive\/client)(?![\w./-])/;

/** The role table docs/keys-and-roles.md must hold: one row per route, from the code's own tables. */
function rolesTable(): string {
  const head = `| route | ${ROLES.map((role) => `\`${role}\``).join(' | ')} |`;
  const rule = `|---|${ROLES.map(() => '---|').join('')}`;
  const rows = ROUTES.map((route) => `| \`${route.method} ${route.path}\` | ${ROLES.map((role) => (ROLE_PERMISSIONS[role].includes(route.permission) ? 'yes' : 'no')).join(' | ')} |`);
  return [head, rule, ...rows].join('\n');
}

/** `4 MiB`, `4,500,000 bytes`, `1,000` as a number, or undefined for a default that is not a size or a count. */
function documentedNumber(text: string): number | undefined {
  const match = /^([\d,]+(?:\.\d+)?)(?:\s*(MiB|KiB|bytes))?$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { MiB: 1024 * 1024, KiB: 1024, bytes: 1 }[match[2] ?? 'bytes']!;
  return Number(match[1].replaceAll(',', '')) * unit;
}

describe('what the docs say of the code', () => {
  it('shows no command that could run a stranger\'s `drive` package from the registry', () => {
    const found = PAGES.flatMap((page) =>
      readFileSync(join(ROOT, page), 'utf8')
        .split('\n')
        .flatMap((line, i) => (REGISTRY_DRIVE.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('lists in docs/keys-and-roles.md what each role may call, as ROLE_PERMISSIONS and ROUTES decide it', () => {
    const text = readFileSync(join(ROOT, 'docs', 'keys-and-roles.md'), 'utf8');
    const table = /<!-- roles table:[^>]*-->\n([\s\S]*?)\n<!-- end of roles table -->/.exec(text)?.[1];
    // On a change of roles or routes, paste what this expects between the markers.
    expect(table).toBe(rolesTable());
  });

  it("states the client's defaults in docs/client.md as the client has them", () => {
    const text = readFileSync(join(ROOT, 'docs', 'client.md'), 'utf8');
    const stated: Record<string, number | undefined> = {};
    for (const row of text.matchAll(/^\| (`\w+`(?:, `\w+`)*) \| ([^|]+) \|/gm)) {
      const names = [...row[1].matchAll(/`(\w+)`/g)].map((name) => name[1]);
      const values = row[2].split(/,\s+/);
      names.forEach((name, i) => (stated[name] = values.length === names.length ? documentedNumber(values[i]) : undefined));
    }
    const expected = Object.fromEntries(Object.entries(DEFAULT_OPTIONS));
    expect(Object.fromEntries(Object.keys(DEFAULT_OPTIONS).map((name) => [name, stated[name]]))).toEqual(expected);
  });

  it('states the upload request limit in bytes, never as 4.5 MiB (4,500,000 bytes is 4.29 MiB)', () => {
    const found = PAGES.filter((page) => /4\.5\s*MiB/.test(readFileSync(join(ROOT, page), 'utf8')));
    expect(found).toEqual([]);
  });

  it('says a test is skipped only while one is', () => {
    const claims = PAGES.filter((page) => /skipped \(`(?:test|it|describe)\.skip`\)/.test(readFileSync(join(ROOT, page), 'utf8')));
    const skipping = ['test', 'client/test'].flatMap((dir) => testFiles(join(ROOT, dir))).filter((file) => /\b(?:test|it|describe)\.skip\(/.test(readFileSync(file, 'utf8')));
    if (skipping.length === 0) expect(claims).toEqual([]);
  });
});

/** A folder for the front of PATH, in `scratch`: with a `drive` that runs this run's bundle of the bin, if there is one (else empty). */
async function driveOnPath(scratch: string): Promise<string> {
  const bin = join(scratch, 'bin');
  await mkdir(bin, { recursive: true });
  const bundles = process.env[HOST_BUNDLE_ENV];
  if (bundles) {
    await writeFile(join(bin, 'drive'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bundleFile(bundles, 'client/bin/drive.cjs'))} "$@"\n`);
    await chmod(join(bin, 'drive'), 0o755);
  }
  return bin;
}

/** Every `*.test.ts` below `dir`. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('every command in the docs', () => {
  const secret = `drv_${randomBytes(32).toString('base64url')}`;
  const scratch = join(ROOT, '.docs-smoke');
  let host: RunningHost;

  beforeAll(async () => {
    // Every recursive delete a job, so that the job examples have one to read.
    host = await startHost({ DRIVE_API_KEYS: `default:${secret}:admin`, DRIVE_DELETE_BUDGET_MS: '0' });
    await rm(scratch, { recursive: true, force: true });
  });

  afterAll(async () => {
    await stopHost(host);
    await rm(scratch, { recursive: true, force: true });
  });

  const runnable = PAGES.filter((page) => blocksOf(page).some(runs));

  it('runs on some pages at least', () => {
    expect(runnable).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/client.md', 'docs/large-files.md', 'docs/keys-and-roles.md']));
  });

  it('runs nothing that changes the clone or an AWS account', () => {
    const found = PAGES.flatMap((page) => blocksOf(page).filter(runs)).filter((block) => RISKY.test(block.text));
    expect(found.map((block) => `${block.page}:${block.line}`)).toEqual([]);
  });

  it.each(runnable)('%s: its commands run against npm start, with every curl answered 2xx or 3xx', async (page) => {
    if (blocksOf(page).filter(runs).some((block) => RISKY.test(block.text))) throw new Error(`${page}: a block would change the clone or an AWS account; tag it sh aws or sh long`);
    const dir = join(scratch, page.replace(/\W/g, '-'));
    await mkdir(dir, { recursive: true });
    const script = [
      'set -euo pipefail',
      // A reader sees the answer; the test also sees a 4xx or 5xx as a failure.
      'curl() { command curl --fail-with-body -sS "$@"; }',
      ...blocksOf(page)
        .filter(runs)
        .map((block) => `# ${page}:${block.line}\n${block.text}`),
    ]
      .join('\n')
      .replaceAll('http://127.0.0.1:3000', host.url)
      .replaceAll('drv_…', secret);
    // `drive` on the PATH, as the docs' install (`npm install -g ./client`) leaves it: the workspace's own bin,
    // or this run's bundle of it where Jest's globalSetup built one (the same source, without tsx's start in each
    // of client.md's 22 runs: client/test/support/cli-process.ts runs the CLI tests' the same way).
    const PATH = `${await driveOnPath(scratch)}:${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
    const env = { ...process.env, PATH, DRIVE_DATA_DIR: host.dataDir, DRIVE_CLI_SOURCE: '1', NO_COLOR: '1' };
    try {
      await promisify(execFile)('bash', ['-c', script], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      throw new Error(`${page}: exit ${failed.code}\n--- stdout (end)\n${failed.stdout.slice(-3000)}\n--- stderr\n${failed.stderr.slice(-3000)}`);
    }
  });

  it("runs the key command the dashboard's sign-in page tells a user to run", async () => {
    const page = readFileSync(join(ROOT, 'dashboard', 'index.html'), 'utf8');
    const command = /<code>(npm run keys -- [^<]+)<\/code>/.exec(page)?.[1];
    expect(command).toBeDefined();
    const env = { ...process.env, DRIVE_DATA_DIR: host.dataDir };
    const { stdout } = await promisify(execFile)('bash', ['-c', command!], { cwd: ROOT, env });
    expect(stdout).toMatch(/^drv_\S+$/m);
  });

  it('leaves the drive consistent: fsck finds nothing', async () => {
    const fsck = await runFsck(host.dataDir);
    expect(fsck.output).not.toMatch(/orphaned objects: [1-9]/i);
    expect(fsck.code).toBe(0);
  });
});

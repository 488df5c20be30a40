import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type RunningHost, sharedHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import { driveEnv, runCli } from '../support/cli-process';
import { type TreeFile, writeTree } from '../support/trees';

const KEY = 'client-cli-key-oFGRbyvwuP5fmk1g';
const ROOT = resolve(__dirname, '..', '..', '..');

let host: RunningHost;
let dir: string;
let tree: TreeFile[];
let env: Record<string, string>;

beforeAll(async () => {
  // The worker's host for files with the spec's rate limits (`sharedHost`); the drive is this file's own, and
  // `output()` is the host's log from this file's start.
  host = await sharedHost({ DRIVE_API_KEYS: `client-cli:${KEY}` });
  env = driveEnv(host.url, KEY);
  dir = await mkdtemp(join(tmpdir(), 'drive-cli-'));
  tree = await writeTree(join(dir, 'out'), [
    { relative: 'report.csv', size: 1200 },
    { relative: '2026/01/a.bin', size: 5000 },
    { relative: '2026/01/b.bin', size: 0 },
    { relative: '2026/02/c.bin', size: 70_000 },
  ]);
});

afterAll(async () => {
  await stopHost(host);
  await rm(dir, { recursive: true, force: true });
});

interface UploadJson {
  ok: boolean;
  uploaded: { local: string; path: string; size: number; id: string }[];
  skipped: unknown[];
  failed: { path: string; code: string; status: number; message: string }[];
  planned?: { path: string }[];
  requests: number;
}

describe('drive CLI against the local host', () => {
  it('runs as `npx drive` from the repository root (the workspace links its bin)', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'drive', '--version'], { cwd: ROOT, env: { ...process.env, DRIVE_CLI_SOURCE: '1' } });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('exits 2 naming what is missing when neither DRIVE_URL nor --url is set', async () => {
    const run = await runCli(['ls'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('set DRIVE_URL or pass --url');
  });

  it('exits 2 with a one-line usage error pointing at --help (not the whole help) on an unknown flag', async () => {
    const run = await runCli(['upload', '--bogus', 'x'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("drive: Unknown option '--bogus' (see drive --help)\n");
  });

  it('--dry-run says what it would send and sends none of it', async () => {
    const run = await runCli(['upload', join(dir, 'out'), '--to', '/dry', '--dry-run', '--json'], env);
    expect(run.code).toBe(0);
    expect(run.json<UploadJson>().planned!.map((file) => file.path)).toEqual(['/dry/2026/01/a.bin', '/dry/2026/01/b.bin', '/dry/2026/02/c.bin', '/dry/report.csv']);
    expect((await runCli(['ls', '/dry'], env)).stderr).toContain('not_found');
  });

  it('uploads a directory keeping its tree, with one JSON document for scripts', async () => {
    // Act
    const run = await runCli(['upload', join(dir, 'out'), '--to', '/cli', '--json'], env);

    // Assess
    expect(run.code).toBe(0);
    const result = run.json<UploadJson>();
    expect(result.ok).toBe(true);
    expect(result.failed).toEqual([]);
    expect(result.uploaded.map((file) => [file.path, file.size]).sort()).toEqual([
      ['/cli/2026/01/a.bin', 5000],
      ['/cli/2026/01/b.bin', 0],
      ['/cli/2026/02/c.bin', 70_000],
      ['/cli/report.csv', 1200],
    ]);
    expect(result.requests).toBe(1);
  });

  it('prints a line per file and a summary when stdout is not a terminal', async () => {
    const run = await runCli(['upload', join(dir, 'out', 'report.csv'), '--to', '/plain'], env);
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toMatch(/^uploaded \/plain\/report.csv \(1.2 KiB\)\nuploaded 1 file\(s\) \(1.2 KiB\), skipped 0, failed 0 in [\d.]+ s; 1 HTTP requests/);
  });

  it('ls lists a folder, -r every depth, --json the API’s listing', async () => {
    const plain = await runCli(['ls', '/cli'], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout.toString().trim().split('\n').map((line) => line.trim().split(/\s+/).at(-1))).toEqual(['/cli/2026/', '/cli/report.csv']);

    // Without --json, -r comes a page at a time, depth first: every path once.
    const paged = await runCli(['ls', '-r', '/cli'], env);
    for (const path of ['/cli/2026/', '/cli/2026/01/', '/cli/2026/01/a.bin', '/cli/2026/01/b.bin', '/cli/2026/02/c.bin', '/cli/report.csv']) {
      expect(paged.stdout.toString().split('\n').filter((line) => line.endsWith(` ${path}`) || line.endsWith(`  ${path}`))).toHaveLength(1);
    }
    const deep = await runCli(['ls', '-r', '/cli', '--json'], env);
    const listing = deep.json<{ folder: string; files: { path: string }[]; folders: { path: string }[] }>();
    expect(listing.folder).toBe('/cli');
    expect(listing.files.map((file) => file.path)).toEqual(['/cli/2026/01/a.bin', '/cli/2026/01/b.bin', '/cli/2026/02/c.bin', '/cli/report.csv']);
    expect(listing.folders.map((folder) => folder.path)).toEqual(['/cli/2026', '/cli/2026/01', '/cli/2026/02']);
  });

  it('get writes a file to -o, or to stdout with -o -, byte for byte', async () => {
    const to = join(dir, 'got.bin');
    const saved = await runCli(['get', '/cli/2026/02/c.bin', '-o', to, '--json'], env);
    expect(saved.code).toBe(0);
    expect(saved.json()).toMatchObject({ path: '/cli/2026/02/c.bin', to, size: 70_000, etag: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const original = await readFile(tree.find((file) => file.relative === '2026/02/c.bin')!.local);
    expect((await readFile(to)).equals(original)).toBe(true);

    const piped = await runCli(['get', '/cli/2026/02/c.bin', '-o', '-'], env);
    expect(piped.code).toBe(0);
    expect(piped.stdout.equals(original)).toBe(true);
  });

  it('get of a file over 10 MB reads it straight from storage, after one request to the API (redirect_above)', async () => {
    // Prepare: one byte over the client's directDownloadBytes.
    const bytes = randomBytes(10_000_001);
    await new Drive({ baseUrl: host.url, apiKey: KEY }).upload({ path: '/big/big.bin', data: bytes });
    const before = host.output().split('\n').length;
    const to = join(dir, 'big.bin');

    // Act
    const run = await runCli(['get', '/big/big.bin', '-o', to, '--json'], env);

    // Assess: the bytes, and the host's request lines up to a barrier request (each line is written as its
    // answer ends, so the barrier's stands after every line of the get): one download, the 307.
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ path: '/big/big.bin', size: bytes.length, direct: true });
    expect((await readFile(to)).equals(bytes)).toBe(true);
    const barrier = await fetch(`${host.url}/drive/list?folder=/big`, { headers: { Authorization: `Bearer ${KEY}` } });
    await barrier.text();
    const id = barrier.headers.get('x-request-id')!;
    let lines: string[] = [];
    for (let i = 0; i < 50 && !lines.some((line) => line.includes(`"request_id":"${id}"`)); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      lines = host.output().split('\n').slice(before - 1);
    }
    const downloads = lines.filter((line) => line.includes('"message":"request"') && line.includes('"route":"/drive/download"'));
    expect(downloads.map((line) => (JSON.parse(line.slice(line.indexOf('{'))) as { status: number }).status)).toEqual([307]);
  });

  it('get of a missing file exits 1 with the API’s code', async () => {
    const run = await runCli(['get', '/cli/nope.txt', '-o', join(dir, 'nope'), '--json'], env);
    expect(run.code).toBe(1);
    expect(run.json()).toEqual({ error: { code: 'not_found', message: expect.any(String), status: 404 } });
  });

  it('mkdir creates folders with their parents, and again is fine', async () => {
    const first = await runCli(['mkdir', '/made/a/b', '/made/c', '--json'], env);
    expect(first.code).toBe(0);
    expect(first.json<{ folders: { path: string }[] }>().folders.map((folder) => folder.path)).toEqual(['/made/a/b', '/made/c']);
    expect((await runCli(['mkdir', '/made/a/b'], env)).code).toBe(0);
  });

  it('exits 1 with a summary naming the file that failed (a folder at its destination), and stores the others', async () => {
    // Prepare: a folder where report.csv would go.
    expect((await runCli(['mkdir', '/clash/report.csv'], env)).code).toBe(0);

    // Act
    const run = await runCli(['upload', join(dir, 'out'), '--to', '/clash'], env);
    const json = await runCli(['upload', join(dir, 'out'), '--to', '/clash', '--json'], env);

    // Assess
    expect(run.code).toBe(1);
    // The failure is listed once, as it happens; the summary counts it.
    expect(run.stderr).toMatch(/^failed \S+report\.csv -> \/clash\/report\.csv: .+ \(conflict, 409\)\n$/);
    expect(String(run.stdout)).toMatch(/failed 1/);
    expect(json.code).toBe(1);
    const result = json.json<UploadJson>();
    expect(result.ok).toBe(false);
    expect(result.failed).toEqual([expect.objectContaining({ path: '/clash/report.csv', code: 'conflict', status: 409 })]);
    expect(result.uploaded.map((file) => file.path).sort()).toEqual(['/clash/2026/01/a.bin', '/clash/2026/01/b.bin', '/clash/2026/02/c.bin']);
  });

  it('rm removes an empty folder, refuses a full one without -r (409), and takes everything with -r', async () => {
    expect((await runCli(['rm', '/made/c'], env)).code).toBe(0);
    const full = await runCli(['rm', '/cli'], env);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain('pass -r to delete it and everything in it (conflict, 409)');

    const all = await runCli(['rm', '-r', '/cli', '--json'], env);
    expect(all.code).toBe(0);
    expect(all.json()).toEqual({ deleted: [], not_found: [], already_gone: [], folders: [{ deleted: true, path: '/cli', files_deleted: 4 }] });
    await expect(new Drive({ baseUrl: host.url, apiKey: KEY }).list('/cli')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('rm deletes files, and folders among them as folders; a path that holds nothing exits 1', async () => {
    const client = new Drive({ baseUrl: host.url, apiKey: KEY });
    await client.uploadMany(['/rm/a.txt', '/rm/b.txt', '/rm/sub/c.txt'].map((path) => ({ path, data: new Blob([path]) })));
    const files = await runCli(['rm', '/rm/a.txt', '/rm/b.txt', '--json'], env);
    expect({ code: files.code, out: files.json() }).toEqual({ code: 0, out: { deleted: ['/rm/a.txt', '/rm/b.txt'], not_found: [], already_gone: [], folders: [] } });

    const mixed = await runCli(['rm', '-r', '/rm/sub', '/rm/missing.txt'], env);
    expect(mixed.code).toBe(1);
    expect(String(mixed.stdout)).toContain('deleted /rm/sub (1 file(s))');
    expect(mixed.stderr).toContain('/rm/missing.txt: no such file or folder');
    expect((await client.list('/rm')).files).toEqual([]);
  });

  it('link prints a URL that opens the file with no key; --list shows it by id, never its URL; --revoke ends it', async () => {
    const client = new Drive({ baseUrl: host.url, apiKey: KEY });
    await client.upload({ path: '/shared/s.txt', data: 'shared bytes' });

    const made = await runCli(['link', '/shared/s.txt', '--expires', '7d'], env);
    expect(made.code).toBe(0);
    const url = String(made.stdout).trim();
    expect(url).toMatch(new RegExp(`^${host.url}/s/[A-Za-z0-9_-]{43}$`));
    expect(await (await fetch(url)).text()).toBe('shared bytes');

    const listed = await runCli(['link', '--list', '/shared/s.txt', '--json'], env);
    const { links } = listed.json() as { links: { id: string; path: string; expires_at: string }[] };
    expect(links).toHaveLength(1);
    expect(Date.parse(links[0].expires_at) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(String(listed.stdout)).not.toContain(url.slice(url.lastIndexOf('/') + 1));

    const revoked = await runCli(['link', '--revoke', links[0].id], env);
    expect({ code: revoked.code, out: String(revoked.stdout).trim() }).toEqual({ code: 0, out: `revoked ${links[0].id}` });
    expect((await fetch(url)).status).toBe(404);
  });

  it('rejects a wrong key with exit 1 and unauthorized', async () => {
    const run = await runCli(['ls', '--json'], driveEnv(host.url, 'not-a-key'));
    expect(run.code).toBe(1);
    expect(run.json()).toMatchObject({ error: { code: 'unauthorized', status: 401 } });
  });
});

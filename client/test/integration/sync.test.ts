import { createHash } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningHost, sharedHost, stopHost } from '../../../test/support/local-host';
import { etagForm, fileContentEtag, partsOf } from '../../src/content-etag';
import { Drive } from '../../src/drive';
import type { SyncChange } from '../../src/sync/sync';
import { driveEnv, runCli } from '../support/cli-process';
import { countingFetch, smallFiles, writeTree } from '../support/trees';
import { uploadGate } from '../support/upload-gate';

const KEY = 'client-sync-key-9fK2qLw8ZrT4mXc7';
const READ_ONLY_KEY = 'client-sync-ro-key-Qa7Vn3Lp0Ws5Ye2';
const MiB = 1024 * 1024;
/**
 * The tree's small files: past the 100 files the client's first upload request takes (`BatchSizer`), so a run
 * sends several requests, and no more, since the tree is synced up and down several times.
 */
const SMALL_FILES = 120;
/**
 * The big file: over the client's 4 MiB `largeFileBytes` (a large-upload session), over the server's 8 MiB part
 * (two parts), and over the client's 10,000,000-byte `directDownloadBytes` (fetched from S3 by a presigned URL).
 */
const BIG_FILE_BYTES = 10 * MiB;

let host: RunningHost;
let dir: string;
let env: Record<string, string>;
let drive: Drive;

beforeAll(async () => {
  // The worker's host for files with the spec's rate limits (`sharedHost`); the drive is this file's own.
  host = await sharedHost({ DRIVE_API_KEYS: `client-sync:${KEY}:read-write,client-sync:${READ_ONLY_KEY}:read-only` });
  env = driveEnv(host.url, KEY);
  drive = new Drive({ baseUrl: host.url, apiKey: KEY });
  dir = await mkdtemp(join(tmpdir(), 'drive-sync-'));
});

afterAll(async () => {
  await stopHost(host);
  await rm(dir, { recursive: true, force: true });
});

async function mkdirp(path: string): Promise<string> {
  await mkdir(path, { recursive: true });
  return path;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Every file below `root` by relative path with its SHA-256, and every folder (`a/b/`). */
async function localTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string, prefix: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const relative = `${prefix}${entry.name}`;
      if (entry.isDirectory()) {
        out[`${relative}/`] = 'folder';
        await walk(join(at, entry.name), `${relative}/`);
      } else out[relative] = sha256(await readFile(join(at, entry.name)));
    }
  };
  await walk(root, '');
  return out;
}

/**
 * The drive folder against the local folder `root`, as two records of one shape: every file by its content
 * ETag and every folder (`a/b/`) as `folder`. The drive's side is one listing: each file's ETag is S3's hash of
 * the bytes it stored (hex MD5, or the multipart form of a file sent in parts); the local side is the same hash
 * of each local file, in the form the drive's copy of that path has. Equal records: the same tree, byte for
 * byte, without downloading it (the downloads themselves are the sync down's, compared with `localTree`).
 */
async function driveAndLocal(folder: string, root: string): Promise<{ drive: Record<string, string>; local: Record<string, string> }> {
  const listing = await drive.list(folder, { recursive: true, etags: true });
  const onDrive: Record<string, string> = {};
  for (const f of listing.folders) onDrive[`${f.path.slice(folder.length + 1)}/`] = 'folder';
  for (const f of listing.files) onDrive[f.path.slice(folder.length + 1)] = f.etag ?? '(no etag)';
  const local: Record<string, string> = {};
  const walk = async (at: string, prefix: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const relative = `${prefix}${entry.name}`;
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        local[`${relative}/`] = 'folder';
        await walk(path, `${relative}/`);
      } else {
        const theirs = onDrive[relative];
        const multipart = theirs !== undefined && etagForm(theirs) === 'multipart';
        local[relative] = await fileContentEtag(path, (await stat(path)).size, multipart ? 'multipart' : 'single', multipart ? partsOf(theirs) : undefined);
      }
    }
  };
  await walk(root, '');
  return { drive: onDrive, local };
}

/** Asserts that the drive folder holds exactly the local folder's tree, byte for byte (`driveAndLocal`). */
async function expectSameTree(folder: string, root: string): Promise<void> {
  const { drive: onDrive, local } = await driveAndLocal(folder, root);
  expect(onDrive).toEqual(local);
}

/** The drive folder's files with their ETags: what changes if anything is written. */
async function driveState(folder: string): Promise<string[]> {
  const listing = await drive.list(folder, { recursive: true, etags: true });
  return [...listing.files.map((f) => `${f.path} ${f.etag}`), ...listing.folders.map((f) => `${f.path}/`)].sort();
}

interface SummaryJson {
  type: 'summary';
  ok: boolean;
  transferred: number;
  deleted: number;
  unchanged: number;
  failed: number;
}

function jsonLines(stdout: Buffer): { changes: (SyncChange & { type: string })[]; summary: SummaryJson } {
  const lines = String(stdout)
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string });
  const summary = lines.pop() as unknown as SummaryJson;
  expect(summary.type).toBe('summary');
  return { changes: lines as (SyncChange & { type: string })[], summary };
}

describe('drive sync against the local host', () => {
  let src: string;
  let files: { relative: string; size: number }[];

  beforeAll(async () => {
    src = join(dir, 'src');
    files = [
      ...smallFiles(SMALL_FILES, 30, 3000),
      { relative: 'names/with spaces/a file.txt', size: 100 },
      { relative: 'names/non-ascii/café ünïcødé 日本.txt', size: 200 },
      { relative: 'big/two-parts.bin', size: BIG_FILE_BYTES },
    ];
    await writeTree(src, files);
    await mkdir(join(src, 'empty'), { recursive: true });
    await mkdir(join(src, 'nested/empty/deeper'), { recursive: true });
  });

  it('syncs a tree up (nested, empty folders, several requests, a file in parts, spaces and non-ASCII), then again with no upload', async () => {
    // Act
    const first = await runCli(['sync', src, '/up', '--json'], env);

    // Assess
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const { changes, summary } = jsonLines(first.stdout);
    expect(summary).toMatchObject({ ok: true, transferred: files.length, deleted: 0, unchanged: 0, failed: 0 });
    expect(changes.filter((c) => c.action === 'upload').length).toBe(files.length);
    expect(changes.filter((c) => c.action === 'mkdir').map((c) => c.path).sort()).toEqual(['/up/empty', '/up/nested/empty/deeper']);
    await expectSameTree('/up', src);

    // Act: again, through the library, counting what it sends.
    const fetch = countingFetch();
    const again = await new Drive({ baseUrl: host.url, apiKey: KEY, fetch }).sync(src, 'drive:/up');

    // Assess: nothing sent, everything compared equal.
    expect(again).toMatchObject({ transferred: { files: 0, bytes: 0 }, deleted: 0, foldersCreated: 0, unchanged: files.length, failed: [] });
    expect(Object.keys(fetch.byKind).filter((kind) => kind.startsWith('POST'))).toEqual([]);
  });

  it('--dry-run --delete prints exactly the six changes and changes nothing; --max-delete 1 refuses; --delete applies them', async () => {
    // Prepare: three changed, two deleted, one added.
    await appendFile(join(src, files[0].relative), 'changed');
    await writeFile(join(src, files[1].relative), 'replaced, other size');
    await writeFile(join(src, 'big/two-parts.bin'), Buffer.alloc(BIG_FILE_BYTES, 7)); // same size, other bytes
    await rm(join(src, files[2].relative));
    await rm(join(src, files[3].relative));
    await writeFile(join(src, 'names/added.txt'), 'new');
    const before = await driveState('/up');

    // Act
    const dry = await runCli(['sync', src, '/up', '--dry-run', '--delete'], env);

    // Assess
    expect(dry.code).toBe(0);
    const lines = String(dry.stdout).trim().split('\n');
    expect(lines.filter((line) => line.startsWith('would ')).sort()).toEqual(
      [
        `would upload /up/${files[0].relative} (changed, ${files[0].size + 7} B)`,
        `would upload /up/${files[1].relative} (changed, 20 B)`,
        'would upload /up/big/two-parts.bin (changed, 10.0 MiB)',
        `would delete /up/${files[2].relative}`,
        `would delete /up/${files[3].relative}`,
        'would upload /up/names/added.txt (new, 3 B)',
      ].sort(),
    );
    expect(lines.length).toBe(7);
    expect(lines[6]).toMatch(new RegExp(`^dry run: would have uploaded 4 \\(10\\.0 MiB\\), deleted 2, unchanged ${files.length - 5}, failed 0 in \\d+\\.\\d s$`));
    expect(await driveState('/up')).toEqual(before);

    // Act: two deletions against --max-delete 1.
    const refused = await runCli(['sync', src, '/up', '--delete', '--max-delete', '1'], env);

    // Assess
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('drive sync: the plan deletes 2 entries, more than --max-delete 1: nothing was changed (raise --max-delete, or -1 for no limit)\n');
    expect(await driveState('/up')).toEqual(before);

    // Act
    const applied = await runCli(['sync', src, '/up', '--delete'], env);

    // Assess
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(String(applied.stdout).trim().split('\n').pop()).toMatch(new RegExp(`^uploaded 4 \\(10\\.0 MiB\\), deleted 2, unchanged ${files.length - 5}, failed 0 in \\d+\\.\\d s$`));
    await expectSameTree('/up', src);
  });

  it('syncs down into an empty folder: an identical tree, then nothing to do', async () => {
    const down = join(dir, 'down');

    const run = await runCli(['sync', 'drive:/up', down], env);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(await localTree(down)).toEqual(await localTree(src));
    const again = await drive.sync({ drive: '/up' }, { local: down }, { delete: true });
    expect(again).toMatchObject({ transferred: { files: 0 }, deleted: 0, failed: [] });
  });

  it('leaves out what --exclude names on both sides, and keeps what --include takes back', async () => {
    const local = join(dir, 'filtered');
    await writeTree(local, [
      { relative: 'keep.txt', size: 10 },
      { relative: 'debug.log', size: 10 },
      { relative: 'important.log', size: 10 },
      { relative: 'build/out.bin', size: 10 },
    ]);

    const run = await runCli(['sync', local, '/filtered', '--exclude', '*.log', '--include', 'important.log', '--exclude', 'build/', '--json'], env);

    expect(run.code).toBe(0);
    expect((await driveState('/filtered')).map((line) => line.split(' ')[0])).toEqual(['/filtered/important.log', '/filtered/keep.txt']);
    // An excluded drive file is not deleted either.
    await drive.upload({ path: '/filtered/remote.log', data: 'x' });
    const del = await drive.sync(local, 'drive:/filtered', { delete: true, filters: [{ kind: 'exclude', pattern: '*.log' }, { kind: 'include', pattern: 'important.log' }, { kind: 'exclude', pattern: 'build/' }] });
    expect(del).toMatchObject({ deleted: 0, failed: [] });
  });

  it('resumes an interrupted run with no duplicate work: only what had not landed is sent, the lost-reply batch included', async () => {
    const local = join(dir, 'resume');
    // Five requests' worth: two answered, one lost, one held, one never sent.
    const files = smallFiles(125, 12, 2000, 11);
    await writeTree(local, files);
    // Two requests of 25 files at once, through a gate: the first two requests are answered, the third is
    // stored by the host but its answer is lost, the fourth never reaches the host. The run is aborted there,
    // with two requests in flight, whatever the machine's speed.
    const gate = await uploadGate(host.url, { answered: 2, loseNext: true });
    const gated = new Drive({ baseUrl: gate.url, apiKey: KEY, concurrency: 2, maxFilesPerRequest: 25, batchTargetMs: Infinity });
    const controller = new AbortController();
    void gate.reached.then(() => controller.abort());
    let first;
    try {
      first = await gated.sync(local, 'drive:/resume', { signal: controller.signal });
    } finally {
      await gate.close();
    }
    const landed = (await drive.list('/resume', { recursive: true })).files.map((file) => file.path.slice('/resume/'.length));
    // The two answered requests are reported; the lost reply's files landed unreported; the held ones did not.
    expect(gate.lostStatus()).toBe(200);
    expect(first).toMatchObject({ interrupted: true, transferred: { files: 50 }, failed: [] });
    expect(landed.length).toBe(75);

    const sent: string[] = [];
    const second = await drive.sync(local, 'drive:/resume', { onChange: (change) => change.action === 'upload' && change.ok && sent.push(change.relative) });

    // Everything that landed, reported or not, is found equal; only the rest is sent, each file once.
    expect(second).toMatchObject({ interrupted: false, failed: [], unchanged: landed.length, transferred: { files: files.length - landed.length } });
    expect([...sent, ...landed].sort()).toEqual(files.map((f) => f.relative).sort());
    await expectSameTree('/resume', local);
  });

  it('reports what it cannot sync (a name Drive refuses, a symlink loop) and syncs the rest, exit 1', async () => {
    const local = join(dir, 'bad');
    await writeTree(local, [
      { relative: 'ok.txt', size: 5 },
      { relative: 'tab\there.txt', size: 5 },
    ]);
    await symlink('.', join(local, 'loop'));

    const run = await runCli(['sync', local, '/bad'], env);

    expect(run.code).toBe(1);
    const failures = run.stderr.trim().split('\n');
    expect(failures).toEqual([
      expect.stringMatching(/^failed \/bad\/loop: .*loop.* \(local_file_error\)$/),
      expect.stringMatching(/^failed \/bad\/tab\there\.txt: .*control characters.* \(validation_error\)$/),
    ]);
    expect((await driveState('/bad')).map((line) => line.split(' ')[0])).toEqual(['/bad/ok.txt']);
    expect(String(run.stdout)).toMatch(/uploaded 1 \(5 B\), deleted 0, unchanged 0, failed 2 in/);
  });

  it('refuses bad input before doing anything: exit 2 and one line', async () => {
    const missing = await runCli(['sync', join(dir, 'nope'), 'drive:/x'], env);
    expect({ code: missing.code, err: missing.stderr }).toEqual({ code: 2, err: `drive sync: ${join(dir, 'nope')}: no such folder\n` });

    await drive.upload({ path: '/afile', data: 'x' });
    const onFile = await runCli(['sync', src, '/afile'], env);
    expect({ code: onFile.code, err: onFile.stderr }).toEqual({ code: 2, err: 'drive sync: drive:/afile is a file, not a folder: the destination must be a folder\n' });

    const localFile = join(dir, 'a-local-file');
    await writeFile(localFile, 'x');
    const intoFile = await runCli(['sync', 'drive:/up', localFile], env);
    expect({ code: intoFile.code, err: intoFile.stderr }).toEqual({ code: 2, err: `drive sync: ${localFile} is a file, not a folder: the destination must be a folder\n` });

    const ambiguous = await runCli(['sync', '/nowhere-a', '/nowhere-b'], env);
    expect({ code: ambiguous.code, err: ambiguous.stderr }).toEqual({ code: 2, err: 'drive: both "/nowhere-a" and "/nowhere-b" start with "/": write the drive side as drive:/path (see drive --help)\n' });

    const before = await driveState('/up');
    await rm(join(src, files[10].relative));
    const readOnly = await runCli(['sync', src, '/up', '--delete'], driveEnv(host.url, READ_ONLY_KEY));
    expect({ code: readOnly.code, err: readOnly.stderr }).toEqual({ code: 2, err: "drive sync: --delete needs a key that may delete, and this key's role is read-only: nothing was changed\n" });
    expect(await driveState('/up')).toEqual(before);
  });

  it('does not overwrite a file replaced on the drive after the plan was made (if_match), nor one made there (if_none_match)', async () => {
    const local = join(dir, 'race');
    await writeTree(local, [
      { relative: 'changed.txt', size: 10 },
      { relative: 'new.txt', size: 10 },
    ]);
    await drive.upload({ path: '/race/changed.txt', data: 'the old content' });

    const report = await drive.sync(local, 'drive:/race', {
      useConditions: true,
      // Between the plan and its execution, someone else writes both paths.
      onPlan: async () => {
        await drive.upload({ path: '/race/changed.txt', data: 'written by someone else' });
        await drive.upload({ path: '/race/new.txt', data: 'also someone else' });
      },
    });

    expect(report.failed.map((f) => [f.relative, f.error?.status])).toEqual([
      ['changed.txt', 412],
      ['new.txt', 412],
    ]);
    const changed = await drive.download('/race/changed.txt');
    expect(await new Response(changed.body).text()).toBe('written by someone else');
  });

  it('sends a file over 4 MiB with its condition in the session: one replaced or made after the start is refused at completion (412), not overwritten', async () => {
    const local = join(dir, 'race-big');
    await writeTree(local, [
      { relative: 'changed.bin', size: 5 * MiB },
      { relative: 'new.bin', size: 5 * MiB },
    ]);
    await drive.upload({ path: '/race-big/changed.bin', data: 'the old content' });
    const starts: unknown[] = [];
    // Each session, once started (and so past any check before it), sees its path written by someone else
    // before any part is sent: only a condition the session carries to its completion can refuse it there.
    const racing: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (new URL(String(input)).pathname === '/drive/uploads' && init?.method === 'POST') {
        starts.push(JSON.parse(String(init.body)));
        const { path } = ((await response.clone().json()) as { data: { path: string } }).data;
        await drive.upload({ path, data: `written by someone else at ${path}` });
      }
      return response;
    };

    const report = await new Drive({ baseUrl: host.url, apiKey: KEY, fetch: racing }).sync(local, 'drive:/race-big');

    for (const name of ['changed.bin', 'new.bin']) {
      const stored = await drive.download(`/race-big/${name}`);
      expect(await new Response(stored.body).text()).toBe(`written by someone else at /race-big/${name}`);
    }
    expect(report.failed.map((f) => [f.relative, f.error?.status]).sort()).toEqual([
      ['changed.bin', 412],
      ['new.bin', 412],
    ]);
    // The conditions went with the starts, as small files' go in their metadata.
    const oldEtag = createHash('md5').update('the old content').digest('hex');
    expect(starts).toEqual(
      expect.arrayContaining([
        { path: '/race-big/changed.bin', size: 5 * MiB, if_match: oldEtag },
        { path: '/race-big/new.bin', size: 5 * MiB, if_none_match: '*' },
      ]),
    );
  });

  it('counts a file the drive came to hold with the local content after the plan as unchanged, not failed', async () => {
    // As when a killed run's last request is stored only after the next run made its plan.
    const local = join(dir, 'late');
    await writeFile(join(await mkdirp(local), 'new.txt'), 'the new content');
    await writeFile(join(local, 'changed.txt'), 'the changed content');
    await drive.upload({ path: '/late/changed.txt', data: 'the old content' });

    const report = await drive.sync(local, 'drive:/late', {
      onPlan: async () => {
        await drive.upload({ path: '/late/new.txt', data: 'the new content' });
        await drive.upload({ path: '/late/changed.txt', data: 'the changed content' });
      },
    });

    expect(report).toMatchObject({ failed: [], unchanged: 2, transferred: { files: 0 } });
    await expectSameTree('/late', local);
  });

  it('says each retry on stderr and names the URL when the host cannot be reached', async () => {
    // A port nothing listens on: one the system handed out and took back.
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise((done) => server.close(done));

    const run = await runCli(['ls', '/'], driveEnv(url, KEY));

    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines.slice(0, 5)).toEqual([2, 3, 4, 5, 6].map((attempt) => expect.stringMatching(new RegExp(`^drive ls: GET ${url}/drive/list: attempt ${attempt} of 6 in \\d+\\.\\d s \\(no answer \\(ECONNREFUSED\\)\\)$`))));
    expect(lines[5]).toMatch(new RegExp(`^drive ls: cannot reach ${url}: GET /drive/list got no answer: .*ECONNREFUSED`));
    expect(lines.length).toBe(6);

    const quiet = await runCli(['ls', '/', '--quiet'], driveEnv(url, KEY));
    expect(quiet.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^drive ls: cannot reach /)]);
  });
});

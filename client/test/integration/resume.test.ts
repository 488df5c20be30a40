import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningHost, startHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import { cliArgs, driveEnv, runCli } from '../support/cli-process';
import { type TreeFile, etagMismatches, smallFiles, writeTree } from '../support/trees';
import { uploadGate } from '../support/upload-gate';

const KEY = 'client-resume-key-oFGRbyvwuP5fmk1g';
const MiB = 1024 * 1024;

let host: RunningHost;
let dir: string;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `default:${KEY}` });
  dir = await mkdtemp(join(tmpdir(), 'drive-client-resume-'));
});

afterAll(async () => {
  await stopHost(host);
  await rm(dir, { recursive: true, force: true });
});

/** Multipart uploads the embedded S3 still holds parts for. */
async function pendingMultipartUploads(): Promise<string[]> {
  return readdir(join(host.dataDir, 's3', 'drive-files', '._S3rver_uploads')).catch(() => []);
}

/**
 * Starts `drive upload` through an upload gate and kills it (SIGKILL, no chance to clean up) once it has stored
 * the large file (sent first) and a first batch, with the next batch on its way: the gate holds that one, so
 * the run is killed mid-way whatever the machine's speed.
 */
async function uploadUntilFirstBatchThenKill(source: string, to: string): Promise<string> {
  const gate = await uploadGate(host.url, { answered: 1 });
  try {
    return await new Promise((done, fail) => {
      const child = spawn(process.execPath, [...cliArgs(), 'upload', source, '--to', to, '--concurrency', '1'], {
        env: { ...process.env, DRIVE_CLI_SOURCE: '1', ...driveEnv(gate.url, KEY) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      void gate.reached.then(() => child.kill('SIGKILL'));
      child.on('error', fail);
      child.on('close', (code, signal) => (signal === 'SIGKILL' ? done(output) : fail(new Error(`drive upload ended (${code}) before it was killed:\n${output}`))));
    });
  } finally {
    await gate.close();
  }
}

describe('Drive client: interrupted runs', () => {
  it('resumes a killed `drive upload` with --skip-existing, uploading only what is missing', async () => {
    // Prepare: 150 files of up to 40 KiB (two requests: the client's first takes 100 files; the gate lets it
    // through and holds the second) and one of 9 MiB (two parts).
    const root = join(dir, 'killed');
    const tree = await writeTree(root, [...smallFiles(150, 20, 40 * 1024, 11), { relative: 'large/nine.bin', size: 9 * MiB }]);
    const drive = new Drive({ baseUrl: host.url, apiKey: KEY });

    // Act: kill the first run mid-way, see what it left, then run again with --skip-existing.
    await uploadUntilFirstBatchThenKill(root, '/resume');
    const before = new Set((await drive.list('/resume', { recursive: true })).files.map((file) => file.path));
    const resumed = await runCli(['upload', root, '--to', '/resume', '--skip-existing', '--json'], driveEnv(host.url, KEY));

    // Assess: the first run stored some but not all; the second sent exactly the rest, and skipped exactly what was there.
    expect(before.size).toBeGreaterThan(0);
    expect(before.size).toBeLessThan(tree.length);
    expect(resumed.code).toBe(0);
    const result = resumed.json<{ uploaded: { path: string }[]; skipped: { path: string }[]; failed: unknown[] }>();
    expect(result.failed).toEqual([]);
    expect(result.skipped.map((file) => file.path).sort()).toEqual([...before].sort());
    expect(result.uploaded).toHaveLength(tree.length - before.size);
    expect(result.uploaded.filter((file) => before.has(file.path))).toEqual([]);
    expect(await etagMismatches(drive, tree, '/resume')).toEqual([]);
    console.log(`Client report: killed run stored ${before.size} of ${tree.length} files; the --skip-existing run uploaded ${result.uploaded.length} and skipped ${result.skipped.length}`);
  });

  it('skips nothing that changed: a local file edited since it was stored (same size) is sent again', async () => {
    // Prepare
    const root = join(dir, 'edited');
    const tree: TreeFile[] = await writeTree(root, [{ relative: 'a.bin', size: 1000 }, { relative: 'b.bin', size: 1000 }]);
    expect((await runCli(['upload', root, '--to', '/edited'], driveEnv(host.url, KEY))).code).toBe(0);
    await writeTree(root, [{ relative: 'b.bin', size: 1000 }]);

    // Act
    const again = await runCli(['upload', root, '--to', '/edited', '--skip-existing', '--json'], driveEnv(host.url, KEY));

    // Assess
    const result = again.json<{ uploaded: { path: string }[]; skipped: { path: string }[] }>();
    expect(result.skipped.map((file) => file.path)).toEqual(['/edited/a.bin']);
    expect(result.uploaded.map((file) => file.path)).toEqual(['/edited/b.bin']);
    expect(await etagMismatches(new Drive({ baseUrl: host.url, apiKey: KEY }), tree, '/edited')).toEqual([]);
  });

  it('on an AbortSignal, stops, aborts the large upload in flight (no parts left in storage) and rejects with the abort', async () => {
    // Prepare: a file of three parts (8, 8 and 1 MiB) sent one part at a time, with small files: the abort
    // comes after the first part, with the others still to send.
    const root = join(dir, 'aborted');
    const tree = await writeTree(root, [{ relative: 'three-parts.bin', size: 17 * MiB }, ...smallFiles(50, 5, 1024, 3)]);
    const drive = new Drive({ baseUrl: host.url, apiKey: KEY, partConcurrency: 1, concurrency: 1 });
    const controller = new AbortController();
    let pendingAtAbort: Promise<string[]> | undefined;

    // Act: abort once the first 8 MiB part is in.
    const run = drive.uploadMany(
      tree.map((file) => ({ file: file.local, path: `/aborted/${file.relative}` })),
      {
        signal: controller.signal,
        onProgress: (progress) => {
          if (progress.bytesDone < 8 * MiB || controller.signal.aborted) return;
          pendingAtAbort = pendingMultipartUploads();
          controller.abort();
        },
      },
    );

    // Assess: storage held the upload's parts when the abort came, and holds none after.
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(await pendingAtAbort).toHaveLength(1);
    expect(await pendingMultipartUploads()).toEqual([]);
    await expect(drive.list('/aborted')).rejects.toMatchObject({ code: 'not_found' });
  });
});

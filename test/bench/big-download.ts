import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { Drive } from '../../client/src/drive';
import { startHost, stopHost } from '../support/local-host';

/**
 * `npm run bench:download [-- --mib 1024]`: a file of that many MiB (default 1 GiB) uploaded through the
 * large-upload session, then downloaded by `drive get` (straight from the local S3 gateway by a presigned
 * URL, its size, ETag and multipart hash checked) and, for comparison, through the API's stream, each
 * compared byte for byte with the original by SHA-256. Prints the times and what `drive get` reported.
 * Locally nothing paces the API's stream; in AWS it runs at 2 MB/s past 10 MB and ends at 200 MiB.
 */
const MiB = 1024 * 1024;
const mibAt = process.argv.indexOf('--mib');
const mib = mibAt < 0 ? 1024 : Number(process.argv[mibAt + 1]);
if (!Number.isInteger(mib) || mib < 1) throw new Error('--mib takes a whole number of MiB, 1 or more');
const ROOT = resolve(__dirname, '..', '..');
const KEY = randomBytes(16).toString('hex');

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'big-download-'));
  const host = await startHost({ DRIVE_API_KEYS: `bench:${KEY}` });
  try {
    const original = join(dir, 'original.bin');
    await writeRandom(original, mib * MiB + 13);
    const size = (await stat(original)).size;
    const sha = await sha256(original);
    const drive = new Drive({ baseUrl: host.url, apiKey: KEY });

    let started = Date.now();
    const file = await drive.upload({ path: '/big/file.bin', file: original });
    report('upload (large-upload session, 4 parts at a time)', size, Date.now() - started);
    console.log(`  stored ${file.size} bytes`);

    started = Date.now();
    const got = await cli(['get', '/big/file.bin', '-o', join(dir, 'direct.bin'), '--json'], host.url);
    report('drive get (presigned URL, ETag and hash checked)', size, Date.now() - started);
    console.log(`  drive get said: ${got.trim()}`);
    console.log(`  byte for byte: ${(await sha256(join(dir, 'direct.bin'))) === sha ? 'same SHA-256' : 'DIFFERENT'}`);
    await rm(join(dir, 'direct.bin'));

    started = Date.now();
    const through = new Drive({ baseUrl: host.url, apiKey: KEY, directDownloadBytes: Infinity });
    const plain = await through.downloadToFile('/big/file.bin', join(dir, 'plain.bin'));
    report('client through the API stream (directDownloadBytes: Infinity)', size, Date.now() - started);
    console.log(`  direct: ${plain.direct}; byte for byte: ${(await sha256(join(dir, 'plain.bin'))) === sha ? 'same SHA-256' : 'DIFFERENT'}`);
  } finally {
    await stopHost(host);
    await rm(dir, { recursive: true, force: true });
  }
}

function report(what: string, bytes: number, ms: number): void {
  console.log(`${what}: ${(bytes / MiB).toFixed(0)} MiB in ${(ms / 1000).toFixed(1)} s, ${(bytes / MiB / (ms / 1000)).toFixed(0)} MiB/s`);
}

async function writeRandom(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path);
  for (let left = bytes; left > 0; left -= 8 * MiB) {
    if (!out.write(randomBytes(Math.min(left, 8 * MiB)))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * MiB })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** `drive <args>` from source, as the package's bin runs it; resolves with its stdout, rejects on a failure. */
function cli(args: string[], url: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(ROOT, 'client', 'bin', 'drive.cjs'), ...args], {
      env: { ...process.env, DRIVE_CLI_SOURCE: '1', DRIVE_URL: url, DRIVE_API_KEY: KEY },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(out) : fail(new Error(`drive ${args.join(' ')} exited with ${code}`))));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

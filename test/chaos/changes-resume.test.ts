import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DriveClient, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// `drive watch --json --cursor-file f`, SIGKILLed after a few lines while a writer uploads, started again from
// its cursor file, until every change came: the union of its runs holds every change, and each run prints the
// changes in the feed's order from where the last kept cursor stood (a run repeats at most what the killed one
// printed after its last kept cursor, the page it was printing).

const KEY = 'chaos-watch-key-Hq7Zt2Lm9Vx4Rb8Nw3Kc';
const FILES = 60;
const BIN = resolve(__dirname, '..', '..', 'client', 'bin', 'drive.cjs');

let host: RunningHost;
let dir: string;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `watch:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off' });
  dir = await mkdtemp(join(tmpdir(), 'drive-watch-'));
});

afterAll(async () => {
  await stopHost(host);
  await rm(dir, { recursive: true, force: true });
});

/** Runs `drive watch` until it printed `lines` lines (then SIGKILLs it) or `done()` holds; resolves with its lines. */
function watchRun(cursorFile: string, lines: number, done: (printed: string[]) => boolean): Promise<string[]> {
  return new Promise((settle, fail) => {
    const child = spawn(process.execPath, [BIN, 'watch', '/x', '--json', '--cursor-file', cursorFile], {
      env: { ...process.env, DRIVE_CLI_SOURCE: '1', DRIVE_URL: host.url, DRIVE_API_KEY: KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const printed: string[] = [];
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      partial += chunk.toString();
      const whole = partial.split('\n');
      partial = whole.pop()!;
      printed.push(...whole);
      if (printed.length >= lines || done(printed)) child.kill('SIGKILL');
    });
    child.on('error', fail);
    child.on('close', () => settle(printed));
  });
}

it('misses no change across SIGKILLs of drive watch, resumed from its cursor file', async () => {
  const admin = new DriveClient(host.url, KEY);
  // The folder's own change reaches the log a moment after its request answers (the stream, then the
  // sequencer): a cursor taken at once may come before it. Wait (long polls) until it is logged, then take
  // the cursor, so that what follows it is exactly the files.
  const before = await json<{ data: { cursor: string } }>(admin.request('GET', '/drive/changes/latest?path=/'));
  expect((await admin.createFolder({ path: '/x' })).status).toBe(200);
  for (let cursor = before.body.data.cursor; ; ) {
    const page = await json<{ data: { changes: { path: string }[]; next_cursor: string } }>(admin.request('GET', `/drive/changes?cursor=${cursor}&timeout=25`));
    if (page.body.data.changes.some((change) => change.path === '/x')) break;
    cursor = page.body.data.next_cursor;
  }
  const latest = await json<{ data: { cursor: string } }>(admin.request('GET', '/drive/changes/latest?path=/x'));
  const cursorFile = join(dir, 'cursor');
  await writeFile(cursorFile, `${latest.body.data.cursor}\n`);

  const writing = (async () => {
    for (let i = 0; i < FILES; i++) expect((await admin.upload([{ data: `${i}`, filename: 'x' }], [{ path: `/x/f${i}.txt` }])).status).toBe(200);
  })();
  const seen = new Map<string, number>();
  const runs: number[][] = [];
  let seed = 12345;
  for (let run = 0; run < 40 && seen.size < FILES; run++) {
    seed = (seed * 48271) % 2147483647;
    const covered = (printed: string[]) => new Set([...seen.keys(), ...printed.map((line) => (JSON.parse(line) as { path: string }).path)]).size >= FILES;
    const lines = await watchRun(cursorFile, 3 + (seed % 12), covered);
    const changes = lines.map((line) => JSON.parse(line) as { id: string; type: string; path: string });
    for (const change of changes) seen.set(change.path, (seen.get(change.path) ?? 0) + 1);
    runs.push(changes.map((change) => Number(change.id)));
  }
  await writing;
  // Several runs, each killed after a few lines but the last.
  expect(runs.length).toBeGreaterThan(3);
  expect([...seen.keys()].sort()).toEqual(Array.from({ length: FILES }, (_, i) => `/x/f${i}.txt`).sort());
  // Each run prints in the feed's order, and starts at or before where the one before it stopped (nothing skipped).
  // From the position of the cursor the first run started at.
  let last = (JSON.parse(Buffer.from(latest.body.data.cursor, 'base64url').toString('utf8')) as { s: number }).s;
  for (const ids of runs.filter((run) => run.length > 0)) {
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids[0]).toBeLessThanOrEqual(last + 1);
    last = Math.max(last, ids.at(-1)!);
  }
});

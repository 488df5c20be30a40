import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DriveClient, json } from '../support/api-client';
import { cpuSecondsOf } from '../support/cpu-log';
import { removeDataDir, startHost } from '../support/local-host';
import { ENDPOINTS_FILE, runningHost, startEmbeddedDynamo } from '../../lib/local/emulators';

// How `npm start` opens its data dir and port: privately, past what a killed host left, and with a message
// that says what to do when it cannot.

const ROOT = resolve(__dirname, '..', '..');
const KEY = 'hoststart-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';
const onLinux = process.platform === 'linux' ? it : it.skip;

let dirs: string[] = [];

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const dir of dirs) await removeDataDir(dir);
  dirs = [];
});

/** Every file and folder under `dir` (itself included) that its group or other users may reach in any way. */
async function openToOthers(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string) => {
    const info = await lstat(path);
    if (info.isSymbolicLink()) return;
    if ((info.mode & 0o077) !== 0) found.push(`${path} ${(info.mode & 0o777).toString(8)}`);
    if (info.isDirectory()) for (const entry of await readdir(path)) await walk(join(path, entry));
  };
  await walk(dir);
  return found;
}

/** An HTTP server that is no Drive host: it answers every request 200 with a JSON body. */
async function unrelatedServer(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return server;
}

/**
 * Runs `npm start`'s entry point with `env` until it exits; a host still running after `cpuSeconds` of CPU (a
 * start that refuses takes one or two) is killed and reported. CPU, not wall time, which a busy machine passes.
 */
async function runToExit(env: Record<string, string>, cpuSeconds = 30): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], { cwd: ROOT, env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const poll = setInterval(() => {
    if ((cpuSecondsOf(child.pid) ?? 0) > cpuSeconds) child.kill('SIGKILL');
  }, 100);
  const code = await new Promise<number | null>((done) => child.on('exit', (exitCode) => done(exitCode)));
  clearInterval(poll);
  return { code, output: child.signalCode === 'SIGKILL' ? `still running after ${cpuSeconds} s of CPU:\n${output}` : output };
}

describe('the data dir is its owner\'s alone', () => {
  it.each([
    ['a new data dir', false],
    ['an existing data dir other users could read (0755)', true],
  ])('%s: after uploads, no file or folder in it is open to group or others', async (_, loose) => {
    const dataDir = join(await tempDir('drive-perms-'), 'data');
    if (loose) {
      await mkdir(dataDir, { mode: 0o755 });
      await chmod(dataDir, 0o755);
    }
    const host = await startHost({ DRIVE_API_KEYS: `p:${KEY}` }, dataDir);
    try {
      const drive = new DriveClient(host.url, KEY);
      for (const [i, folder] of ['/a', '/a/b', '/c'].entries()) {
        const uploaded = await json(drive.upload([{ data: randomBytes(1000 + i), filename: `f${i}.bin` }], [{ folder }]));
        expect(uploaded.status).toBe(200);
      }
      expect(await openToOthers(dataDir)).toEqual([]);
    } finally {
      expect(await host.stop()).toBe(0);
    }
    expect(await openToOthers(dataDir)).toEqual([]);
    const said = host.output().match(/readable by other users/g) ?? [];
    expect(said).toEqual(loose ? ['readable by other users'] : []);
    if (loose) expect(host.output()).toContain(`the data dir ${dataDir} was readable by other users (mode 0755); it is now its owner's alone (0700)`);

    const again = await startHost({ DRIVE_API_KEYS: `p:${KEY}` }, dataDir);
    await again.stop();
    expect(again.output()).not.toContain('readable by other users');
  });
});

describe('a stale endpoints.json', () => {
  let unrelated: Server;
  let port: number;

  beforeEach(async () => {
    unrelated = await unrelatedServer();
    port = (unrelated.address() as AddressInfo).port;
  });

  afterEach(async () => {
    await new Promise((done) => unrelated.close(done));
  });

  it('is not believed when its pid lives and another HTTP server answers on its ports: the host starts', async () => {
    const dataDir = await tempDir('drive-stale-http-');
    const base = `http://127.0.0.1:${port}`;
    // The test's own pid is alive; the server answering on the recorded port is not a Drive host.
    await writeFile(join(dataDir, ENDPOINTS_FILE), JSON.stringify({ pid: process.pid, url: base, dynamodb: base, s3: base }));
    expect(await runningHost(dataDir)).toBeUndefined();

    const host = await startHost({ DRIVE_API_KEYS: `s:${KEY}` }, dataDir);
    expect(await host.stop()).toBe(0);
  });

  it('is believed when the DynamoDB it names is this data dir\'s own', async () => {
    const dataDir = await tempDir('drive-stale-own-');
    const dynamo = await startEmbeddedDynamo(dataDir);
    try {
      const record = { pid: process.pid, url: 'http://127.0.0.1:9', dynamodb: dynamo.endpoint, s3: 'http://127.0.0.1:9' };
      await writeFile(join(dataDir, ENDPOINTS_FILE), JSON.stringify(record));
      expect(await runningHost(dataDir)).toEqual(record);

      // Another data dir's DynamoDB refuses this one's credentials: not this data dir's host.
      const other = await tempDir('drive-stale-other-');
      await writeFile(join(other, ENDPOINTS_FILE), JSON.stringify(record));
      expect(await runningHost(other)).toBeUndefined();
    } finally {
      await dynamo.close();
    }
  });
});

describe('socket folders', () => {
  it.each([
    ['in the data dir', 'data', 0],
    // Past a Unix socket path's ~107 bytes: the socket goes to the temp folder instead.
    ['in the temp folder, for a data dir with a long path', 'd'.repeat(100), 1],
  ])('a host killed with SIGKILL leaves none behind (%s) once the next one has started and stopped', async (_, name, inTemp) => {
    const dataDir = join(await tempDir('drive-sockets-'), name);
    // The system temp folder the hosts see: their own, so that other processes' socket folders are not counted.
    const temp = await tempDir('drive-sockets-tmp-');
    const env = { DRIVE_API_KEYS: `k:${KEY}`, TMPDIR: temp };
    const killed = await startHost(env, dataDir);
    let used: number[];
    try {
      used = [(await readdir(temp)).filter((entry) => entry.startsWith('drive-')).length, (await readdir(join(dataDir, 'sockets')).catch(() => [])).length];
    } finally {
      expect(await killed.stop('SIGKILL')).toBeNull();
    }
    // One folder: the embedded queue's (S3 and DynamoDB have no socket: their gateways call them in their thread).
    expect(used).toEqual([inTemp, 1 - inTemp]);

    const next = await startHost(env, dataDir);
    expect(await next.stop()).toBe(0);

    const left = [...(await readdir(temp)).filter((name) => name.startsWith('drive-')), ...(await readdir(join(dataDir, 'sockets')).catch(() => []))];
    expect(left).toEqual([]);
  });
});

describe('start-up errors say what is wrong and what to do', () => {
  it('a port in use: names it and suggests PORT', async () => {
    const busy = await unrelatedServer();
    try {
      const { port } = busy.address() as AddressInfo;
      const dataDir = await tempDir('drive-port-');
      const { code, output } = await runToExit({ PORT: String(port), DRIVE_DATA_DIR: dataDir, DRIVE_API_KEYS: `k:${KEY}` });
      expect(output).toContain(`Drive could not start: port ${port} is in use; set PORT to another port (PORT=0 picks a free one)`);
      expect(code).toBe(1);
    } finally {
      await new Promise((done) => busy.close(done));
    }
  });

  it('a file where the data dir should be', async () => {
    const file = join(await tempDir('drive-file-'), 'not-a-folder');
    await writeFile(file, 'x');
    const { code, output } = await runToExit({ DRIVE_DATA_DIR: file });
    expect(output).toContain(`Drive could not start: the data dir ${file} is a file, not a folder`);
    expect(code).toBe(1);
  });

  // /proc refuses every write, even root's (these tests run as root, which a chmod'ed folder would not stop).
  onLinux('a data dir that cannot be written (/proc/self) fails at once, named, and not as ENOENT of a file inside', async () => {
    const { code, output } = await runToExit({ DRIVE_DATA_DIR: '/proc/self' });
    expect(output).toMatch(/^Drive could not start: the data dir \/proc\/self is not writable \(E[A-Z]+: .*\); set DRIVE_DATA_DIR to a folder this user can write\n$/);
    expect(code).toBe(1);
  });

  onLinux('a data dir under /proc that cannot be made fails at once instead of hanging', async () => {
    const { code, output } = await runToExit({ DRIVE_DATA_DIR: '/proc/drive-no-such/data' });
    expect(output).toMatch(/^Drive could not start: the data dir \/proc\/drive-no-such\/data is not writable/);
    expect(code).toBe(1);
  });
});

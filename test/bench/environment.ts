import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ENDPOINTS_FILE, LOCAL_REGION, LOCAL_RESOURCES, localCredentials } from '../../lib/local/emulators';
import type { Credentials } from '../../lib/local/signed-gateway';
import { type LocalHost, startLocalHost } from '../../lib/local-host';
import type { HostCpu } from '../../lib/local/host-cpu';
import { DynamoKeyAdmin } from '../../functions/aws/api-key-admin';
import { signWithContentMd5 } from '../../functions/aws/s3-object-store';
import { QUIET_SDK_LOGGER } from '../../functions/aws/sdk-logger';
import { BenchClient } from './http-client';
import { removeDataDir } from '../support/local-host';
import { Floor } from './floor';
import { Seeder } from './seed';

const ROOT = resolve(__dirname, '..', '..');

export const BENCH_KEY = 'bench-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';
export const DRIVE = 'bench';
export const FLOOR_DRIVE = 'floor';

export interface BenchEnvironment {
  /** The API's address, for a client of the bench's own (the change feed's follower). */
  url: string;
  api: BenchClient;
  /** A client with a key of its own for `drive`, made on first use. */
  clientFor(drive: string): Promise<BenchClient>;
  floor: Floor;
  seeder: Seeder;
  close(): Promise<void>;
}

/**
 * Three processes, as in AWS: storage (the embedded S3 and DynamoDB), the local host running the handlers
 * over it (`DRIVE_RATE_LIMITS=off`), and this one, the load generator and the floor's client.
 */
export async function startSeparated(): Promise<BenchEnvironment & { pids: { host: number; storage: number }; hostCpu(): Promise<HostCpu> }> {
  const dataDir = await mkdtemp(join(benchDir(), 'drive-bench-'));
  const storage = await spawnUntil(['test/bench/storage-process.ts', join(dataDir, 'storage')], {}, /^(\{.*\})$/m);
  const endpoints = JSON.parse(storage.match) as { dynamodb: string; s3: string; credentials: Credentials };
  const host = await spawnUntil(['test/bench/host-process.ts', join(dataDir, 'host')], {
    DRIVE_STORAGE: storage.match,
    DRIVE_API_KEYS: `${DRIVE}:${BENCH_KEY}`,
    DRIVE_RATE_LIMITS: 'off',
    // A warm Lambda container trusts a verified key for 30 s; measure that, not the local default of 0.
    DRIVE_KEY_CACHE_SECONDS: '30',
    // The bench measures the host as it runs in production, never with the tests' contract checker.
    DRIVE_CHECK_CONTRACT: '',
  }, /listening on (http:\/\/\S+)/, { ipc: true, forwardErrors: 'host' });
  const clients = storageClients(endpoints.dynamodb, endpoints.s3, endpoints.credentials);
  const env = environment(host.match, clients);
  return {
    pids: { host: host.child.pid!, storage: storage.child.pid! },
    hostCpu: () => askHostCpu(host.child),
    ...env,
    close: () => closeAll(clients, env, [host.child, storage.child], dataDir),
  };
}

/**
 * `npm start` as a user runs it (bin/local.ts: the handlers, and the storage on a thread of its own, in one
 * process), with the separated layout's settings; the bench reaches the storage through the data dir's
 * endpoints and credentials, as `npm run fsck` does.
 */
export async function startNpmStart(): Promise<BenchEnvironment & { pids: { host: number } }> {
  const dataDir = await mkdtemp(join(benchDir(), 'drive-bench-'));
  const host = await spawnUntil(['bin/local.ts'], {
    PORT: '0',
    DRIVE_DATA_DIR: dataDir,
    DRIVE_API_KEYS: `${DRIVE}:${BENCH_KEY}`,
    DRIVE_RATE_LIMITS: 'off',
    DRIVE_KEY_CACHE_SECONDS: '30',
    DRIVE_CHECK_CONTRACT: '',
  }, /listening on (http:\/\/\S+)/, { forwardErrors: 'npm start' });
  const endpoints = JSON.parse(await readFile(join(dataDir, ENDPOINTS_FILE), 'utf8')) as { dynamodb: string; s3: string };
  const clients = storageClients(endpoints.dynamodb, endpoints.s3, await localCredentials(dataDir));
  const env = environment(host.match, clients);
  return {
    pids: { host: host.child.pid! },
    ...env,
    close: () => closeAll(clients, env, [host.child], dataDir),
  };
}

/** Closes the bench's clients, stops `children` in order, and removes the data dir. */
async function closeAll(clients: { s3: S3Client; dynamodb: DynamoDBClient }, env: { closeClients(): void }, children: ChildProcess[], dataDir: string): Promise<void> {
  clients.s3.destroy();
  clients.dynamodb.destroy();
  env.closeClients();
  for (const child of children) await stop(child);
  await removeDataDir(dataDir);
}

/** The host's split of its CPU (lib/local/host-cpu.ts), asked over the IPC channel of host-process.ts. */
function askHostCpu(child: ChildProcess): Promise<HostCpu> {
  return new Promise((resolve) => {
    child.once('message', (message) => resolve(message as HostCpu));
    child.send('host-cpu');
  });
}

/**
 * Where the storage keeps its files: in memory (/dev/shm) where there is one, since a run writes gigabytes
 * and the disk's write-back otherwise swings the figures from round to round; real S3 is not this disk.
 */
export function benchDir(): string {
  return process.env.BENCH_DATA_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
}

/**
 * Starts `node --import tsx <args>` and waits for a line of its output to match `pattern` (group 1). Its output
 * after that is read and dropped, except with `forwardErrors`: then each line of it at level ERROR (a 500's
 * `unhandled error` and its request line) and everything on its stderr is copied to this process's stderr,
 * prefixed with that name, so that a failure under load leaves its cause in the bench's output.
 */
export async function spawnUntil(args: string[], env: Record<string, string>, pattern: RegExp, options: { ipc?: boolean; forwardErrors?: string } = {}): Promise<{ child: ChildProcess; match: string }> {
  // BENCH_PROFILE_DIR=<dir> writes a CPU profile of each process there when it stops.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const stdio = options.ipc ? (['ignore', 'pipe', 'pipe', 'ipc'] as const) : (['ignore', 'pipe', 'pipe'] as const);
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: [...stdio] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start:\n${output}`)), 30_000);
    const check = () => {
      const match = pattern.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      if (options.forwardErrors === undefined) {
        child.stdout!.resume();
        child.stderr!.resume();
      } else {
        forwardErrorLines(child, options.forwardErrors);
      }
      resolve({ child, match: match[1] });
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      check();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`${args[0]} exited with ${code}:\n${output}`)));
  });
}

/** Copies `child`'s ERROR lines on stdout, and all of its stderr, to this process's stderr as `<name>: <line>`. */
function forwardErrorLines(child: ChildProcess, name: string): void {
  let partial = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    // Most chunks hold no error line: only those with one (or a line cut at the chunk's end) are split.
    const text = partial + chunk;
    const cut = text.lastIndexOf('\n');
    partial = text.slice(cut + 1).slice(-64 * 1024);
    if (!text.includes('"level":"ERROR"', 0)) return;
    for (const line of text.slice(0, cut).split('\n')) if (line.includes('"level":"ERROR"')) process.stderr.write(`${name}: ${line}\n`);
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => process.stderr.write(chunk.replace(/^(?=.)/gm, `${name}: `)));
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * Starts the local host in this process with `rateLimits`, so that the handlers' own SDK clients can be
 * observed (for counting calls, not for timing).
 */
export async function startHostInProcess(rateLimits: string): Promise<BenchEnvironment & { handlerClients: { dynamodb: DynamoDBClient; s3: S3Client } }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'drive-bench-'));
  process.env.DRIVE_RATE_LIMITS = rateLimits;
  process.env.DRIVE_KEY_CACHE_SECONDS = '30';
  const host: LocalHost = await startLocalHost({ port: 0, dataDir, apiKeys: `${DRIVE}:${BENCH_KEY}`, log: () => undefined });
  const clients = storageClients(process.env.DRIVE_DYNAMODB_ENDPOINT!, process.env.DRIVE_S3_ENDPOINT!, {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID!,
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY!,
  });
  const env = environment(host.url, clients);
  // The same module instances the host loaded for its handlers.
  const handlerClients = { dynamodb: (await import('../../functions/wiring/dynamodb.js')).dynamodb, s3: (await import('../../functions/wiring/objects.js')).s3 };
  return {
    ...env,
    handlerClients,
    close: async () => {
      clients.s3.destroy();
      clients.dynamodb.destroy();
      env.closeClients();
      await host.close();
      await removeDataDir(dataDir);
    },
  };
}

function storageClients(dynamodbEndpoint: string, s3Endpoint: string, credentials: Credentials) {
  // Tuned as the handlers' clients are: the floor is the least work that could do the job.
  const config = { region: LOCAL_REGION, credentials, cacheMiddleware: true, logger: QUIET_SDK_LOGGER };
  return {
    s3: signWithContentMd5(new S3Client({ ...config, endpoint: s3Endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' })),
    dynamodb: new DynamoDBClient({ ...config, endpoint: dynamodbEndpoint }),
  };
}

function environment(url: string, clients: { s3: S3Client; dynamodb: DynamoDBClient }) {
  const admin = new DynamoKeyAdmin(clients.dynamodb, LOCAL_RESOURCES.accessTable);
  const others = new Map<string, BenchClient>();
  const api = new BenchClient(url, BENCH_KEY);
  return {
    url,
    api,
    clientFor: async (drive: string) => {
      let client = others.get(drive);
      if (!client) {
        client = new BenchClient(url, (await admin.create(drive, 'bench')).secret);
        others.set(drive, client);
      }
      return client;
    },
    floor: new Floor(clients.s3, clients.dynamodb, LOCAL_RESOURCES.bucket, LOCAL_RESOURCES.nodesTable),
    seeder: new Seeder(clients.s3, clients.dynamodb, LOCAL_RESOURCES.bucket, LOCAL_RESOURCES.nodesTable),
    closeClients: () => {
      api.close();
      for (const client of others.values()) client.close();
    },
  };
}

/**
 * The environment a handler reads in Lambda, as the local host sets it, over the storage at `endpoints`: the
 * bench's handlers in a process of their own (`handler-cpu.ts`, `handler-alone.ts`), keys cached 30 s as in a
 * warm container, no rate limits, and the function's name (one invocation at a time, as in Lambda).
 */
export function handlerEnvironment(endpoints: { dynamodb: string; s3: string; credentials: { accessKeyId: string; secretAccessKey: string } }, functionName: string): Record<string, string> {
  return {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: endpoints.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: endpoints.credentials.secretAccessKey,
    DRIVE_DYNAMODB_ENDPOINT: endpoints.dynamodb,
    DRIVE_S3_ENDPOINT: endpoints.s3,
    DRIVE_NODES_TABLE: LOCAL_RESOURCES.nodesTable,
    DRIVE_ACCESS_TABLE: LOCAL_RESOURCES.accessTable,
    DRIVE_BUCKET: LOCAL_RESOURCES.bucket,
    DRIVE_UPLOADS_TABLE: LOCAL_RESOURCES.uploadsTable,
    DRIVE_CHANGES_TABLE: LOCAL_RESOURCES.changesTable,
    DRIVE_KEY_CACHE_SECONDS: '30',
    DRIVE_RATE_LIMITS: 'off',
    DRIVE_API_SCHEME: 'http',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
  };
}

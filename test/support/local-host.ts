import { DynamoDBClient, ScanCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoKeyAdmin } from '../../functions/aws/api-key-admin';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { DynamoTrashStore } from '../../functions/aws/dynamo-trash';
import { S3ObjectStore } from '../../functions/aws/s3-object-store';
import { SETTINGS } from '../../functions/config';
import type { Role } from '../../functions/core/access';
import { ancestorsOf } from '../../functions/core/paths';
import { type TrashSwept, sweepTrash } from '../../functions/core/purge';
import { mapLimit } from '../../functions/core/concurrency';
import { LOCAL_REGION, LOCAL_RESOURCES, S3_WRITES_DIR, localCredentials, runningHost, startEmbeddedDynamo } from '../../lib/local/emulators';
import { markJournalInUse } from '../../lib/local/s3rver-recovery';
import S3Object from 's3rver/lib/models/object';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { CONTRACT_VIOLATIONS_FILE } from '../../lib/local/contract';
import { cpuSecondsOf, noteHostCpu, noteSharedHostCpu } from './cpu-log';
import { nodeArgs } from './host-bundle-files';
import { type RegisteredHost, registerHost, registeredHost, registryDir } from './host-registry';

const ROOT = resolve(__dirname, '..', '..');

/** A local host (`bin/local.ts`) running in a child process on an ephemeral port. */
export interface RunningHost {
  url: string;
  dataDir: string;
  output: () => string;
  /** Sends `signal` and resolves with the exit code (a shared host: ends this file's use of it, and resolves with null). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** The CPU seconds the host's process has spent so far; undefined once it has exited (or where /proc has none). */
  cpuSeconds(): number | undefined;
  /** A worker's shared host (`sharedHost`): the run's teardown stops it and removes its data dir. */
  shared?: boolean;
}

/**
 * Polls until `check` holds (a line in the host's log, a state it reaches). No wall-clock limit, which a busy
 * machine would pass: it fails if the host exits first, or spends `cpuSeconds` of CPU while `check` fails
 * (what it waits for takes far less); Jest's timeout is the backstop for a host that idles.
 */
export async function untilHost(host: RunningHost, check: () => boolean | Promise<boolean>, what: string, cpuSeconds = 30): Promise<void> {
  const from = host.cpuSeconds();
  for (;;) {
    if (await check()) return;
    const now = host.cpuSeconds();
    if (now === undefined) throw new Error(`the host stopped before ${what}:\n${host.output().slice(-4000)}`);
    if (from !== undefined && now - from > cpuSeconds) throw new Error(`the host spent ${cpuSeconds} s of CPU and not ${what}:\n${host.output().slice(-4000)}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/**
 * How much CPU a host may spend before it prints its address: a start takes 1 to 3 s of CPU (docs/testing.md),
 * on any machine, however loaded. A wall-clock limit would fail on a busy machine (host starts passed 30 s at
 * a load of 20); Jest's own test timeout is the wall backstop for a host that hangs without spending CPU.
 */
export const START_CPU_SECONDS = 30;

/**
 * Starts `npm start`'s entry point (or another host `entry`) with `env` and waits until it prints its address,
 * giving up once it spent `startCpuSeconds` of CPU (a data dir of 100,000 objects takes more to open).
 */
export async function startHost(env: Record<string, string>, dataDir?: string, entry = 'bin/local.ts', startCpuSeconds = START_CPU_SECONDS): Promise<RunningHost> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'drive-test-')));
  const child = spawn(process.execPath, [...nodeArgs(entry), ...(entry === 'bin/local.ts' ? [] : [dir])], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', DRIVE_DATA_DIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Whether this host checks its answers against the OpenAPI document (test/setup-env.ts turns it on).
  const checked = (env.DRIVE_CHECK_CONTRACT ?? process.env.DRIVE_CHECK_CONTRACT) === '1';
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  // Should the test give up on it (Jest's timeout), the run's teardown still ends it (test/host-bundle-teardown.ts).
  const registered = registerHost(child.pid);
  void exited.then(registered.remove);

  const url = await addressOf(child, () => output, exited, startCpuSeconds);

  return {
    url,
    dataDir: dir,
    output: () => output,
    cpuSeconds: () => (child.exitCode === null && child.signalCode === null ? cpuSecondsOf(child.pid) : undefined),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) {
        noteHostCpu(child.pid);
        kill(child, signal);
      }
      const code = await exited;
      if (checked) await assertContractKept(dir);
      return code;
    },
  };
}

/**
 * Resolves with the address the host `child` prints; rejects, and kills it, if it exits first or spends
 * `cpuSeconds` of CPU without printing it. No wall-clock limit: a loaded machine only makes it later.
 */
function addressOf(child: ChildProcess, output: () => string, exited: Promise<number | null>, cpuSeconds = START_CPU_SECONDS): Promise<string> {
  return new Promise<string>((done, fail) => {
    let settled = false;
    const settle = () => {
      settled = true;
      clearInterval(poll);
    };
    const check = () => {
      if (settled) return;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output());
      if (match) {
        settle();
        done(match[1]);
        return;
      }
      const spent = cpuSecondsOf(child.pid);
      if (spent !== undefined && spent > cpuSeconds) {
        settle();
        // A host given up on is killed: one that listened later would outlive its test and keep Jest from exiting.
        child.kill('SIGKILL');
        fail(new Error(`local host did not start within ${cpuSeconds} s of CPU:\n${output()}`));
      }
    };
    // A state polled, not a deadline: the address in the output (a pipe's data, or a log file's lines), or the CPU spent.
    const poll = setInterval(check, 100);
    child.stdout?.on('data', check);
    exited.then((code) => {
      if (settled) return;
      settle();
      fail(new Error(`local host exited with ${code} before it started:\n${output()}`));
    });
  });
}

/**
 * Throws if the host noted answers the OpenAPI document does not allow (lib/local/contract.ts), so that the
 * test that made them fails with the list.
 */
async function assertContractKept(dataDir: string, from = 0): Promise<void> {
  let lines: string;
  try {
    lines = (await readFile(join(dataDir, CONTRACT_VIOLATIONS_FILE))).subarray(from).toString('utf8');
  } catch {
    return;
  }
  const violations = lines.split('\n').filter((line) => line !== '');
  if (violations.length > 0) throw new Error(`the host sent ${violations.length} answer(s) the OpenAPI document does not allow:\n${violations.slice(0, 20).join('\n')}`);
}

function kill(child: ChildProcess, signal: NodeJS.Signals): void {
  child.kill(signal);
}

/** Stops a host made by `startHost` and removes its data dir. */
export async function stopHost(host: RunningHost): Promise<void> {
  try {
    await host.stop();
  } finally {
    if (!host.shared) await removeDataDir(host.dataDir);
  }
}

/**
 * The Jest worker's host for files that need nothing of a host but their keys, with `env` beside them
 * (`DRIVE_RATE_LIMITS: 'off'` and the like): started by the first such file, with the same `env`, and used by
 * the files after it in the worker, each with keys of its own drives added to it as `DRIVE_API_KEYS` would
 * have made them (behind the API, in the access table), so the host's start (1 to 3 s of CPU) is paid once a
 * worker rather than once a file (docs/testing.md, "Where the time goes"). A file that uses one therefore
 * keeps to drives of its own (no other file sharing a host names them) and asserts nothing of the
 * whole store: other files' data is there. What the host logs and the contract violations it notes while
 * the file uses it are the file's (`output`, `stop`). A file that restarts or kills its host, drives its
 * clock, reads its log for another file's lines or sets any other env keeps a host of its own (`startHost`).
 * `stopHost` ends the file's use of it; the run's teardown stops it (test/support/host-registry.ts).
 * Without a registry (TEST_HOST_BUNDLE unset) it is a host of the file's own.
 */
export async function sharedHost(env: Record<string, string>): Promise<RunningHost> {
  const { DRIVE_API_KEYS: keys = '', ...rest } = env;
  if (!registryDir()) return startHost(env);
  const signature = createHash('sha256').update(JSON.stringify(Object.entries(rest).sort())).digest('hex').slice(0, 12);
  const name = `shared-${process.pid}-${signature}`;
  let running = registeredHost(name);
  const started = running === undefined;
  if (running === undefined) running = await launchShared(env, name);
  else await addKeys(running.dataDir!, keys);
  const { pid, url, dataDir, log } = running as Required<typeof running>;
  const cpuBefore = started ? 0 : (cpuSecondsOf(pid) ?? 0);
  const logFrom = started ? 0 : sizeOf(log);
  const violationsFrom = sizeOf(join(dataDir, CONTRACT_VIOLATIONS_FILE));
  const checked = (env.DRIVE_CHECK_CONTRACT ?? process.env.DRIVE_CHECK_CONTRACT) === '1';
  return {
    url,
    dataDir,
    shared: true,
    output: () => readFileSync(log).subarray(logFrom).toString('utf8'),
    cpuSeconds: () => cpuSecondsOf(pid),
    stop: async () => {
      const spent = cpuSecondsOf(pid);
      if (spent !== undefined) noteSharedHostCpu(spent - cpuBefore, started);
      if (checked) await assertContractKept(dataDir, violationsFrom);
      return null;
    },
  };
}

/** Starts a worker's shared host with `env`, its output in a log file (it outlives the file that starts it). */
async function launchShared(env: Record<string, string>, name: string): Promise<RegisteredHost> {
  const dataDir = await mkdtemp(join(tmpdir(), 'drive-shared-'));
  const log = join(dataDir, 'host.log');
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, nodeArgs('bin/local.ts'), {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', DRIVE_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  // The worker does not wait for it: the run's teardown ends it.
  child.unref();
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const host = { pid: child.pid!, dataDir, log };
  registerHost(child.pid, host, name);
  const url = await addressOf(child, () => readFileSync(log, 'utf8'), exited);
  registerHost(child.pid, { ...host, url }, name);
  return { ...host, url };
}

/** Makes each `DRIVE_API_KEYS` entry of `keys` a key of the running host, as its start makes them. */
async function addKeys(dataDir: string, keys: string): Promise<void> {
  const { endpoints, dynamodb, destroy } = await storageOf(dataDir);
  try {
    const admin = new DynamoKeyAdmin(dynamodb, endpoints.accessTable);
    for (const entry of keys.split(',').filter((entry) => entry !== '')) {
      const fields = entry.split(':');
      const [drive, secret, role, ...prefix] = fields.length === 1 ? ['default', entry] : fields;
      const made = await admin.upsert(drive, SETTINGS.apiKeys.name, { role: role as Role | undefined, prefix: prefix.length > 0 ? prefix.join(':') : undefined }, secret);
      if (made === 'revoked') throw new Error(`the shared host's key for drive ${drive} was revoked: a file sharing a host reused another's secret`);
    }
  } finally {
    destroy();
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Removes a data dir made by `startHost`. */
export async function removeDataDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** SDK clients of the running host's embedded S3 and DynamoDB, and the names of its bucket and tables. */
async function storageOf(dataDir: string) {
  const endpoints = JSON.parse(await readFile(join(dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
  const credentials = await localCredentials(dataDir);
  const s3 = new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', credentials, forcePathStyle: true });
  const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'us-east-1', credentials });
  const destroy = () => {
    s3.destroy();
    dynamodb.destroy();
  };
  return { endpoints, s3, dynamodb, destroy };
}

/** Deletes one object from the running host's embedded S3 behind the API's back, as a fault would. */
export async function deleteStoredObject(dataDir: string, key: string): Promise<void> {
  const { endpoints, s3, destroy } = await storageOf(dataDir);
  try {
    await s3.send(new DeleteObjectCommand({ Bucket: endpoints.bucket, Key: key }));
  } finally {
    destroy();
  }
}

/**
 * Moves the share link `id`'s expiry to `at` behind the API's back, as the passing of time would: expiry
 * is tested without waiting for it.
 */
export async function setLinkExpiry(dataDir: string, id: string, at: Date): Promise<void> {
  const { endpoints, dynamodb, destroy } = await storageOf(dataDir);
  try {
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: endpoints.accessTable,
        Key: { pk: { S: `link#${id}` } },
        UpdateExpression: 'SET expiresAt = :at',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': { N: String(Math.floor(at.getTime() / 1000)) } },
      }),
    );
  } finally {
    destroy();
  }
}

/**
 * Moves the large-upload session `id`'s expiry to `at` behind the API's back, as the passing of time would:
 * the sweep's work is tested without waiting for a short expiry (which a slow client could outlive).
 */
export async function setUploadExpiry(dataDir: string, id: string, at: Date): Promise<void> {
  const { endpoints, dynamodb, destroy } = await storageOf(dataDir);
  try {
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: endpoints.uploadsTable,
        Key: { id: { S: id } },
        UpdateExpression: 'SET expiresAt = :ttl, expiresAtIso = :iso',
        ConditionExpression: 'attribute_exists(id)',
        ExpressionAttributeValues: { ':ttl': { N: String(Math.floor(at.getTime() / 1000)) }, ':iso': { S: at.toISOString() } },
      }),
    );
  } finally {
    destroy();
  }
}

/**
 * Moves the minted key `keyId`'s expiry to `at` behind the API's back, as the passing of time would: a key's
 * death at its `expires_at` is tested without waiting for it.
 */
export async function setKeyExpiry(dataDir: string, keyId: string, at: Date): Promise<void> {
  const { endpoints, dynamodb, destroy } = await storageOf(dataDir);
  try {
    const { Items } = await dynamodb.send(
      new ScanCommand({ TableName: endpoints.accessTable, FilterExpression: 'keyId = :id', ExpressionAttributeValues: { ':id': { S: keyId } } }),
    );
    if (Items?.length !== 1) throw new Error(`no one key item with id ${keyId}`);
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: endpoints.accessTable,
        Key: { pk: Items[0].pk },
        UpdateExpression: 'SET keyExpiresAt = :at',
        ConditionExpression: 'attribute_exists(keyExpiresAt)',
        ExpressionAttributeValues: { ':at': { S: at.toISOString() } },
      }),
    );
  } finally {
    destroy();
  }
}

/**
 * Runs the trash's part of the scheduled sweep (functions/sweep.ts) on the running host's embedded S3 and
 * DynamoDB, through the same adapters, with its clock at `now`: purge times pass without waiting for them.
 * The host's own sweep runs meanwhile on the machine's clock, as a second scheduled run would.
 */
export async function sweepTrashAt(dataDir: string, now: Date): Promise<TrashSwept> {
  const { endpoints, s3, dynamodb, destroy } = await storageOf(dataDir);
  try {
    return await sweepTrash({ trash: new DynamoTrashStore(dynamodb, endpoints.nodesTable), objects: new S3ObjectStore(s3, endpoints.bucket) }, now);
  } finally {
    destroy();
  }
}

/** What the running host's embedded S3 and DynamoDB hold, read through the SDK as fsck would. */
export async function storedState(dataDir: string): Promise<{ objectKeys: string[]; nodeItems: Record<string, AttributeValue>[] }> {
  const { endpoints, s3, dynamodb, destroy } = await storageOf(dataDir);
  try {
    const objectKeys: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: endpoints.bucket, ContinuationToken: token }));
      objectKeys.push(...(page.Contents ?? []).map((object) => object.Key!));
      token = page.NextContinuationToken;
    } while (token);
    const nodeItems: Record<string, AttributeValue>[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamodb.send(new ScanCommand({ TableName: endpoints.nodesTable, ExclusiveStartKey: start }));
      nodeItems.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return { objectKeys, nodeItems };
  } finally {
    destroy();
  }
}

/**
 * Stores a file at `path` behind the API's back, with the folders above it, as the host's own store
 * adapters write them: a name today's rules refuse can stand for one stored before those rules.
 */
export async function storeBehindTheApi(dataDir: string, drive: string, path: string, data: string): Promise<void> {
  const { endpoints, s3, dynamodb, destroy } = await storageOf(dataDir);
  try {
    const nodes = new DynamoNodeStore(dynamodb, endpoints.nodesTable);
    const createdAt = new Date().toISOString();
    for (const folder of ancestorsOf(path)) await nodes.createFolder(drive, { kind: 'folder', id: randomUUID(), path: folder, createdAt });
    const id = randomUUID();
    const bytes = Buffer.from(data);
    await new S3ObjectStore(s3, endpoints.bucket).put(`${drive}/${id}`, bytes, 'text/plain');
    const etag = createHash('md5').update(bytes).digest('hex');
    await nodes.putFile(drive, { kind: 'file', id, path, size: bytes.length, contentType: 'text/plain', createdAt, objectKey: `${drive}/${id}`, etag });
  } finally {
    destroy();
  }
}

/** A file to seed: its drive path and a way to read its bytes (called once, when it is stored). */
export interface SeedFile {
  path: string;
  read: () => Promise<Buffer>;
}

/**
 * Stores many files (and the folders above them) in the drive `drive` of the data dir `dataDir`, before a host
 * runs on it, as the host's own stores keep them: each file's record through the DynamoDB adapter
 * (`DynamoNodeStore`, with the hex MD5 ETag an upload gives) on the data dir's embedded DynamoDB, as the key
 * tool opens it, and its bytes as an object of the data dir's embedded S3, written by s3rver's own store (the
 * code behind its HTTP PUT) without the HTTP: on a loaded 2-core machine an object PUT through the SDK and the
 * signing gateway cost about 8 ms of CPU, so 100,000 files would take many minutes more. For benchmarks that
 * need a drive of 100,000 files without 100,000 uploads; `concurrency` files are written at once.
 */
export async function seedDataDir(dataDir: string, drive: string, files: readonly SeedFile[], options: { concurrency?: number; onProgress?: (done: number) => void } = {}): Promise<void> {
  if (await runningHost(dataDir)) throw new Error(`a host runs on ${dataDir}: seed its data dir before starting it`);
  const dynamo = await startEmbeddedDynamo(dataDir);
  const dynamodb = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION, credentials: dynamo.credentials });
  try {
    const objects = new FilesystemStore(join(dataDir, 's3'));
    await objects.putBucket(LOCAL_RESOURCES.bucket);
    // Whole objects only, written before any host runs: its start need not look at them.
    await markJournalInUse(join(dataDir, S3_WRITES_DIR));
    const nodes = new DynamoNodeStore(dynamodb, LOCAL_RESOURCES.nodesTable);
    const createdAt = new Date().toISOString();
    const folders = [...new Set(files.flatMap((file) => ancestorsOf(file.path)))].sort();
    await mapLimit(folders, options.concurrency ?? 16, async (folder) => {
      await nodes.createFolder(drive, { kind: 'folder', id: randomUUID(), path: folder, createdAt });
    });
    let done = 0;
    await mapLimit(files, options.concurrency ?? 16, async (file) => {
      const bytes = await file.read();
      const id = randomUUID();
      const objectKey = `${drive}/${id}`;
      const contentType = 'application/octet-stream';
      const stored = await objects.putObject(new S3Object(LOCAL_RESOURCES.bucket, objectKey, bytes, { 'content-type': contentType }));
      await nodes.putFile(drive, { kind: 'file', id, path: file.path, size: bytes.length, contentType, createdAt, objectKey, etag: stored.md5 });
      options.onProgress?.(++done);
    });
  } finally {
    dynamodb.destroy();
    await dynamo.close();
  }
}

import { DynamoDBClient, ScanCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { S3ObjectStore } from '../../functions/aws/s3-object-store';
import { ancestorsOf } from '../../functions/core/paths';
import { mapLimit } from '../../functions/core/concurrency';
import { LOCAL_REGION, LOCAL_RESOURCES, localCredentials, runningHost, startEmbeddedDynamo } from '../../lib/local/emulators';
import S3Object from 's3rver/lib/models/object';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { CONTRACT_VIOLATIONS_FILE } from '../../lib/local/contract';
import { noteHostCpu } from './cpu-log';
import { nodeArgs } from './host-bundle-files';

const ROOT = resolve(__dirname, '..', '..');

/** A local host (`bin/local.ts`) running in a child process on an ephemeral port. */
export interface RunningHost {
  url: string;
  dataDir: string;
  output: () => string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `npm start`'s entry point (or another host `entry`) with `env` and waits until it prints its address,
 * for at most `startMs` (a data dir of 100,000 objects takes longer than the default to open on a loaded machine).
 */
export async function startHost(env: Record<string, string>, dataDir?: string, entry = 'bin/local.ts', startMs = 30_000): Promise<RunningHost> {
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

  const url = await new Promise<string>((done, fail) => {
    // A host given up on is killed: one that listened later would outlive its test and keep Jest from exiting.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`local host did not start within ${startMs / 1000} s:\n${output}`));
    }, startMs);
    const check = () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(match[1]);
      }
    };
    child.stdout!.on('data', check);
    exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`local host exited with ${code} before it started:\n${output}`));
    });
  });

  return {
    url,
    dataDir: dir,
    output: () => output,
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
 * Throws if the host noted answers the OpenAPI document does not allow (lib/local/contract.ts), so that the
 * test that made them fails with the list.
 */
async function assertContractKept(dataDir: string): Promise<void> {
  let lines: string;
  try {
    lines = await readFile(join(dataDir, CONTRACT_VIOLATIONS_FILE), 'utf8');
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
    await removeDataDir(host.dataDir);
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

import {
  type AttributeValue,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ResourceNotFoundException,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import S3rver from 's3rver';
import { DUMMY_ACCOUNT } from 's3rver/lib/models/account';
import { type Credentials, type GatewayError, startGateway } from './signed-gateway';
import { type MultipartEtagStore, checkPartEtags, multipartGaps, multipartObjectEtags } from './s3rver-multipart';
import { type DeletingStore, deleteInConstantTime } from './s3rver-deletes';
import S3Error from 's3rver/lib/models/error';
import { type WritingStore, journalWrites, recoverInterruptedWrites } from './s3rver-recovery';
import { type ListingStore, listingsThroughDeletes } from './s3rver-listing';
import { type CopyingStore, faithfulCopies, uploadPartCopy } from './s3rver-copy';
import { type MetadataStore, conditionalReads } from './s3rver-conditional';
import { type ConfigStore, cacheBucketConfigs } from './s3rver-bucket-config';
import { dynamoTransactions, recoverTransactions } from './dynamo-transactions';
import { embeddedDynalite } from './embedded-dynalite';
import { streamTap } from './dynamo-stream';
import { openDataDir } from './data-dir';
import { ACCESS_PARTITION_KEY, CHANGES_PARTITION_KEY, CHANGES_SORT_KEY, KEYS_BY_DRIVE_INDEX, LINKS_BY_DRIVE_INDEX, NODES_PARTITION_KEY, NODES_SORT_KEY, UPLOADS_PARTITION_KEY } from '../../functions/aws/schema';

/** Where the embedded DynamoDB's streams are appended, in the data dir (lib/local/dynamo-stream.ts). */
export const STREAM_DIR = 'dynamodb-stream';
/** Names the local host gives its tables and bucket. */
export const LOCAL_RESOURCES = { nodesTable: 'drive-nodes', accessTable: 'drive-access', uploadsTable: 'drive-uploads', changesTable: 'drive-changes', bucket: 'drive-files' } as const;

export const LOCAL_REGION = 'us-east-1';

/** Where a running local host records its emulators, for tools that share its data dir. */
export const ENDPOINTS_FILE = 'endpoints.json';
/** The emulators' credentials, made at random for each data dir and readable by its owner only. */
export const CREDENTIALS_FILE = 'credentials.json';
/** The folder of the embedded S3's writes in progress (lib/local/s3rver-recovery.ts), beside its `s3` folder. */
export const S3_WRITES_DIR = 's3-writes';

export interface Emulators {
  dynamodbEndpoint: string;
  s3Endpoint: string;
  /** The only credentials the emulators' gateways accept. */
  credentials: Credentials;
  close(): Promise<void>;
}

/**
 * The data dir's emulator credentials, made at random on first use and kept in a file only its owner may
 * read: every request to the embedded S3 and DynamoDB must be signed with them.
 */
export async function localCredentials(dataDir: string): Promise<Credentials> {
  const file = join(dataDir, CREDENTIALS_FILE);
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  } catch {
    const made: Credentials = { accessKeyId: `DRIVELOCAL${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(30).toString('base64url') };
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    try {
      await writeFile(file, JSON.stringify(made), { mode: 0o600, flag: 'wx' });
      return made;
    } catch {
      // Another process made them first: theirs stand.
      return JSON.parse(await readFile(file, 'utf8')) as Credentials;
    }
  }
}

/**
 * Starts embedded DynamoDB (dynalite, LevelDB under `<dataDir>/dynamodb`) and S3 (s3rver, files under
 * `<dataDir>/s3`), with the tables and bucket created if missing. Neither listens on a port of its own: each
 * sits behind a gateway on 127.0.0.1 that admits only requests signed with the data dir's credentials
 * (lib/local/signed-gateway.ts), which calls both in this thread.
 */
export async function startEmulators(dataDir: string): Promise<Emulators> {
  const dynamo = await startEmbeddedDynamo(dataDir);
  try {
    await mkdir(join(dataDir, 's3'), { recursive: true });
    const s3 = new S3rver({ directory: join(dataDir, 's3'), silent: true, configureBuckets: [{ name: LOCAL_RESOURCES.bucket, configs: [] }] });
    // A host killed mid-write leaves half-written objects that S3 would never show: the journal names them.
    const journalDir = join(dataDir, S3_WRITES_DIR);
    await recoverInterruptedWrites(s3.store as unknown as WritingStore, LOCAL_RESOURCES.bucket, join(dataDir, 's3', LOCAL_RESOURCES.bucket), journalDir);
    s3.middleware.unshift(multipartGaps(join(dataDir, 's3')));
    s3.middleware.unshift(uploadPartCopy(s3.store as unknown as CopyingStore, join(dataDir, 's3')));
    s3.middleware.unshift(conditionalReads(s3.store as unknown as MetadataStore));
    faithfulCopies(s3.store as unknown as CopyingStore, (message) => new S3Error('InvalidRequest', message));
    checkPartEtags(s3.store, join(dataDir, 's3'), (message) => new S3Error('InvalidPart', message));
    multipartObjectEtags(s3.store as unknown as MultipartEtagStore, join(dataDir, 's3'));
    deleteInConstantTime(s3.store as unknown as DeletingStore);
    journalWrites(s3.store as unknown as WritingStore, journalDir);
    listingsThroughDeletes(s3.store as unknown as ListingStore);
    cacheBucketConfigs(s3.store as unknown as ConfigStore);
    // s3rver looks the signing key up by its id (it checks no V4 signature itself; the gateway does).
    DUMMY_ACCOUNT.createKeyPair(dynamo.credentials.accessKeyId, dynamo.credentials.secretAccessKey);
    await s3.configureBuckets();
    // s3rver logs every request through koa-logger even when silent: the lines formatted and written into a
    // silent winston logger, and each streamed answer (every GetObject) piped through a counting stream for
    // its length. Nothing reads those lines.
    s3.middleware = s3.middleware.filter((middleware) => (middleware as { name?: string }).name !== 'logger');
    // The gateway hands each checked request to s3rver's Koa app in this thread, not over a socket: one HTTP
    // exchange a request instead of two. The app is composed now, after every middleware above.
    const s3Handler = s3.callback();
    const gateway = await startGateway({ service: 's3', handler: s3Handler, region: LOCAL_REGION, credentials: dynamo.credentials, refuse: refuseUnsafeS3 });
    return {
      dynamodbEndpoint: dynamo.endpoint,
      s3Endpoint: gateway.endpoint,
      credentials: dynamo.credentials,
      close: async () => {
        await gateway.close();
        // What closing its own server would do (s3rver's listen): its logger let go.
        s3.logger.exceptions.unhandle();
        s3.logger.close();
        await dynamo.close();
      },
    };
  } catch (error) {
    await dynamo.close();
    throw error;
  }
}

/**
 * Refuses what s3rver would turn into a path outside its folder: a bucket other than Drive's, a key with a
 * `.` or `..` segment or a backslash, an upload id that is not the 32 hex digits s3rver makes, a part number
 * outside S3's 1 to 10,000.
 */
function refuseUnsafeS3(req: IncomingMessage, url: URL): GatewayError | undefined {
  const invalid = (message: string): GatewayError => ({ status: 400, code: 'InvalidArgument', message });
  const [, bucket, ...key] = url.pathname.split('/');
  let segments: string[];
  try {
    segments = key.map((segment) => decodeURIComponent(segment));
  } catch {
    return invalid('the key is not valid percent-encoding');
  }
  if (bucket !== '' && bucket !== LOCAL_RESOURCES.bucket) return { status: 404, code: 'NoSuchBucket', message: 'The specified bucket does not exist' };
  if (segments.some((segment) => segment === '.' || segment === '..' || segment.includes('\\') || segment.includes('/'))) return invalid('the key has a . or .. segment or a backslash');
  // A copy's source is a path into the store as well: the same bucket, and no segment that climbs out of it.
  const copySource = req.headers['x-amz-copy-source'];
  if (copySource !== undefined) {
    // No `?` at all (Drive names no version): s3rver reads the whole header as the key, so what follows a `?`
    // would escape a check of what precedes it.
    if (String(copySource).includes('?')) return invalid('the copy source names a version or holds a "?"; this store keeps no versions');
    let source: string[];
    try {
      source = decodeURIComponent(String(copySource).replace(/^\//, '')).split('/');
    } catch {
      return invalid('the copy source is not valid percent-encoding');
    }
    if (source[0] !== LOCAL_RESOURCES.bucket) return { status: 404, code: 'NoSuchBucket', message: 'The specified bucket does not exist' };
    if (source.slice(1).some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\\'))) return invalid('the copy source has a . or .. segment or a backslash');
  }
  const uploadId = url.searchParams.get('uploadId');
  if (uploadId !== null && !/^[0-9a-f]{32}$/.test(uploadId)) return { status: 404, code: 'NoSuchUpload', message: 'The specified upload does not exist.' };
  const partNumber = url.searchParams.get('partNumber');
  if (partNumber !== null && !(/^[1-9][0-9]{0,4}$/.test(partNumber) && Number(partNumber) <= 10_000)) return invalid('Part number must be an integer between 1 and 10000, inclusive');
  return undefined;
}

/**
 * Lets pages of `origins` PUT large-upload parts to the embedded S3 and read each part's ETag, as the
 * stack's bucket CORS rule does in AWS. s3rver keeps the rule with the bucket; each start replaces it, as
 * the host's port may change.
 */
export async function allowBrowserUploads(s3Endpoint: string, credentials: Credentials, origins: readonly string[]): Promise<void> {
  const s3 = new S3Client({ endpoint: s3Endpoint, forcePathStyle: true, region: LOCAL_REGION, credentials });
  try {
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: LOCAL_RESOURCES.bucket,
        CORSConfiguration: { CORSRules: [{ AllowedMethods: ['PUT'], AllowedOrigins: [...origins], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 3600 }] },
      }),
    );
  } finally {
    s3.destroy();
  }
}

/**
 * Starts only the embedded DynamoDB on the data dir, behind its signing gateway, with the tables created if
 * missing. LevelDB admits one process at a time: while `npm start` runs, use the endpoint it records instead
 * (`runningHost`). dynalite serves no socket of its own: the gateway and the transaction layer call it in
 * this thread (lib/local/embedded-dynalite.ts), so the gateway is the only way to it.
 */
export async function startEmbeddedDynamo(dataDir: string): Promise<{ endpoint: string; credentials: Credentials; close(): Promise<void> }> {
  // The host opened it already (and said whether it had to be made private); keys and fsck open it here.
  await openDataDir(dataDir);
  await mkdir(join(dataDir, 'dynamodb'), { recursive: true });
  const credentials = await localCredentials(dataDir);
  const dynamo = embeddedDynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
  const close = async () => {
    await gateway?.close();
    await dynamo.close();
  };
  try {
    // Before any request: a host killed mid-transaction left its writes half-applied.
    const walDir = join(dataDir, 'dynamodb-transactions');
    await recoverTransactions(dynamo, walDir);
    // The nodes table's stream, as the stack's (lib/local/dynamo-stream.ts): the change feed's source.
    const tap = streamTap(join(dataDir, STREAM_DIR), [LOCAL_RESOURCES.nodesTable]);
    gateway = await startGateway({ service: 'dynamodb', emulator: dynamo, region: LOCAL_REGION, credentials, transactions: dynamoTransactions(dynamo, walDir, tap) });
  } catch (error) {
    await close();
    throw error;
  }
  try {
    await createTables(gateway.endpoint, credentials);
  } catch (error) {
    await close();
    throw error;
  }
  return { endpoint: gateway.endpoint, credentials, close };
}

/**
 * The emulator endpoints of an `npm start` running on `dataDir`, or undefined if none runs. A host killed
 * with SIGKILL leaves its record behind, its pid may name another process by now (in a container, even the
 * next host's own) and any server may answer on its old port: the record is believed only while its process
 * lives and its DynamoDB accepts this data dir's own credentials (random, kept in the data dir, its owner's
 * alone) and describes Drive's table, which no other server does.
 */
export async function runningHost(dataDir: string): Promise<{ pid: number; dynamodb: string; s3: string } | undefined> {
  let recorded: { pid: number; dynamodb: string; s3: string };
  try {
    recorded = JSON.parse(await readFile(join(dataDir, ENDPOINTS_FILE), 'utf8')) as typeof recorded;
  } catch {
    return undefined;
  }
  if (!alive(recorded.pid)) return undefined;
  return (await servesThisDataDir(recorded.dynamodb, await localCredentials(dataDir))) ? recorded : undefined;
}

/** Whether a process `pid` runs on this machine (one of another user's counts). */
function alive(pid: unknown): boolean {
  // 0 and negative numbers name process groups, which always "live".
  if (!Number.isInteger(pid) || (pid as number) <= 0) return false;
  try {
    process.kill(pid as number, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the DynamoDB at `endpoint` is this data dir's: it accepts a request signed with `credentials` and
 * describes the nodes table. A refusal, another answer or none within 5 s says it is not.
 */
async function servesThisDataDir(endpoint: unknown, credentials: Credentials): Promise<boolean> {
  if (typeof endpoint !== 'string' || !/^http:\/\/127\.0\.0\.1:\d+$/.test(endpoint)) return false;
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials, maxAttempts: 1, requestHandler: { requestTimeout: 5000, connectionTimeout: 5000 } });
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: LOCAL_RESOURCES.nodesTable }));
    return Table?.TableName === LOCAL_RESOURCES.nodesTable;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

/**
 * Gives a table made before its indexes existed the indexes (a data dir from an earlier version): dynalite
 * cannot add an index to a table, so the table is made again with them and its items copied back.
 */
async function addIndexes(client: DynamoDBClient, table: CreateTableCommandInput): Promise<void> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: table.TableName, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  await client.send(new DeleteTableCommand({ TableName: table.TableName }));
  await waitFor(client, table.TableName!, 'gone');
  await client.send(new CreateTableCommand({ ...table, BillingMode: 'PAY_PER_REQUEST' }));
  await waitFor(client, table.TableName!, 'ACTIVE');
  for (const item of items) await client.send(new PutItemCommand({ TableName: table.TableName, Item: item }));
}

/** Waits until the table is `ACTIVE`, or `gone`. */
async function waitFor(client: DynamoDBClient, name: string, state: 'ACTIVE' | 'gone'): Promise<void> {
  for (;;) {
    const status = await client.send(new DescribeTableCommand({ TableName: name })).then(
      (out) => out.Table?.TableStatus,
      (error: unknown) => {
        if (error instanceof ResourceNotFoundException) return 'gone';
        throw error;
      },
    );
    if (status === state) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Creates Drive's four tables at `endpoint` if missing (exported for tests that make them in another DynamoDB). */
export async function createTables(endpoint: string, credentials: Credentials): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials });
  const tables = [
    {
      TableName: LOCAL_RESOURCES.nodesTable,
      KeySchema: [
        { AttributeName: NODES_PARTITION_KEY, KeyType: 'HASH' as const },
        { AttributeName: NODES_SORT_KEY, KeyType: 'RANGE' as const },
      ],
      AttributeDefinitions: [
        { AttributeName: NODES_PARTITION_KEY, AttributeType: 'S' as const },
        { AttributeName: NODES_SORT_KEY, AttributeType: 'S' as const },
      ],
    },
    {
      TableName: LOCAL_RESOURCES.accessTable,
      KeySchema: [{ AttributeName: ACCESS_PARTITION_KEY, KeyType: 'HASH' as const }],
      AttributeDefinitions: [
        { AttributeName: ACCESS_PARTITION_KEY, AttributeType: 'S' as const },
        { AttributeName: KEYS_BY_DRIVE_INDEX.partitionKey, AttributeType: 'S' as const },
        { AttributeName: KEYS_BY_DRIVE_INDEX.sortKey, AttributeType: 'S' as const },
        { AttributeName: LINKS_BY_DRIVE_INDEX.partitionKey, AttributeType: 'S' as const },
        { AttributeName: LINKS_BY_DRIVE_INDEX.sortKey, AttributeType: 'S' as const },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: KEYS_BY_DRIVE_INDEX.name,
          KeySchema: [
            { AttributeName: KEYS_BY_DRIVE_INDEX.partitionKey, KeyType: 'HASH' as const },
            { AttributeName: KEYS_BY_DRIVE_INDEX.sortKey, KeyType: 'RANGE' as const },
          ],
          Projection: { ProjectionType: 'ALL' as const },
        },
        {
          IndexName: LINKS_BY_DRIVE_INDEX.name,
          KeySchema: [
            { AttributeName: LINKS_BY_DRIVE_INDEX.partitionKey, KeyType: 'HASH' as const },
            { AttributeName: LINKS_BY_DRIVE_INDEX.sortKey, KeyType: 'RANGE' as const },
          ],
          Projection: { ProjectionType: 'ALL' as const },
        },
      ],
    },
    {
      TableName: LOCAL_RESOURCES.uploadsTable,
      KeySchema: [{ AttributeName: UPLOADS_PARTITION_KEY, KeyType: 'HASH' as const }],
      AttributeDefinitions: [{ AttributeName: UPLOADS_PARTITION_KEY, AttributeType: 'S' as const }],
    },
    // Issue 27: the drives' logs of changes and the webhooks (a data dir from before gets it at its next start).
    {
      TableName: LOCAL_RESOURCES.changesTable,
      KeySchema: [
        { AttributeName: CHANGES_PARTITION_KEY, KeyType: 'HASH' as const },
        { AttributeName: CHANGES_SORT_KEY, KeyType: 'RANGE' as const },
      ],
      AttributeDefinitions: [
        { AttributeName: CHANGES_PARTITION_KEY, AttributeType: 'S' as const },
        { AttributeName: CHANGES_SORT_KEY, AttributeType: 'S' as const },
      ],
    },
  ];
  try {
    for (const table of tables) {
      try {
        const { Table } = await client.send(new DescribeTableCommand({ TableName: table.TableName }));
        const missing = (table.GlobalSecondaryIndexes ?? []).filter((index) => !Table?.GlobalSecondaryIndexes?.some((held) => held.IndexName === index.IndexName));
        if (missing.length > 0) await addIndexes(client, table);
      } catch (error) {
        if (!(error instanceof ResourceNotFoundException)) throw error;
        await client.send(new CreateTableCommand({ ...table, BillingMode: 'PAY_PER_REQUEST' }));
      }
    }
  } finally {
    client.destroy();
  }
}

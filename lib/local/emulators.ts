import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3';
import dynalite from 'dynalite';
import { mkdir, readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import S3rver from 's3rver';
import { multipartGaps } from './s3rver-multipart';
import { removeInterruptedWrites } from './s3rver-recovery';
import { ACCESS_PARTITION_KEY, NODES_PARTITION_KEY, NODES_SORT_KEY, UPLOADS_PARTITION_KEY } from '../../functions/aws/schema';

/** Names the local host gives its tables and bucket. */
export const LOCAL_RESOURCES = { nodesTable: 'drive-nodes', accessTable: 'drive-access', uploadsTable: 'drive-uploads', bucket: 'drive-files' } as const;

/** Credentials the emulators accept (s3rver checks signatures against these). */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
export const LOCAL_REGION = 'us-east-1';

/** Where a running local host records its emulators, for tools that share its data dir. */
export const ENDPOINTS_FILE = 'endpoints.json';

export interface Emulators {
  dynamodbEndpoint: string;
  s3Endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts embedded DynamoDB (dynalite, LevelDB under `<dataDir>/dynamodb`) and S3 (s3rver, files under
 * `<dataDir>/s3`) on 127.0.0.1, with the tables and bucket created if missing.
 */
export async function startEmulators(dataDir: string, ports: { dynamodb?: number; s3?: number } = {}): Promise<Emulators> {
  const dynamo = await startEmbeddedDynamo(dataDir, ports.dynamodb);
  try {
    await mkdir(join(dataDir, 's3'), { recursive: true });
    // A host killed mid-write leaves half-written files that s3rver would fail every listing on.
    await removeInterruptedWrites(join(dataDir, 's3', LOCAL_RESOURCES.bucket));
    const s3 = new S3rver({
      address: '127.0.0.1',
      port: ports.s3 ?? 0,
      directory: join(dataDir, 's3'),
      silent: true,
      configureBuckets: [{ name: LOCAL_RESOURCES.bucket, configs: [] }],
    });
    s3.middleware.unshift(multipartGaps(join(dataDir, 's3')));
    const s3Address = await s3.run();
    return {
      dynamodbEndpoint: dynamo.endpoint,
      s3Endpoint: `http://127.0.0.1:${s3Address.port}`,
      close: async () => {
        await new Promise<void>((resolve) => s3.close(() => resolve()));
        await dynamo.close();
      },
    };
  } catch (error) {
    await dynamo.close();
    throw error;
  }
}

/**
 * Lets pages of `origins` PUT large-upload parts to the embedded S3 and read each part's ETag, as the
 * stack's bucket CORS rule does in AWS. s3rver keeps the rule with the bucket; each start replaces it, as
 * the host's port may change.
 */
export async function allowBrowserUploads(s3Endpoint: string, origins: readonly string[]): Promise<void> {
  const s3 = new S3Client({ endpoint: s3Endpoint, forcePathStyle: true, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
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
 * Starts only the embedded DynamoDB on the data dir, with the tables created if missing. LevelDB admits one
 * process at a time: while `npm start` runs, use the endpoint it records instead (`runningHost`).
 */
export async function startEmbeddedDynamo(dataDir: string, port = 0): Promise<{ endpoint: string; close(): Promise<void> }> {
  await mkdir(join(dataDir, 'dynamodb'), { recursive: true });
  const dynamo: Server = dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject);
    dynamo.listen(port, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => dynamo.close(() => resolve()));
  try {
    await createTables(endpoint);
  } catch (error) {
    await close();
    throw error;
  }
  return { endpoint, close };
}

/**
 * The emulator endpoints of an `npm start` running on `dataDir`, or undefined if none runs. The record is
 * believed only if its DynamoDB answers: a host killed with SIGKILL leaves it behind, and its pid may name
 * another process by now (in a container, even the next host's own).
 */
export async function runningHost(dataDir: string): Promise<{ pid: number; dynamodb: string; s3: string } | undefined> {
  let recorded: { pid: number; dynamodb: string; s3: string };
  try {
    recorded = JSON.parse(await readFile(join(dataDir, ENDPOINTS_FILE), 'utf8')) as typeof recorded;
  } catch {
    return undefined;
  }
  return (await answers(recorded.dynamodb)) ? recorded : undefined;
}

/** Whether the embedded DynamoDB at `endpoint` answers within a second. */
async function answers(endpoint: string): Promise<boolean> {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1, requestHandler: { requestTimeout: 1000, connectionTimeout: 1000 } });
  try {
    await client.send(new DescribeTableCommand({ TableName: LOCAL_RESOURCES.nodesTable }));
    return true;
  } catch (error) {
    // Any answer, even a refusal, comes from a server there; no connection means none is.
    return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== undefined;
  } finally {
    client.destroy();
  }
}

async function createTables(endpoint: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
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
      AttributeDefinitions: [{ AttributeName: ACCESS_PARTITION_KEY, AttributeType: 'S' as const }],
    },
    {
      TableName: LOCAL_RESOURCES.uploadsTable,
      KeySchema: [{ AttributeName: UPLOADS_PARTITION_KEY, KeyType: 'HASH' as const }],
      AttributeDefinitions: [{ AttributeName: UPLOADS_PARTITION_KEY, AttributeType: 'S' as const }],
    },
  ];
  try {
    for (const table of tables) {
      try {
        await client.send(new DescribeTableCommand({ TableName: table.TableName }));
      } catch (error) {
        if (!(error instanceof ResourceNotFoundException)) throw error;
        await client.send(new CreateTableCommand({ ...table, BillingMode: 'PAY_PER_REQUEST' }));
      }
    }
  } finally {
    client.destroy();
  }
}

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_REGION, startEmbeddedDynamo } from '../../lib/local/emulators';
import type { Credentials } from '../../lib/local/signed-gateway';
import { removeDataDir } from './local-host';

/** A test file's own embedded DynamoDB (dynalite and lib/local's transaction layer, its tables made), and an SDK client of it. */
export interface EmbeddedDynamo {
  dataDir: string;
  endpoint: string;
  credentials: Credentials;
  client: DynamoDBClient;
}

/**
 * Starts an embedded DynamoDB in a data dir of its own (named `drive-<name>-…`) before the file's tests and
 * stops it, removing the dir, after them. Its fields are set once its `beforeAll` has run, which is before any
 * `beforeAll` the file declares after this call: read them in hooks and tests, not at the file's top level.
 */
export function useEmbeddedDynamo(name: string): EmbeddedDynamo {
  const dynamo = {} as EmbeddedDynamo;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    dynamo.dataDir = await mkdtemp(join(tmpdir(), `drive-${name}-`));
    const started = await startEmbeddedDynamo(dynamo.dataDir);
    close = started.close;
    dynamo.endpoint = started.endpoint;
    dynamo.credentials = started.credentials;
    dynamo.client = new DynamoDBClient({ endpoint: started.endpoint, region: LOCAL_REGION, credentials: started.credentials });
  });
  afterAll(async () => {
    dynamo.client?.destroy();
    await close?.();
    if (dynamo.dataDir) await removeDataDir(dynamo.dataDir);
  });
  return dynamo;
}

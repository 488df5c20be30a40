import { DeleteTableCommand, DynamoDBClient, DynamoDBServiceException, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_REGION, LOCAL_RESOURCES, createTables, startEmbeddedDynamo } from '../../lib/local/emulators';
import { removeDataDir } from '../support/local-host';
import { LOCAL_ENDPOINT_ENV, UNAVAILABLE_ENV } from './global-setup';

/** One DynamoDB under comparison: a client on it, with Drive's three tables made and empty. */
export interface Backend {
  name: 'embedded' | 'dynamodb-local';
  client: DynamoDBClient;
}

export const TABLES = LOCAL_RESOURCES;

/**
 * `describe`, or, when DynamoDB Local is not running (no Java, no jar), `describe.skip` and a todo whose
 * name says why, so that the reason shows in the test output.
 */
export function describeBoth(name: string, body: () => void): void {
  const unavailable = process.env[UNAVAILABLE_ENV];
  if (!unavailable) return describe(name, body);
  describe.skip(name, body);
  // Jest lists no test of a file whose tests are all skipped: a todo carries the reason into the output.
  test.todo(`${name}: skipped, ${unavailable}`);
}

/**
 * Starts the embedded DynamoDB (as lib/local/emulators.ts does for `npm start`) on a fresh data dir, and
 * remakes the tables in the run's DynamoDB Local; the same client settings on both.
 */
export async function startBackends(): Promise<{ embedded: Backend; local: Backend; close(): Promise<void> }> {
  const endpoint = process.env[LOCAL_ENDPOINT_ENV];
  if (!endpoint) throw new Error(`${LOCAL_ENDPOINT_ENV} is not set: run this tier with npm run test:dynamodb-local`);
  const dataDir = await mkdtemp(join(tmpdir(), 'drive-ddb-compare-'));
  const dynamo = await startEmbeddedDynamo(dataDir);
  // Retries off on both: a retried request would hide what the first answer was.
  const embedded: Backend = { name: 'embedded', client: new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION, credentials: dynamo.credentials, maxAttempts: 1 }) };
  const localCredentials = { accessKeyId: 'DRIVECOMPARE', secretAccessKey: 'compare' };
  const local: Backend = { name: 'dynamodb-local', client: new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: localCredentials, maxAttempts: 1 }) };
  const { TableNames = [] } = await local.client.send(new ListTablesCommand({}));
  for (const table of TableNames) await local.client.send(new DeleteTableCommand({ TableName: table }));
  await createTables(endpoint, localCredentials);
  return {
    embedded,
    local,
    close: async () => {
      embedded.client.destroy();
      local.client.destroy();
      await dynamo.close();
      await removeDataDir(dataDir);
    },
  };
}

/**
 * Errors whose message is free text that differs harmlessly between the two (and from AWS): clients branch
 * on the name. DynamoDB Local words its validation errors its own way ("Member must have length less than or
 * equal to 100", where AWS says "1 validation error detected: Value '[…]' at 'transactItems' failed to
 * satisfy constraint: …"), answers IdempotentParameterMismatch with the message "UnknownError", and a missing
 * table with "Cannot do operations on a non-existent table". Every other error's message is compared whole:
 * "The conditional request failed", a cancelled transaction's "[None, ConditionalCheckFailed]" list (which
 * some clients parse), an item's "Item size has exceeded the maximum allowed size".
 */
const FREE_TEXT = new Set(['ValidationException', 'ResourceNotFoundException', 'IdempotentParameterMismatchException']);

/** What a call came to: its value, or its error as a client sees it (name, status, and the fields clients read). */
export type Outcome = { value: unknown } | { error: ErrorShape };

export interface ErrorShape {
  name: string;
  status?: number;
  message: string;
  CancellationReasons?: unknown;
  Item?: unknown;
}

/** Runs `call` and records its outcome; a thrown non-AWS error (a bug in the scenario) is thrown on. */
export async function outcome(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { value: canonicalNumbers(stripMetadata(await call())) };
  } catch (error) {
    if (!(error instanceof DynamoDBServiceException)) throw error;
    const fields = error as DynamoDBServiceException & { CancellationReasons?: unknown; Item?: unknown };
    return {
      error: {
        name: error.name,
        status: error.$metadata.httpStatusCode,
        message: FREE_TEXT.has(error.name) ? '(free text, not compared)' : error.message,
        // Each reason's Code and Item, not its Message: DynamoDB Local ends it with a full stop only when the reason
        // carries the item ("The conditional request failed."); clients read the code.
        ...(fields.CancellationReasons !== undefined ? { CancellationReasons: (fields.CancellationReasons as { Message?: string }[]).map(({ Message: _, ...reason }) => reason) } : {}),
        ...(fields.Item !== undefined ? { Item: canonicalNumbers(fields.Item) } : {}),
      },
    };
  }
}

/**
 * An SDK output without `$metadata` (request ids, attempts), which differs on every call, and without
 * `ConsumedCapacity`: no probe asks for it (AWS sends it only when asked), DynamoDB Local sends it unasked
 * with some answers (a DeleteItem of a missing item), and the embedded DynamoDB does not emulate capacity.
 */
function stripMetadata(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const { $metadata: _, ConsumedCapacity: __, ...rest } = value as Record<string, unknown>;
  return rest;
}

/**
 * `value` with every DynamoDB number (`N`, each of an `NS`) in canonical form. AWS trims numbers' leading and
 * trailing zeros ("Leading and trailing zeroes are trimmed", the developer guide's Number type), as the
 * embedded DynamoDB does; DynamoDB Local keeps "2.50" as written in expression values, lists and maps. That is
 * DynamoDB Local's difference, not ours: the comparison reads past it (edge-cases.compare.ts checks that the
 * embedded DynamoDB's own numbers are canonical).
 */
export function canonicalNumbers<T>(value: T): T {
  if (Array.isArray(value)) return value.map(canonicalNumbers) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, held] of Object.entries(value)) {
    if (name === 'N' && typeof held === 'string') out[name] = canonicalNumber(held);
    else if (name === 'NS' && Array.isArray(held)) out[name] = held.map((n: unknown) => (typeof n === 'string' ? canonicalNumber(n) : n));
    else out[name] = canonicalNumbers(held);
  }
  return out as T;
}

/** A decimal number's shortest form: no leading or trailing zeros, no exponent ("007.50" and "7.5e0" are "7.5"). */
export function canonicalNumber(n: string): string {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(n.trim());
  if (!match || (match[2] === '' && !match[3])) return n;
  let digits = match[2] + (match[3] ?? '');
  let point = match[2].length + Number(match[4] ?? 0);
  while (digits.startsWith('0')) {
    digits = digits.slice(1);
    point--;
  }
  digits = digits.replace(/0+$/, '');
  if (digits === '') return '0';
  const sign = match[1] === '-' ? '-' : '';
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

import { type AttributeValue, type DynamoDBClient, ScanCommand, type ScanCommandInput, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';

/** Attempts at a batch whose items come back unprocessed (throttling) before giving up. */
export const BATCH_ATTEMPTS = 8;

/** Full-jitter exponential backoff, as AWS recommends for unprocessed batch items: up to 25 ms × 2^attempt. */
export function backoff(attempt: number): Promise<void> {
  return sleep(Math.random() * 25 * 2 ** Math.min(attempt, 8));
}

/** Splits `items` into arrays of at most `size`, the most one batch call takes. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Every item a Scan with `input` finds, all pages (for the tables of work in flight, which stay small). */
export async function scanAll(client: DynamoDBClient, input: Omit<ScanCommandInput, 'ExclusiveStartKey'>): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let start: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page: ScanCommandOutput = await client.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

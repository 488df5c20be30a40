import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { toItem } from '../../functions/aws/dynamo-node-store';
import { UPLOADS_PARTITION_KEY } from '../../functions/aws/schema';
import { LOCAL_REGION, LOCAL_RESOURCES, startEmbeddedDynamo } from '../../lib/local/emulators';

/**
 * SPIKE for docs/change-feed-design.md (issue 27), not production code: what writing a change costs on the
 * embedded DynamoDB when it rides on the one-file upload's record write, four ways, with `writers` uploads'
 * record writes at once into one folder (as the test has 8 writers):
 *
 * - `put`: today's record write (PutItem, ALL_OLD).
 * - `tap`: the same PutItem, plus what a local stream tap adds (the stream record appended to a file and
 *   flushed, as the transaction layer's WAL is): the design's local cost.
 * - `tap-nosync`: the same without the flush: a process killed keeps what it wrote to the page cache, as
 *   dynalite's LevelDB (unsynced writes) does; only a machine crash loses it.
 * - `txn`: record + change item in one TransactWriteItems (no sequence): the "same write" option.
 * - `txn-seq`: a per-drive counter read, then record + change item + counter in one transaction conditional
 *   on the counter read (a contiguous sequence taken in the request); a lost race reads and tries again.
 *
 * `node --import tsx test/bench/change-feed-spike.ts [writes per variant] [writers] [rounds] [variants,…]`; prints one JSON
 * line per variant and round: ms per write (wall, all writers together), CPU ms per write (this process: the
 * embedded DynamoDB, its layer and the client; the steadier figure on a shared machine), p50/p99 of one write's latency, and
 * the retries the counter cost. Rounds alternate the variants' order; the machine is shared, so read ratios.
 */
async function main(writes: number, writers: number, rounds: number, only: readonly string[]): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'drive-feed-spike-'));
  const dynamo = await startEmbeddedDynamo(dataDir);
  const client = new DynamoDBClient({ region: LOCAL_REGION, credentials: dynamo.credentials, endpoint: dynamo.endpoint });
  const tap = await open(join(dataDir, 'stream.log'), 'a');
  const variants: Record<string, (drive: string, i: number) => Promise<number>> = {
    put: async (drive, i) => {
      await client.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.nodesTable, Item: record(drive, i), ReturnValues: 'ALL_OLD' }));
      return 0;
    },
    tap: async (drive, i) => {
      const item = record(drive, i);
      const { Attributes } = await client.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.nodesTable, Item: item, ReturnValues: 'ALL_OLD' }));
      await tap.appendFile(`${JSON.stringify({ eventName: Attributes ? 'MODIFY' : 'INSERT', old: Attributes, new: item })}\n`);
      await tap.datasync();
      return 0;
    },
    'tap-nosync': async (drive, i) => {
      const item = record(drive, i);
      const { Attributes } = await client.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.nodesTable, Item: item, ReturnValues: 'ALL_OLD' }));
      await tap.appendFile(`${JSON.stringify({ eventName: Attributes ? 'MODIFY' : 'INSERT', old: Attributes, new: item })}\n`);
      return 0;
    },
    txn: async (drive, i) => {
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName: LOCAL_RESOURCES.nodesTable, Item: record(drive, i) } },
            { Put: { TableName: LOCAL_RESOURCES.uploadsTable, Item: change(`chg#${drive}#${randomUUID()}`, i) } },
          ],
        }),
      );
      return 0;
    },
    'txn-seq': async (drive, i) => {
      const counterKey = { [UPLOADS_PARTITION_KEY]: { S: `seq#${drive}` } };
      for (let retries = 0; ; retries++) {
        const { Item } = await client.send(new GetItemCommand({ TableName: LOCAL_RESOURCES.uploadsTable, Key: counterKey, ConsistentRead: true }));
        const head = Number(Item?.head?.N ?? '0');
        try {
          await client.send(
            new TransactWriteItemsCommand({
              TransactItems: [
                {
                  Update: {
                    TableName: LOCAL_RESOURCES.uploadsTable,
                    Key: counterKey,
                    UpdateExpression: 'SET head = :next',
                    ConditionExpression: 'attribute_not_exists(head) OR head = :head',
                    ExpressionAttributeValues: { ':next': { N: String(head + 1) }, ':head': { N: String(head) } },
                  },
                },
                { Put: { TableName: LOCAL_RESOURCES.nodesTable, Item: record(drive, i) } },
                { Put: { TableName: LOCAL_RESOURCES.uploadsTable, Item: change(`chg#${drive}#${head + 1}`, i) } },
              ],
            }),
          );
          return retries;
        } catch (error) {
          if (!(error instanceof TransactionCanceledException) && !(error instanceof ConditionalCheckFailedException)) throw error;
        }
      }
    },
  };
  try {
    const names = Object.keys(variants).filter((name) => only.length === 0 || only.includes(name));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const name of order) {
        const drive = `spike-${name}-${round}`;
        const latencies: number[] = [];
        let retries = 0;
        let next = 0;
        const cpu = process.cpuUsage();
        const started = performance.now();
        await Promise.all(
          Array.from({ length: writers }, async () => {
            while (next < writes) {
              const i = next++;
              const t = performance.now();
              retries += await variants[name](drive, i);
              latencies.push(performance.now() - t);
            }
          }),
        );
        const wall = performance.now() - started;
        const used = process.cpuUsage(cpu);
        latencies.sort((a, b) => a - b);
        const at = (q: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2));
        console.log(JSON.stringify({ round, variant: name, writes, writers, msPerWrite: Number((wall / writes).toFixed(3)), cpuMsPerWrite: Number(((used.user + used.system) / 1000 / writes).toFixed(3)), p50: at(0.5), p99: at(0.99), retries }));
      }
    }
  } finally {
    await tap.close();
    client.destroy();
    await dynamo.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A file record as the one-file upload writes it, in one folder of the drive. */
function record(drive: string, i: number): Record<string, AttributeValue> {
  const id = randomUUID();
  return toItem(drive, { kind: 'file', id, path: `/in/f${i % 200}`, size: 4096, contentType: 'application/octet-stream', createdAt: new Date().toISOString(), objectKey: `${drive}/${id}`, etag: id.replace(/-/g, '') });
}

/** A change item about the size the feed would keep (type, path, the File object). */
function change(key: string, i: number): Record<string, AttributeValue> {
  return { [UPLOADS_PARTITION_KEY]: { S: key }, type: { S: 'file.created' }, path: { S: `/in/f${i % 200}` }, at: { S: new Date().toISOString() }, file: { S: 'x'.repeat(300) } };
}

const [writes = '400', writers = '8', rounds = '3', only = ''] = process.argv.slice(2);
main(Number(writes), Number(writers), Number(rounds), only.split(',').filter((name) => name !== '')).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { appendFile, mkdir, open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

/**
 * DynamoDB Streams for the embedded DynamoDB, which has none (docs/change-feed-design.md, "How it works
 * locally"): the request layer (lib/local/dynamo-transactions.ts) appends a record for each write that changed
 * an item of a streamed table, as a Lambda event's record, one JSON line each to `<dir>/<table>.log`, in the
 * order the writes were made (each item's in order: its writes are made one at a time); the host feeds them to
 * the sequencer as Lambda's event source mapping does (`feedStream`).
 */
export interface StreamTap {
  /** The tables whose writes are streamed. */
  readonly tables: ReadonlySet<string>;
  /** Appends the record of one write to `table`'s item (`old` and `next` its images; none: absent). */
  append(table: string, keys: Attributes, old: Attributes | undefined, next: Attributes | undefined): Promise<void>;
}

type Attributes = Record<string, unknown>;

/** The file a table's stream is appended to. */
export const streamFile = (dir: string, table: string): string => join(dir, `${table}.log`);

/** A tap appending to files in `dir`, for `tables`. */
export function streamTap(dir: string, tables: readonly string[]): StreamTap {
  let last = 0;
  let queue: Promise<void> = mkdir(dir, { recursive: true }).then(() => undefined);
  return {
    tables: new Set(tables),
    append(table, keys, old, next) {
      if (sameImage(old, next)) return Promise.resolve();
      // Increasing across restarts too: the clock in microseconds, or one past the last.
      last = Math.max(last + 1, Date.now() * 1000);
      const record: DynamoDBRecord = {
        eventID: `${last}`,
        eventName: !old ? 'INSERT' : next ? 'MODIFY' : 'REMOVE',
        eventSource: 'aws:dynamodb',
        awsRegion: 'local',
        eventSourceARN: `local:stream/${table}`,
        dynamodb: {
          ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
          Keys: keys as never,
          ...(old ? { OldImage: old as never } : {}),
          ...(next ? { NewImage: next as never } : {}),
          SequenceNumber: String(last),
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      };
      const line = `${JSON.stringify(record)}\n`;
      // In call order: each item's records are appended in the order of its writes.
      queue = queue.then(() => appendFile(streamFile(dir, table), line));
      return queue;
    },
  };
}

/** Whether two images hold the same attributes (dynalite may give them in another order). */
function sameImage(a: Attributes | undefined, b: Attributes | undefined): boolean {
  if (!a || !b) return a === b;
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical((value as Attributes)[key])}`)
    .join(',')}}`;
}

/** How often the feed looks for new records, and how long it waits after a batch that failed or was handed back. */
const POLL_MS = 50;
const RETRY_MS = 250;
/** The most records in one batch, as the stack's event source mapping gives. */
const BATCH = 100;

/**
 * Feeds `file`'s records to `handler` in batches of up to 100, in order, as Lambda's event source mapping does:
 * a batch that throws is handed again, one that names a failed record is handed again from it; how far it got
 * is kept in `checkpoint` (written after the handler answered), so a restarted host goes on from there. Returns
 * a stop.
 */
export function feedStream(file: string, checkpoint: string, handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>, log: (line: string) => void): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const loop = async () => {
    let offset = Number((await readFile(checkpoint, 'utf8').catch(() => '0')).trim()) || 0;
    while (!stopped) {
      const { records, ends } = await readRecords(file, offset, BATCH);
      if (records.length === 0) {
        await sleep(POLL_MS);
        continue;
      }
      let handedBack = 0;
      let failed = false;
      try {
        const answer = await handler({ Records: records });
        const from = answer?.batchItemFailures?.[0]?.itemIdentifier;
        const index = from === undefined ? records.length : records.findIndex((record) => record.dynamodb?.SequenceNumber === from);
        handedBack = index < 0 ? records.length : index;
        failed = index >= 0 && index < records.length;
      } catch (error) {
        log(`the sequencer failed a batch of ${records.length} stream records; handing it again: ${String(error)}`);
        failed = true;
      }
      if (handedBack > 0) {
        offset = ends[handedBack - 1];
        await writeFile(checkpoint, String(offset));
      }
      if (failed) await sleep(RETRY_MS);
    }
  };
  running = loop().catch((error: unknown) => log(`the stream feed stopped: ${String(error)}`));
  return async () => {
    stopped = true;
    await running;
  };
}

/** The most bytes of the stream read at once. */
const READ_BYTES = 1 << 20;

/**
 * Up to `limit` whole records from `offset`, with the offset each ends at. The feed polls 20 times a second:
 * a file no longer than `offset` (nothing new) is answered from its size, without opening it or a buffer.
 */
async function readRecords(file: string, offset: number, limit: number): Promise<{ records: DynamoDBRecord[]; ends: number[] }> {
  const size = await stat(file).then(
    (info) => info.size,
    () => 0,
  );
  if (size <= offset) return { records: [], ends: [] };
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return { records: [], ends: [] };
  try {
    // Only the bytes read are looked at: the buffer need not be zeroed.
    const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, size - offset));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
    const records: DynamoDBRecord[] = [];
    const ends: number[] = [];
    let start = 0;
    for (let i = 0; i < bytesRead && records.length < limit; i++) {
      if (buffer[i] !== 0x0a) continue;
      records.push(JSON.parse(buffer.subarray(start, i).toString('utf8')) as DynamoDBRecord);
      ends.push(offset + i + 1);
      start = i + 1;
    }
    return { records, ends };
  } finally {
    await handle.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

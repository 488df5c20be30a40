import { type AttributeValue, ConditionalCheckFailedException, type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { IDEMPOTENCY_TTL_MS, type IdempotencyStore, type IdempotentRequest, type StoredAnswer, type TakeOutcome } from '../core/idempotency';
import { ACCESS_PARTITION_KEY as PK, ACCESS_TTL_ATTRIBUTE as TTL } from './schema';

/**
 * The most of a gzipped answer one item holds. An item is at most 400 KB, names and values together; the
 * rest of a record is under 1 KB. A larger answer is cut into chunk items of this size, written before the
 * record that names them (a 1,000-file upload's answer, about 270 KB of JSON, gzips to about 35 KB: it fits
 * whole).
 */
export const INLINE_ANSWER_BYTES = 350_000;

/** A gzipped answer may be this many chunks at most: Lambda's buffered answer is at most 6 MB, so 18 would do. */
const MAX_CHUNKS = 32;

/**
 * Idempotency records in the access table (which has TTL on `expiresAt` and one partition key): one item per
 * API key and Idempotency-Key, `idem#<key id>#<Idempotency-Key>`, beside the keys (`key#…`), rate-limit
 * buckets (`rate#…`) and links, which no other prefix can name (key ids are hex). Every handler may already
 * read and update the table (its guard does), and that is all this adapter does: no new grant, no new table.
 */
export class DynamoIdempotencyStore implements IdempotencyStore {
  private now: () => number = Date.now;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    /** The gzipped answer kept in the record itself; above it, in chunk items. */
    private readonly inlineBytes = INLINE_ANSWER_BYTES,
  ) {}

  /** Reads the time from `clock`: the local host's tests move it to lapse a lease or a record's 24 hours without waiting. */
  useClock(clock: () => number): void {
    this.now = clock;
  }

  async take(request: IdempotentRequest, leaseMs: number): Promise<TakeOutcome> {
    const now = this.now();
    const owner = randomUUID();
    const leaseUntil = now + leaseMs;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(request),
          // A new record whole: what a lapsed or expired one held goes.
          UpdateExpression: 'SET fingerprint = :fp, #state = :running, #owner = :owner, leaseUntil = :lease, #ttl = :ttl REMOVE #status, answerHeaders, body, chunks',
          ConditionExpression: 'attribute_not_exists(#pk) OR #ttl < :nowSeconds OR (#state = :running AND leaseUntil < :now)',
          ExpressionAttributeNames: { '#pk': PK, '#state': 'state', '#owner': 'owner', '#ttl': TTL, '#status': 'status' },
          ExpressionAttributeValues: {
            ':fp': { S: request.fingerprint },
            ':running': { S: 'running' },
            ':owner': { S: owner },
            ':lease': { N: String(leaseUntil) },
            ':ttl': { N: String(Math.ceil((now + IDEMPOTENCY_TTL_MS) / 1000)) },
            ':nowSeconds': { N: String(Math.floor(now / 1000)) },
            ':now': { N: String(now) },
          },
          // What holds the key comes back with the refusal: a replay costs no second call.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'taken', owner, leaseUntil };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const item = error.Item ?? (await this.read(keyOf(request)));
      // Gone between the two (TTL): take it again.
      if (!item) return this.take(request, leaseMs);
      if (item.fingerprint?.S !== request.fingerprint) return { kind: 'mismatch' };
      if (item.state?.S !== 'done') return { kind: 'running', leaseUntil: Number(item.leaseUntil?.N ?? 0), now };
      return { kind: 'done', answer: await this.answerOf(request, item) };
    }
  }

  async complete(request: IdempotentRequest, owner: string, answer: StoredAnswer): Promise<boolean> {
    const body = gzipSync(Buffer.from(answer.body));
    const chunks = body.length <= this.inlineBytes ? [] : cut(body, this.inlineBytes);
    if (chunks.length > MAX_CHUNKS) throw new Error(`an answer of ${body.length} gzipped bytes is more than ${MAX_CHUNKS} chunks`);
    const ttl = { N: String(Math.ceil((this.now() + IDEMPOTENCY_TTL_MS) / 1000)) };
    // The chunks first, named by the owner: a record never names a chunk not yet written, and a successor's
    // chunks never mix with a lost owner's. A chunk no record names expires with its TTL.
    await Promise.all(
      chunks.map((chunk, i) =>
        this.client.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: chunkKey(request, owner, i),
            UpdateExpression: 'SET body = :body, #ttl = :ttl',
            ExpressionAttributeNames: { '#ttl': TTL },
            ExpressionAttributeValues: { ':body': { B: chunk }, ':ttl': ttl },
          }),
        ),
      ),
    );
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(request),
          UpdateExpression: chunks.length > 0 ? 'SET #state = :done, #status = :status, answerHeaders = :headers, chunks = :chunks' : 'SET #state = :done, #status = :status, answerHeaders = :headers, body = :body',
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#state': 'state', '#status': 'status', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':done': { S: 'done' },
            ':status': { N: String(answer.statusCode) },
            ':headers': { S: JSON.stringify(answer.headers) },
            ':owner': { S: owner },
            ...(chunks.length > 0 ? { ':chunks': { N: String(chunks.length) } } : { ':body': { B: body } }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async release(request: IdempotentRequest, owner: string): Promise<void> {
    try {
      // A lease that ended now: the next request with the key runs anew, whatever it asks. The item goes by TTL.
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(request),
          UpdateExpression: 'SET leaseUntil = :zero',
          ConditionExpression: '#owner = :owner AND #state = :running',
          ExpressionAttributeNames: { '#owner': 'owner', '#state': 'state' },
          ExpressionAttributeValues: { ':zero': { N: '0' }, ':owner': { S: owner }, ':running': { S: 'running' } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** The answer a done record keeps, its chunks read side by side. */
  private async answerOf(request: IdempotentRequest, item: Record<string, AttributeValue>): Promise<StoredAnswer> {
    const count = Number(item.chunks?.N ?? 0);
    let body: Uint8Array;
    if (count === 0) body = item.body?.B ?? gzipSync('');
    else {
      const owner = item.owner!.S!;
      const chunks = await Promise.all(Array.from({ length: count }, (_, i) => this.read(chunkKey(request, owner, i))));
      if (chunks.some((chunk) => chunk?.body?.B === undefined)) throw new Error(`idempotency record ${keyOf(request)[PK].S} lacks a chunk of its answer`);
      body = Buffer.concat(chunks.map((chunk) => chunk!.body!.B!));
    }
    return { statusCode: Number(item.status!.N), headers: JSON.parse(item.answerHeaders?.S ?? '{}') as Record<string, string>, body: gunzipSync(body).toString('utf8') };
  }

  private async read(key: Record<string, AttributeValue>): Promise<Record<string, AttributeValue> | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: key, ConsistentRead: true }));
    return Item;
  }
}

const keyOf = (request: IdempotentRequest): Record<string, AttributeValue> => ({ [PK]: { S: `idem#${request.scope}#${request.key}` } });
const chunkKey = (request: IdempotentRequest, owner: string, i: number): Record<string, AttributeValue> => ({ [PK]: { S: `idem-chunk#${request.scope}#${owner}#${i}#${request.key}` } });

function cut(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return chunks;
}

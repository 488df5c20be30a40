import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { DynamoIdempotencyStore } from '../../functions/aws/dynamo-idempotency';
import { IDEMPOTENCY_TTL_MS, type IdempotentRequest } from '../../functions/core/idempotency';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// The adapter on the embedded DynamoDB (dynalite and lib/local's layer, which returns the item of a refused
// condition as DynamoDB does): every outcome of a take, and answers kept whole or in chunks.

const dynamo = useEmbeddedDynamo('idempotency');
const TABLE = LOCAL_RESOURCES.accessTable;
const NOW = 1_800_000_000_000;

function storeAt(now: { ms: number }, inlineBytes?: number): DynamoIdempotencyStore {
  const store = new DynamoIdempotencyStore(dynamo.client, TABLE, inlineBytes);
  store.useClock(() => now.ms);
  return store;
}

const request = (fingerprint = 'fp-1'): IdempotentRequest => ({ scope: 'a1b2c3d4e5f60718', key: randomUUID(), fingerprint });
const answer = { statusCode: 200, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{"data":{"ok":true}}' };

describe('Class: DynamoIdempotencyStore', () => {
  it('takes a free key, refuses it while running (with the lease), and replays the answer once kept', async () => {
    const now = { ms: NOW };
    const store = storeAt(now);
    const asked = request();

    const taken = await store.take(asked, 39_000);
    const during = await store.take(asked, 39_000);
    const kept = taken.kind === 'taken' && (await store.complete(asked, taken.owner, answer));
    const replay = await store.take(asked, 39_000);
    const other = await store.take({ ...asked, fingerprint: 'fp-2' }, 39_000);

    expect(taken).toEqual({ kind: 'taken', owner: expect.any(String), leaseUntil: NOW + 39_000 });
    expect(during).toEqual({ kind: 'running', leaseUntil: NOW + 39_000, now: NOW });
    expect(kept).toBe(true);
    expect(replay).toEqual({ kind: 'done', answer });
    expect(other).toEqual({ kind: 'mismatch' });
  });

  it('lets a retry take the key once the lease lapses, and never lets the lost owner write over it', async () => {
    const now = { ms: NOW };
    const store = storeAt(now);
    const asked = request();
    const lost = await store.take(asked, 1_000);

    now.ms += 1_001;
    const successor = await store.take(asked, 1_000);
    const lostKept = lost.kind === 'taken' && (await store.complete(asked, lost.owner, { ...answer, body: 'lost' }));

    expect(successor.kind).toBe('taken');
    expect(lostKept).toBe(false);
  });

  it('frees a released key at once, and forgets a kept answer after 24 hours', async () => {
    const now = { ms: NOW };
    const store = storeAt(now);
    const released = request();
    const first = await store.take(released, 60_000);
    if (first.kind === 'taken') await store.release(released, first.owner);
    const kept = request();
    const taken = await store.take(kept, 60_000);
    if (taken.kind === 'taken') await store.complete(kept, taken.owner, answer);

    const again = await store.take({ ...released, fingerprint: 'another request' }, 60_000);
    now.ms += IDEMPOTENCY_TTL_MS + 1_000;
    const dayLater = await store.take(kept, 60_000);

    expect(again.kind).toBe('taken');
    expect(dayLater.kind).toBe('taken');
  });

  it('keeps an answer above the inline bound in chunk items, and replays it whole', async () => {
    const now = { ms: NOW };
    const store = storeAt(now, 4_000);
    const asked = request();
    // 400 random UUIDs gzip to about 8 KB: a few chunks of 4,000 bytes.
    const body = JSON.stringify({ data: Array.from({ length: 400 }, () => randomUUID()) });
    const taken = await store.take(asked, 60_000);
    if (taken.kind === 'taken') expect(await store.complete(asked, taken.owner, { ...answer, body })).toBe(true);

    const replay = await store.take(asked, 60_000);
    const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: `idem#${asked.scope}#${asked.key}` } } }));

    expect(replay).toEqual({ kind: 'done', answer: { ...answer, body } });
    expect({ chunks: Number(Item?.chunks?.N) > 1, inline: Item?.body }).toEqual({ chunks: true, inline: undefined });
  });
});

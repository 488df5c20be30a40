import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  TransactionCanceledException,
  type TransactWriteItem,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { LOCAL_REGION, LOCAL_RESOURCES, startEmbeddedDynamo } from '../../emulators';
import { removeDataDir } from '../../../../test/support/local-host';
import { useEmbeddedDynamo } from '../../../../test/support/embedded-dynamo';

// The embedded DynamoDB's TransactWriteItems (lib/local/dynamo-transactions.ts), through the real SDK: all
// or nothing, isolated from every other request, and undone after a kill mid-transaction.

const TABLE = LOCAL_RESOURCES.nodesTable;
const dynamo = useEmbeddedDynamo('transactions');
let client: DynamoDBClient;
let n = 0;

beforeAll(async () => {
  client = dynamo.client;
});

const key = (pk: string, sk = 'x') => ({ pk: { S: pk }, sk: { S: sk } });
const get = async (pk: string) => (await client.send(new GetItemCommand({ TableName: TABLE, Key: key(pk), ConsistentRead: true }))).Item;
const put = (pk: string, v: string) => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key(pk), v: { S: v } } }));
/** Moves the item at `from` to `to` if `from` still holds `v`: the shape of a file move. */
const move = (from: string, to: string, v: string): TransactWriteItem[] => [
  { Put: { TableName: TABLE, Item: { ...key(to), v: { S: v } }, ConditionExpression: 'attribute_not_exists(pk)' } },
  { Delete: { TableName: TABLE, Key: key(from), ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': { S: v } } } },
];

test('a transaction applies every write when every condition holds', async () => {
  const [a, b] = [`a${++n}`, `b${n}`];
  await put(a, 'one');
  await client.send(new TransactWriteItemsCommand({ TransactItems: move(a, b, 'one') }));
  expect(await get(a)).toBeUndefined();
  expect((await get(b))?.v.S).toBe('one');
});

test('a refused condition applies nothing and names each item as AWS does', async () => {
  const [a, b, c] = [`a${++n}`, `b${n}`, `c${n}`];
  await put(a, 'one');
  await put(c, 'held');
  const items: TransactWriteItem[] = [
    ...move(a, b, 'one'),
    { ConditionCheck: { TableName: TABLE, Key: key(c), ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':w': { S: 'other' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
    { Put: { TableName: TABLE, Item: { ...key(`d${n}`), v: { S: 'new' } }, ConditionExpression: 'attribute_exists(pk)' } },
  ];
  const error = await client.send(new TransactWriteItemsCommand({ TransactItems: items })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TransactionCanceledException);
  const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
  expect(reasons.map((r) => r.Code)).toEqual(['None', 'None', 'ConditionalCheckFailed', 'ConditionalCheckFailed']);
  expect(reasons[2].Item?.v.S).toBe('held');
  expect((await get(a))?.v.S).toBe('one');
  expect(await get(b)).toBeUndefined();
  expect((await get(c))?.v.S).toBe('held');
  expect(await get(`d${n}`)).toBeUndefined();
});

test('a condition check changes nothing, and two operations on one item are refused', async () => {
  const a = `a${++n}`;
  await put(a, 'one');
  await client.send(new TransactWriteItemsCommand({ TransactItems: [{ ConditionCheck: { TableName: TABLE, Key: key(a), ConditionExpression: 'attribute_exists(pk)' } }, { Put: { TableName: TABLE, Item: { ...key(`e${n}`), v: { S: 'x' } } } }] }));
  expect((await get(a))?.v.S).toBe('one');
  const twice = await client.send(new TransactWriteItemsCommand({ TransactItems: [...move(a, `b${n}`, 'one'), { Delete: { TableName: TABLE, Key: key(a) } }] })).catch((e: unknown) => e);
  expect((twice as Error).name).toBe('ValidationException');
  expect((await get(a))?.v.S).toBe('one');
});

test('TransactGetItems answers each item in order, {} for a missing one', async () => {
  const [a, b] = [`a${++n}`, `b${n}`];
  await put(a, 'one');
  const out = await client.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: key(b) } }, { Get: { TableName: TABLE, Key: key(a), ProjectionExpression: 'v' } }] }));
  expect(out.Responses).toEqual([{}, { Item: { v: { S: 'one' } } }]);
  const twice = await client.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: key(a) } }, { Get: { TableName: TABLE, Key: key(a) } }] })).catch((e: unknown) => e);
  expect((twice as Error).name).toBe('ValidationException');
});

test('a refused single-item write returns the item when asked (ReturnValuesOnConditionCheckFailure)', async () => {
  const a = `a${++n}`;
  await put(a, 'one');
  const update = (returned: 'ALL_OLD' | 'NONE') =>
    client.send(new UpdateItemCommand({ TableName: TABLE, Key: key(a), UpdateExpression: 'SET v = :v', ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':v': { S: 'two' }, ':w': { S: 'other' } }, ReturnValuesOnConditionCheckFailure: returned })).catch((e: unknown) => e);
  const asked = await update('ALL_OLD');
  expect(asked).toBeInstanceOf(ConditionalCheckFailedException);
  expect((asked as ConditionalCheckFailedException).Item).toEqual({ ...key(a), v: { S: 'one' } });
  const notAsked = await update('NONE');
  expect(notAsked).toBeInstanceOf(ConditionalCheckFailedException);
  expect((notAsked as ConditionalCheckFailedException).Item).toBeUndefined();
  const refused = await client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key(a), v: { S: 'x' } }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })).catch((e: unknown) => e);
  expect((refused as ConditionalCheckFailedException).Item?.v).toEqual({ S: 'one' });
});

test('no reader sees a transaction half done', async () => {
  const [a, b] = [`a${++n}`, `b${n}`];
  await put(a, 'v0');
  let stop = false;
  const seen: number[] = [];
  const reader = (async () => {
    while (!stop) {
      const out = await client.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: [key(a), key(b)], ConsistentRead: true } } }));
      seen.push(out.Responses?.[TABLE]?.length ?? -1);
    }
  })();
  // Back and forth: each transaction moves the one item between the two keys.
  for (let i = 0; i < 40; i++) {
    const [from, to] = i % 2 === 0 ? [a, b] : [b, a];
    await client.send(new TransactWriteItemsCommand({ TransactItems: move(from, to, `v${i}`).map((item, j) => (j === 0 ? { Put: { ...item.Put!, Item: { ...key(to), v: { S: `v${i + 1}` } } } } : item)) }));
  }
  stop = true;
  await reader;
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.filter((count) => count !== 1)).toEqual([]);
});

test('a transaction a kill cut off is undone when the emulator starts again', async () => {
  const own = await mkdtemp(join(tmpdir(), 'drive-transactions-kill-'));
  try {
    let first = await startEmbeddedDynamo(own);
    let local = new DynamoDBClient({ endpoint: first.endpoint, region: LOCAL_REGION, credentials: first.credentials });
    await local.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('a'), v: { S: 'one' } } }));
    // What a host killed after the transaction's first write leaves: the write done, and its images noted.
    await local.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('b'), v: { S: 'one' } } }));
    await mkdir(join(own, 'dynamodb-transactions'), { recursive: true });
    const images = [{ table: TABLE, key: key('b') }, { table: TABLE, key: key('a'), before: { ...key('a'), v: { S: 'one' } } }];
    await writeFile(join(own, 'dynamodb-transactions', 'tx-cut.json'), JSON.stringify(images));
    local.destroy();
    await first.close();

    first = await startEmbeddedDynamo(own);
    local = new DynamoDBClient({ endpoint: first.endpoint, region: LOCAL_REGION, credentials: first.credentials });
    const read = async (pk: string) => (await local.send(new GetItemCommand({ TableName: TABLE, Key: key(pk), ConsistentRead: true }))).Item?.v.S;
    expect(await read('a')).toBe('one');
    expect(await read('b')).toBeUndefined();
    local.destroy();
    await first.close();
  } finally {
    await removeDataDir(own);
  }
});

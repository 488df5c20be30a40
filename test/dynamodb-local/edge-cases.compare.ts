import {
  type AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  DescribeTimeToLiveCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type ReturnValue,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  type TransactWriteItem,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Backend, type Outcome, TABLES, canonicalNumber, describeBoth, outcome, startBackends } from './backends';

// Raw SDK probes of the edges Drive's adapters lean on, each run on the embedded DynamoDB and on AWS's
// DynamoDB Local: every step's outcome (value, or error name, status and the fields clients read) must match.

type Item = Record<string, AttributeValue>;
const TABLE = TABLES.nodesTable;
const key = (pk: string, sk = 'x'): Item => ({ pk: { S: pk }, sk: { S: sk } });
const put = (pk: string, v: string, sk = 'x') => new PutItemCommand({ TableName: TABLE, Item: { ...key(pk, sk), v: { S: v } } });
const get = (pk: string, sk = 'x') => new GetItemCommand({ TableName: TABLE, Key: key(pk, sk), ConsistentRead: true });

describeBoth('the embedded DynamoDB answers as DynamoDB Local does', () => {
  let backends: Awaited<ReturnType<typeof startBackends>>;
  beforeAll(async () => {
    backends = await startBackends();
  });
  afterAll(async () => {
    await backends?.close();
  });

  /** Runs `scenario` on each backend, one after the other, and expects the same outcomes of every step. */
  async function same(scenario: (backend: Backend, step: (call: () => Promise<unknown>) => Promise<Outcome>) => Promise<void>): Promise<Outcome[]> {
    const run = async (backend: Backend) => {
      const steps: Outcome[] = [];
      await scenario(backend, async (call) => {
        const result = await outcome(call);
        steps.push(result);
        return result;
      });
      return steps;
    };
    const embedded = await run(backends.embedded);
    const local = await run(backends.local);
    expect(embedded).toEqual(local);
    return local;
  }

  test('conditional writes: ConditionalCheckFailed, with the old item when asked', async () => {
    await same(async ({ client }, step) => {
      await step(() => client.send(put('c1', 'one')));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('c1'), v: { S: 'two' } }, ConditionExpression: 'attribute_not_exists(pk)' })));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('c1'), v: { S: 'two' } }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })));
      await step(() => client.send(new UpdateItemCommand({ TableName: TABLE, Key: key('c1'), UpdateExpression: 'SET v = :v', ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':v': { S: 'three' }, ':w': { S: 'other' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })));
      await step(() => client.send(new UpdateItemCommand({ TableName: TABLE, Key: key('c-missing'), UpdateExpression: 'SET v = :v', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':v': { S: 'x' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })));
      await step(() => client.send(new DeleteItemCommand({ TableName: TABLE, Key: key('c1'), ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':w': { S: 'other' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })));
      await step(() => client.send(new DeleteItemCommand({ TableName: TABLE, Key: key('c1'), ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': { S: 'one' } }, ReturnValues: 'ALL_OLD' })));
      await step(() => client.send(get('c1')));
      await step(() => client.send(get('c-missing')));
    });
  });

  test('TransactWriteItems: all or nothing, and each item named in the cancellation reasons in order', async () => {
    await same(async ({ client }, step) => {
      await step(() => client.send(put('t1', 'one')));
      await step(() => client.send(put('t3', 'held')));
      const items: TransactWriteItem[] = [
        { Put: { TableName: TABLE, Item: { ...key('t2'), v: { S: 'one' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Delete: { TableName: TABLE, Key: key('t1'), ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': { S: 'one' } } } },
        { ConditionCheck: { TableName: TABLE, Key: key('t3'), ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':w': { S: 'other' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
        { Update: { TableName: TABLE, Key: key('t4'), UpdateExpression: 'SET v = :v', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':v': { S: 'new' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
      ];
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: items })));
      for (const pk of ['t1', 't2', 't3', 't4']) await step(() => client.send(get(pk)));
      // Without the failing two, it applies.
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: items.slice(0, 2) })));
      for (const pk of ['t1', 't2']) await step(() => client.send(get(pk)));
    });
  });

  test('TransactWriteItems: what it refuses before it begins', async () => {
    await same(async ({ client }, step) => {
      await step(() => client.send(put('r1', 'one')));
      // Two operations on one item.
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...key('r1'), v: { S: 'a' } } } }, { Delete: { TableName: TABLE, Key: key('r1') } }] })));
      // More than 100 items.
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: Array.from({ length: 101 }, (_, i) => ({ Put: { TableName: TABLE, Item: { ...key(`r-many-${i}`), v: { S: 'a' } } } })) })));
      // None.
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [] })));
      // A table that does not exist.
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: 'no-such-table', Item: { ...key('r2'), v: { S: 'a' } } } }] })));
      await step(() => client.send(get('r1')));
      await step(() => client.send(get('r-many-0')));
    });
  });

  test('ClientRequestToken: the same request again makes nothing; another request under it is refused', async () => {
    await same(async ({ client }, step) => {
      const write = (v: string): TransactWriteItem[] => [{ Put: { TableName: TABLE, Item: { ...key('i1'), v: { S: v } } } }];
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: write('first'), ClientRequestToken: 'token-1' })));
      await step(() => client.send(put('i1', 'between')));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: write('first'), ClientRequestToken: 'token-1' })));
      await step(() => client.send(get('i1')));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: write('second'), ClientRequestToken: 'token-1' })));
      await step(() => client.send(get('i1')));
    });
  });

  test('TransactGetItems: one answer per item, in order, an empty one for a missing item', async () => {
    await same(async ({ client }, step) => {
      await step(() => client.send(put('g1', 'one')));
      await step(() => client.send(put('g2', 'two')));
      await step(() =>
        client.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: key('g2') } }, { Get: { TableName: TABLE, Key: key('g-missing') } }, { Get: { TableName: TABLE, Key: key('g1'), ProjectionExpression: 'v' } }] })),
      );
      await step(() => client.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: key('g1') } }, { Get: { TableName: TABLE, Key: key('g1') } }] })));
      await step(() => client.send(new TransactGetItemsCommand({ TransactItems: Array.from({ length: 101 }, (_, i) => ({ Get: { TableName: TABLE, Key: key(`g${i}`) } })) })));
      await step(() => client.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: 'no-such-table', Key: key('g1') } }] })));
    });
  });

  test('BatchWriteItem and BatchGetItem: shapes and limits', async () => {
    await same(async ({ client }, step) => {
      const puts = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ PutRequest: { Item: { ...key('b', `k${String(from + i).padStart(3, '0')}`), v: { S: 'x' } } } }));
      await step(() => client.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: puts(0, 25) } })));
      await step(() => client.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: puts(25, 26) } })));
      await step(() => client.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: [...puts(0, 1), ...puts(0, 1)] } })));
      await step(() => client.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: [] } })));
      await step(() => client.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: [...puts(60, 1), { DeleteRequest: { Key: key('b', 'k060') } }] } })));
      const keys = (count: number) => Array.from({ length: count }, (_, i) => key('b', `k${String(i).padStart(3, '0')}`));
      const sorted = (out: Outcome) => {
        // BatchGetItem promises no order: compare its items sorted.
        if ('value' in out) {
          const value = out.value as { Responses?: Record<string, Item[]> };
          for (const items of Object.values(value.Responses ?? {})) items.sort((a, b) => a.sk.S!.localeCompare(b.sk.S!));
        }
      };
      sorted(await step(() => client.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: [...keys(3), key('b', 'missing')], ConsistentRead: true } } }))));
      sorted(await step(() => client.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: keys(100), ConsistentRead: true, ProjectionExpression: 'sk' } } }))));
      await step(() => client.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: keys(101) } } })));
      await step(() => client.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: [key('b', 'k000'), key('b', 'k000')] } } })));
      await step(() => client.send(new BatchGetItemCommand({ RequestItems: { 'no-such-table': { Keys: keys(1) } } })));
    });
  });

  test('Query stops at 1 MB of items and says where to go on (LastEvaluatedKey)', async () => {
    const steps = await same(async ({ client }, step) => {
      // 24 items of 100 KB: about 2.4 MB in one partition.
      const big = 'y'.repeat(100 * 1024);
      for (let i = 0; i < 24; i++) await client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('q', `k${String(i).padStart(2, '0')}`), v: { S: big } } }));
      let start: Item | undefined;
      do {
        const page = await step(() => client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'q' } }, ConsistentRead: true, ProjectionExpression: 'sk', ExclusiveStartKey: start })));
        start = 'value' in page ? (page.value as { LastEvaluatedKey?: Item }).LastEvaluatedKey : undefined;
      } while (start);
    });
    expect(steps.length).toBeGreaterThan(2);
  });

  test('an item over 400 KB is refused, by PutItem and by UpdateItem', async () => {
    await same(async ({ client }, step) => {
      // An item's size is its attribute names' and values' UTF-8 bytes: pk + "s1" + sk + "x" + v + value.
      const overhead = 'pk'.length + 's1'.length + 'sk'.length + 'x'.length + 'v'.length;
      const limit = 400 * 1024;
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('s1'), v: { S: 'a'.repeat(limit - overhead) } } })));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('s1'), v: { S: 'a'.repeat(limit - overhead + 1) } } })));
      await step(() => client.send(new UpdateItemCommand({ TableName: TABLE, Key: key('s1'), UpdateExpression: 'SET w = :w', ExpressionAttributeValues: { ':w': { S: 'b' } } })));
      await step(() => client.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: [{ PutRequest: { Item: { ...key('s2'), v: { S: 'a'.repeat(limit) } } } }] } })));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...key('s3'), v: { S: 'a'.repeat(limit) } } } }] })));
      await step(() => client.send(new GetItemCommand({ TableName: TABLE, Key: key('s1'), ProjectionExpression: 'pk, w' })));
    });
  });

  test('UpdateItem ReturnValues: NONE, ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATED_NEW', async () => {
    await same(async ({ client }, step) => {
      for (const returnValues of ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'] as ReturnValue[]) {
        const pk = `u-${returnValues}`;
        // On a missing item, then on the item it made.
        for (let i = 0; i < 2; i++) {
          await step(() =>
            client.send(
              new UpdateItemCommand({
                TableName: TABLE,
                Key: key(pk),
                UpdateExpression: 'SET v = :v, n = if_not_exists(n, :zero) + :one ADD tags :tag REMOVE gone',
                ExpressionAttributeValues: { ':v': { S: `v${i}` }, ':zero': { N: '0' }, ':one': { N: '1' }, ':tag': { SS: [`t${i}`] } },
                ReturnValues: returnValues,
              }),
            ),
          );
        }
      }
    });
  });

  test('TransactWriteItems: an invalid item stops it, and a cancelled token may be used again', async () => {
    await same(async ({ client }, step) => {
      await step(() => client.send(put('v1', 'one')));
      // The second item's expression is invalid: nothing applies, whatever came before it.
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...key('v2'), v: { S: 'a' } } } }, { Update: { TableName: TABLE, Key: key('v1'), UpdateExpression: 'SET v = ', ExpressionAttributeValues: { ':v': { S: 'x' } } } }] })));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...key('v2'), v: { S: 'a' } } } }, { Update: { TableName: TABLE, Key: key('v1'), UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': { S: 'x' }, ':unused': { S: 'y' } } } }] })));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [{ ConditionCheck: { TableName: TABLE, Key: key('v1'), ConditionExpression: 'attribute_exists(nope)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }, { Put: { TableName: TABLE, Item: { ...key('v2'), v: { S: 'a' } }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }] })));
      await step(() => client.send(get('v2')));
      // A token whose transaction was cancelled: the same request again, once its condition holds.
      const guarded: TransactWriteItem[] = [{ Put: { TableName: TABLE, Item: { ...key('v3'), v: { S: 'a' } }, ConditionExpression: 'attribute_exists(pk)' } }];
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: guarded, ClientRequestToken: 'cancelled-token' })));
      await step(() => client.send(put('v3', 'there')));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: guarded, ClientRequestToken: 'cancelled-token' })));
      await step(() => client.send(get('v3')));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: guarded, ClientRequestToken: 'x'.repeat(37) })));
    });
  });

  test('what single-item calls refuse', async () => {
    await same(async ({ client }, step) => {
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('e1', '') } })));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('e1'), empty: { S: '' }, none: { NULL: true } } })));
      await step(() => client.send(get('e1')));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('e2'), set: { SS: [] } } })));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('e2'), set: { SS: ['a', 'a'] } } })));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('e2'), n: { N: '1'.repeat(39) } } })));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: key('e2'), ReturnValues: 'ALL_NEW' })));
      await step(() => client.send(new UpdateItemCommand({ TableName: TABLE, Key: key('e1'), UpdateExpression: 'SET sk = :v', ExpressionAttributeValues: { ':v': { S: 'y' } } })));
      await step(() => client.send(new UpdateItemCommand({ TableName: TABLE, Key: key('e1'), UpdateExpression: 'SET #missing = :v', ExpressionAttributeValues: { ':v': { S: 'y' } } })));
      await step(() => client.send(new UpdateItemCommand({ TableName: TABLE, Key: key('e1'), UpdateExpression: 'SET v = :v REMOVE v', ExpressionAttributeValues: { ':v': { S: 'y' } } })));
      await step(() => client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'e1' } } })));
      await step(() => client.send(new DeleteItemCommand({ TableName: TABLE, Key: key('e-missing'), ReturnValues: 'ALL_OLD' })));
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('e3'), v: { S: 'a' } }, ConditionExpression: 'v = :v' })));
    });
  });

  test('Query: Limit, direction, and a page that ends the partition exactly', async () => {
    await same(async ({ client }, step) => {
      for (let i = 0; i < 5; i++) await client.send(put('ql', `k${i}`, `k${i}`));
      const query = (extra: Partial<ConstructorParameters<typeof QueryCommand>[0]>) =>
        client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'ql' } }, ConsistentRead: true, ...extra }));
      await step(() => query({ Limit: 5 }));
      await step(() => query({ Limit: 2, ScanIndexForward: false }));
      await step(() => query({ Limit: 2, ExclusiveStartKey: key('ql', 'k3') }));
      await step(() => query({ Limit: 3, FilterExpression: 'v <> :v', ExpressionAttributeValues: { ':pk': { S: 'ql' }, ':v': { S: 'k1' } } }));
      await step(() => query({ Select: 'COUNT' }));
      await step(() => query({ KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': { S: 'ql' }, ':p': { S: 'k' } }, Limit: 0 }));
    });
  });

  test('BatchGetItem stops at 16 MB and returns the rest as UnprocessedKeys', async () => {
    await same(async ({ client }, step) => {
      const big = 'z'.repeat(390 * 1024);
      for (let i = 0; i < 50; i++) await client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('bg', `k${String(i).padStart(2, '0')}`), v: { S: big } } }));
      const keys = Array.from({ length: 50 }, (_, i) => key('bg', `k${String(i).padStart(2, '0')}`));
      await step(async () => {
        const out = await client.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true } } }));
        // The counts, not 16 MB of items in the comparison.
        return { returned: out.Responses?.[TABLE]?.length, unprocessed: out.UnprocessedKeys?.[TABLE]?.Keys?.length ?? 0 };
      });
    });
  });

  test('condition functions and comparisons with a missing attribute', async () => {
    await same(async ({ client }, step) => {
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('f1'), s: { S: 'hello' }, n: { N: '5' }, l: { L: [{ S: 'a' }] }, ss: { SS: ['x', 'y'] } } })));
      const check = (condition: string, values?: Item) =>
        step(() => client.send(new UpdateItemCommand({ TableName: TABLE, Key: key('f1'), UpdateExpression: 'SET checked = :t', ConditionExpression: condition, ExpressionAttributeValues: { ':t': { BOOL: true }, ...values } })));
      await check('contains(s, :v)', { ':v': { S: 'ell' } });
      await check('contains(ss, :v)', { ':v': { S: 'z' } });
      await check('size(s) = :v', { ':v': { N: '5' } });
      await check('size(l) > :v', { ':v': { N: '1' } });
      await check('attribute_type(n, :v)', { ':v': { S: 'N' } });
      await check('attribute_type(n, :v)', { ':v': { S: 'S' } });
      await check('n BETWEEN :a AND :b', { ':a': { N: '1' }, ':b': { N: '5' } });
      await check('n IN (:a, :b)', { ':a': { N: '4' }, ':b': { N: '6' } });
      await check('missing <> :v', { ':v': { S: 'x' } });
      await check('NOT missing = :v', { ':v': { S: 'x' } });
      await check('missing < :v', { ':v': { N: '1' } });
      await check('s = :v', { ':v': { N: '5' } });
      await check('begins_with(s, :v)', { ':v': { S: 'he' } });
      await step(() => client.send(get('f1')));
    });
  });

  test('a global secondary index: what it holds, and reads it refuses', async () => {
    await same(async ({ client }, step) => {
      const access = TABLES.accessTable;
      await step(() => client.send(new PutItemCommand({ TableName: access, Item: { pk: { S: 'k1' }, drive: { S: 'd' }, createdAt: { S: '2' } } })));
      await step(() => client.send(new PutItemCommand({ TableName: access, Item: { pk: { S: 'k2' }, drive: { S: 'd' }, createdAt: { S: '1' } } })));
      // Without the index's sort key: not in the index.
      await step(() => client.send(new PutItemCommand({ TableName: access, Item: { pk: { S: 'k3' }, drive: { S: 'd' } } })));
      const query = (extra: Partial<ConstructorParameters<typeof QueryCommand>[0]>) =>
        client.send(new QueryCommand({ TableName: access, IndexName: 'keysByDrive', KeyConditionExpression: 'drive = :d', ExpressionAttributeValues: { ':d': { S: 'd' } }, ...extra }));
      await step(() => query({}));
      await step(() => query({ Limit: 1 }));
      await step(() => query({ ConsistentRead: true }));
      await step(() => query({ IndexName: 'noSuchIndex' }));
      // An index key attribute of the wrong type is refused by the table's write.
      await step(() => client.send(new PutItemCommand({ TableName: access, Item: { pk: { S: 'k4' }, drive: { N: '1' } } })));
    });
  });

  test("DynamoDB Local's own differences from AWS, which the embedded DynamoDB does not copy", async () => {
    // A reserved word (SIZE is one) used bare in an expression: AWS refuses it ("Attribute name is a reserved
    // keyword"), as the embedded DynamoDB does; DynamoDB Local reads it as the attribute.
    const projected = (backend: Backend) => outcome(() => backend.client.send(new GetItemCommand({ TableName: TABLE, Key: key('e1'), ProjectionExpression: 'size' })));
    expect(await projected(backends.embedded)).toEqual({ error: expect.objectContaining({ name: 'ValidationException' }) });
    expect(await projected(backends.local)).toEqual({ value: expect.anything() });
  });

  test('numbers come back in canonical form, however they were written', async () => {
    // Compared in canonical form (see canonicalNumbers: DynamoDB Local keeps some as written, AWS trims them all);
    // the embedded DynamoDB's own answers must already be canonical, as AWS's are.
    const embeddedNumbers: string[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(collect);
      if (value === null || typeof value !== 'object') return;
      for (const [name, held] of Object.entries(value)) {
        if (name === 'N' && typeof held === 'string') embeddedNumbers.push(held);
        else if (name === 'NS' && Array.isArray(held)) embeddedNumbers.push(...(held as string[]));
        else collect(held);
      }
    };
    await same(async ({ name, client }, step) => {
      if (name === 'embedded') {
        const seen = step;
        step = async (call) => seen(async () => {
          const value = await call();
          collect(value);
          return value;
        });
      }
      const odd = (n: string): AttributeValue => ({ N: n });
      await step(() => client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('n1'), a: odd('1.500'), b: odd('007'), c: odd('1e3'), d: { NS: ['2.0', '3'] }, e: { L: [odd('4.0')] }, f: { M: { g: odd('-0.10') } } } })));
      await step(() => client.send(get('n1')));
      await step(() =>
        client.send(
          new UpdateItemCommand({
            TableName: TABLE,
            Key: key('n2'),
            UpdateExpression: 'SET a = :a, b = :b + :c, l = :l ADD s :s, t :t',
            ExpressionAttributeValues: { ':a': odd('2.50'), ':b': odd('1.0'), ':c': odd('2.00'), ':l': { L: [odd('5.0')] }, ':s': { NS: ['6.0'] }, ':t': odd('7.00') },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      await step(() => client.send(get('n2')));
      await step(() => client.send(new TransactWriteItemsCommand({ TransactItems: [{ Update: { TableName: TABLE, Key: key('n3'), UpdateExpression: 'SET a = :a', ExpressionAttributeValues: { ':a': odd('8.10') } } }] })));
      await step(() => client.send(get('n3')));
      await step(() => client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', FilterExpression: 'a = :a', ExpressionAttributeValues: { ':pk': { S: 'n1' }, ':a': odd('1.5000') } })));
    });
    expect(embeddedNumbers.length).toBeGreaterThan(20);
    expect(embeddedNumbers.filter((n) => n !== canonicalNumber(n))).toEqual([]);
  });

  test('a TTL attribute is data: an item past its time is still read, and TTL is off', async () => {
    await same(async ({ client }, step) => {
      const past = Math.floor(Date.now() / 1000) - 3600;
      await step(() => client.send(new PutItemCommand({ TableName: TABLES.uploadsTable, Item: { id: { S: 'ttl-1' }, expiresAt: { N: String(past) } } })));
      await step(() => client.send(new GetItemCommand({ TableName: TABLES.uploadsTable, Key: { id: { S: 'ttl-1' } }, ConsistentRead: true })));
      await step(() => client.send(new DescribeTimeToLiveCommand({ TableName: TABLES.uploadsTable })));
    });
  });
});

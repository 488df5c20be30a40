import dynalite from 'dynalite';
import type { Server } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { type DynaliteRequest, type DynaliteResponse, type EmbeddedDynalite, embeddedDynalite } from '../../embedded-dynalite';

// dynalite called in-process (lib/local/embedded-dynalite.ts) answers as its own HTTP server does: the same
// requests, sent to both (each its own in-memory store), get the same status, headers and body. Only the
// request id (random) and what Node's HTTP server adds (Date, Connection, Keep-Alive) are left out, and a
// BatchGetItem's items are compared in any order (dynalite gives them as its reads end).

const AUTH = {
  authorization: 'AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc',
  'x-amz-date': '20260101T000000Z',
};
const TABLE = {
  TableName: 'nodes',
  BillingMode: 'PAY_PER_REQUEST',
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
  ],
};

let server: Server;
let port: number;
let embedded: EmbeddedDynalite;
/** A third store, called as the transaction layer calls it (`internal`: no headers made). */
let internal: EmbeddedDynalite;

beforeAll(async () => {
  server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
  embedded = embeddedDynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  internal = embeddedDynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await embedded.close();
  await internal.close();
});

function overHttp(req: DynaliteRequest): Promise<DynaliteResponse> {
  return new Promise((resolve, reject) => {
    const out = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers as Record<string, string> }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    out.on('error', reject);
    out.end(req.body);
  });
}

/**
 * What to compare: the request id's form but not its value, no header Node's server adds, the checksum and
 * length as whether they are the body's, times and table ids in a body as `T` and `ID`.
 */
function comparable(answer: DynaliteResponse) {
  const headers = answer.headers
    .filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name.toLowerCase()))
    .map(([name, value]) => {
      if (name === 'x-amzn-RequestId') return [name, /^[A-Z0-9]{52}$/.test(value)];
      if (name === 'x-amz-crc32') return [name, value === String(crc32(answer.body))];
      if (name === 'Content-Length') return [name, value === String(Buffer.byteLength(answer.body))];
      return [name, value];
    });
  const body = inAnyOrder(answer.body).replace(/("(?:CreationDateTime|LastIncreaseDateTime|LastDecreaseDateTime|LastUpdateToPayPerRequestDateTime)":)[0-9.]+/g, '$1T').replace(/("TableId":)"[0-9a-f-]+"/g, '$1"ID"');
  return { status: answer.status, headers, body };
}

/** A BatchGetItem's items, which dynalite gives in the order its reads end, sorted. */
function inAnyOrder(body: string): string {
  if (!body.startsWith('{"Responses":')) return body;
  const parsed = JSON.parse(body) as { Responses: Record<string, unknown[]> };
  for (const items of Object.values(parsed.Responses)) items.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return JSON.stringify(parsed);
}

const call = (target: string, input: unknown, headers: Record<string, string> = AUTH): DynaliteRequest => ({
  method: 'POST',
  url: '/',
  headers: { ...headers, 'x-amz-target': target, 'content-type': 'application/x-amz-json-1.0' },
  body: Buffer.from(typeof input === 'string' ? input : JSON.stringify(input)),
});

/** Waits until the table is ACTIVE or gone (CreateTable, UpdateTable and DeleteTable finish on a timer). */
async function settled(send: (req: DynaliteRequest) => Promise<DynaliteResponse>, table = 'nodes'): Promise<void> {
  for (;;) {
    const described = await send(call('DynamoDB_20120810.DescribeTable', { TableName: table }));
    if (described.status !== 200 || JSON.parse(described.body).Table.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const item = (sk: string, extra: Record<string, unknown> = {}) => ({ pk: { S: 'p' }, sk: { S: sk }, ...extra });

// In order: each step's answer depends on the steps before it, on both stores alike.
const STEPS: [string, DynaliteRequest][] = [
  ['a health check', { method: 'GET', url: '/', headers: {}, body: Buffer.alloc(0) }],
  ['a method other than POST', { method: 'PUT', url: '/', headers: { ...AUTH, 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from('{}') }],
  ['another content type', { method: 'POST', url: '/', headers: { ...AUTH, 'content-type': 'text/plain' }, body: Buffer.from('{}') }],
  ['a CORS preflight', { method: 'OPTIONS', url: '/', headers: { origin: 'http://x', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-amz-target' }, body: Buffer.alloc(0) }],
  ['a body that is not JSON', call('DynamoDB_20120810.ListTables', '{')],
  ['an unknown operation', call('DynamoDB_20120810.TransactWriteItems', {})],
  ['no Authorization', call('DynamoDB_20120810.ListTables', {}, {})],
  ['an Authorization of another form', call('DynamoDB_20120810.ListTables', {}, { authorization: 'Basic abc' })],
  ['an incomplete Authorization', call('DynamoDB_20120810.ListTables', {}, { authorization: 'AWS4-HMAC-SHA256 Credential=a' })],
  ['an empty body', call('DynamoDB_20120810.ListTables', '')],
  ['a request of the JSON content type', { ...call('DynamoDB_20120810.ListTables', {}), headers: { ...AUTH, 'x-amz-target': 'DynamoDB_20120810.ListTables', 'content-type': 'application/json' } }],
  ['a type error', call('DynamoDB_20120810.GetItem', { TableName: 5, Key: item('a') })],
  ['a validation error', call('DynamoDB_20120810.GetItem', { TableName: 'x' })],
  ['an item of a missing table', call('DynamoDB_20120810.GetItem', { TableName: 'nodes', Key: item('a') })],
  ['CreateTable', call('DynamoDB_20120810.CreateTable', TABLE)],
  ['DescribeTable', call('DynamoDB_20120810.DescribeTable', { TableName: 'nodes' })],
  ['PutItem', call('DynamoDB_20120810.PutItem', { TableName: 'nodes', Item: item('a', { n: { N: '1' } }) })],
  ['a refused condition', call('DynamoDB_20120810.PutItem', { TableName: 'nodes', Item: item('a'), ConditionExpression: 'attribute_not_exists(pk)' })],
  ['UpdateItem', call('DynamoDB_20120810.UpdateItem', { TableName: 'nodes', Key: item('a'), UpdateExpression: 'SET n = n + :one', ExpressionAttributeValues: { ':one': { N: '1' } }, ReturnValues: 'ALL_NEW' })],
  ['an item too large', call('DynamoDB_20120810.PutItem', { TableName: 'nodes', Item: item('big', { b: { S: 'x'.repeat(400 * 1024) } }) })],
  ['GetItem', call('DynamoDB_20120810.GetItem', { TableName: 'nodes', Key: item('a'), ConsistentRead: true })],
  ['BatchWriteItem', call('DynamoDB_20120810.BatchWriteItem', { RequestItems: { nodes: [{ PutRequest: { Item: item('b') } }, { PutRequest: { Item: item('c') } }] } })],
  ['Query', call('DynamoDB_20120810.Query', { TableName: 'nodes', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'p' } }, Limit: 2 })],
  ['Scan', call('DynamoDB_20120810.Scan', { TableName: 'nodes' })],
  ['BatchGetItem', call('DynamoDB_20120810.BatchGetItem', { RequestItems: { nodes: { Keys: [item('a'), item('c')] } } })],
  ['DeleteItem', call('DynamoDB_20120810.DeleteItem', { TableName: 'nodes', Key: item('b'), ReturnValues: 'ALL_OLD' })],
  ['UpdateTable', call('DynamoDB_20120810.UpdateTable', { TableName: 'nodes', BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 } })],
  ['DescribeTable after UpdateTable', call('DynamoDB_20120810.DescribeTable', { TableName: 'nodes' })],
  ['DeleteTable', call('DynamoDB_20120810.DeleteTable', { TableName: 'nodes' })],
  ['ListTables', call('DynamoDB_20120810.ListTables', {})],
];

test('every answer in-process is the one dynalite\'s HTTP server gives', async () => {
  for (const [what, req] of STEPS) {
    const viaHttp = await overHttp(req);
    const inProcess = await embedded.serve(req);
    const own = await internal.serve({ ...req, internal: true });
    // The tables' timers (0 ms) settle before the next step, on all three.
    await settled(overHttp);
    await settled((req) => embedded.serve(req));
    await settled((req) => internal.serve(req));
    expect({ what, ...comparable(inProcess) }).toEqual({ what, ...comparable(viaHttp) });
    // The host's own calls (no headers made): the same status and body.
    expect({ what, status: own.status, body: comparable(own).body }).toEqual({ what, status: viaHttp.status, body: comparable(viaHttp).body });
  }
});

test('an item request after its table changed sees the change (the tables cache is emptied)', async () => {
  const serve = (target: string, input: unknown) => embedded.serve(call(`DynamoDB_20120810.${target}`, input));
  await serve('CreateTable', { ...TABLE, TableName: 'cached' });
  await settled((req) => embedded.serve(req), 'cached');
  expect((await serve('PutItem', { TableName: 'cached', Item: item('a') })).status).toBe(200);
  await serve('DeleteTable', { TableName: 'cached' });
  await settled((req) => embedded.serve(req), 'cached');
  const gone = await serve('GetItem', { TableName: 'cached', Key: item('a') });
  expect({ status: gone.status, body: JSON.parse(gone.body) }).toEqual({ status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'Requested resource not found' } });
  // Made again with another key: an item of the old key's shape is refused by the new table's schema.
  await serve('CreateTable', { ...TABLE, TableName: 'cached', KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }] });
  await settled((req) => embedded.serve(req), 'cached');
  const refused = await serve('GetItem', { TableName: 'cached', Key: item('a') });
  expect(refused.status).toBe(400);
  expect(JSON.parse(refused.body).message).toBe('The provided key element does not match the schema');
  expect((await serve('PutItem', { TableName: 'cached', Item: { pk: { S: 'a' } } })).status).toBe(200);
});

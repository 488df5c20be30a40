// Probe for docs/trash-design.md (not production code): does the embedded DynamoDB (dynalite) add a global
// secondary index to a table that already holds items (as the nodes table of a deployed stack or a local data
// dir does)? And the alternative without an index: a due entry per row in a partition per day, read by a
// range query. Run: node --import tsx test/bench/trash-index-probe.ts
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand, QueryCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import type { AddressInfo } from 'node:net';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: Record<string, unknown>) => import('node:http').Server;

async function main(): Promise<void> {
  const server = dynalite({ createTableMs: 0, updateTableMs: 0, deleteTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client = new DynamoDBClient({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const TableName = 'nodes';
  await client.send(new CreateTableCommand({ TableName, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }] }));
  // Items before the index: two nodes and one trash row.
  await client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'd#/' }, sk: { S: 'a.txt' }, kind: { S: 'file' } } }));
  await client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'd#/' }, sk: { S: 'b' }, kind: { S: 'folder' } } }));
  await client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'd#trash' }, sk: { S: '2026-11-20T10:00:00.000Z#t1' }, purgeDay: { S: '2026-11-27#3' }, purgeKey: { S: '2026-11-27T10:00:00.000Z#d#t1' } } }));
  let added = 'added';
  const create = { IndexName: 'trash-due', KeySchema: [{ AttributeName: 'purgeDay', KeyType: 'HASH' as const }, { AttributeName: 'purgeKey', KeyType: 'RANGE' as const }], Projection: { ProjectionType: 'KEYS_ONLY' as const } };
  const AttributeDefinitions = [{ AttributeName: 'purgeDay', AttributeType: 'S' as const }, { AttributeName: 'purgeKey', AttributeType: 'S' as const }];
  try {
    // As the stack would send it for an on-demand table: no throughput.
    await client.send(new UpdateTableCommand({ TableName, AttributeDefinitions, GlobalSecondaryIndexUpdates: [{ Create: create }] }));
  } catch (error) {
    added = `refused without ProvisionedThroughput (${(error as Error).name}); `;
    try {
      await client.send(new UpdateTableCommand({ TableName, AttributeDefinitions, GlobalSecondaryIndexUpdates: [{ Create: { ...create, ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } } }] }));
      added += 'added with it';
    } catch (again) {
      added += `refused with it too: ${(again as Error).name}: ${(again as Error).message}`;
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  const described = await client.send(new DescribeTableCommand({ TableName }));
  console.log(`UpdateTable adding a GSI to a table with items: ${added}; status ${described.Table?.GlobalSecondaryIndexes?.map((index) => `${index.IndexName} ${index.IndexStatus}`).join(', ') ?? 'none'}`);
  // The design's alternative, which needs no index: a due entry beside each row, in a partition per day (and shard).
  await client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'trashdue#2026-11-27#3' }, sk: { S: '2026-11-27T10:00:00.000Z#d#t1' } } }));
  await client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'trashdue#2026-11-27#3' }, sk: { S: '2026-11-27T23:00:00.000Z#d#t3' } } }));
  const due = await client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :day AND sk <= :now', ExpressionAttributeValues: { ':day': { S: 'trashdue#2026-11-27#3' }, ':now': { S: '2026-11-27T11:00:00.000Z' } } }));
  console.log(`due entries at 11:00 in 2026-11-27#3: ${(due.Items ?? []).map((item) => item.sk.S).join(', ') || 'none'}`);
  await client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'd#trash' }, sk: { S: '2026-11-26T10:00:00.000Z#t2' } } }));
  const newest = await client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'd#trash' } }, ScanIndexForward: false, Limit: 1 }));
  console.log(`newest row first: ${newest.Items?.[0]?.sk.S}`);
  // The same index made with a new table, for comparison: dynalite serves it, sparse.
  const fresh = 'nodes-fresh';
  await client.send(new CreateTableCommand({
    TableName: fresh,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }, ...AttributeDefinitions],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    GlobalSecondaryIndexes: [create],
  }));
  await client.send(new PutItemCommand({ TableName: fresh, Item: { pk: { S: 'd#trash' }, sk: { S: 't1' }, purgeDay: { S: '2026-11-27#3' }, purgeKey: { S: '2026-11-27T10:00:00.000Z#d#t1' } } }));
  await client.send(new PutItemCommand({ TableName: fresh, Item: { pk: { S: 'd#/' }, sk: { S: 'a.txt' }, kind: { S: 'file' } } }));
  const viaIndex = await client.send(new QueryCommand({ TableName: fresh, IndexName: 'trash-due', KeyConditionExpression: 'purgeDay = :day AND purgeKey <= :now', ExpressionAttributeValues: { ':day': { S: '2026-11-27#3' }, ':now': { S: '2026-11-27T11:00:00.000Z' } } }));
  const status = (await client.send(new DescribeTableCommand({ TableName: fresh }))).Table?.GlobalSecondaryIndexes?.map((index) => `${index.IndexName} ${index.IndexStatus}`).join(', ');
  console.log(`GSI made with a new table: ${status}; due via the index: ${(viaIndex.Items ?? []).map((item) => `${item.pk.S}/${item.sk.S}`).join(', ') || 'none'}`);
  server.close();
}

void main();

import { CreateTableCommand, DeleteItemCommand, DynamoDBClient, PutItemCommand, TransactWriteItemsCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { findDynamoDBLocal, startDynamoDBLocal } from '../support/dynamodb-local';

/**
 * SPIKE for docs/change-feed-design.md (issue 27), not production code: what AWS's DynamoDB Local (the jar
 * `npm run test:dynamodb-local` runs) puts in a table's stream for the writes the change feed must map: a
 * put, the same put again, an update that changes nothing, a refused conditional write, a file move as
 * `FileRecords.move` writes it (one transaction: put at the new key, delete at the old), a delete.
 * `node --import tsx test/bench/dynamodb-local-streams-probe.ts` prints each stream record (event, keys, and
 * whether old and new images came) in the order GetRecords gave them, shard by shard.
 *
 * The project has no DynamoDB Streams client (no dependency added for a spike): the stream calls are sent as
 * raw JSON with a placeholder signature, which DynamoDB Local does not check.
 */
async function main(): Promise<void> {
  const found = findDynamoDBLocal();
  if ('unavailable' in found) throw new Error(found.unavailable);
  const local = await startDynamoDBLocal(found.dir);
  const credentials = { accessKeyId: 'probe', secretAccessKey: 'probe' };
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint: local.endpoint, credentials });
  const streams = async (target: string, body: object): Promise<Record<string, unknown>> => {
    const response = await fetch(local.endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-amz-json-1.0',
        'X-Amz-Target': `DynamoDBStreams_20120810.${target}`,
        Authorization: 'AWS4-HMAC-SHA256 Credential=probe/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${target}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  try {
    const TableName = 'probe-nodes';
    await client.send(
      new CreateTableCommand({
        TableName,
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    const file = (folder: string, name: string, id: string) => ({ pk: { S: `d#${folder}` }, sk: { S: name }, id: { S: id }, kind: { S: 'file' } });
    const steps: [string, () => Promise<unknown>][] = [
      ['put /a/x (id 1)', () => client.send(new PutItemCommand({ TableName, Item: file('/a', 'x', '1') }))],
      ['the same put again', () => client.send(new PutItemCommand({ TableName, Item: file('/a', 'x', '1') }))],
      ['an update that changes nothing', () => client.send(new UpdateItemCommand({ TableName, Key: { pk: { S: 'd#/a' }, sk: { S: 'x' } }, UpdateExpression: 'SET id = :id', ExpressionAttributeValues: { ':id': { S: '1' } } }))],
      ['a refused conditional put', () => client.send(new PutItemCommand({ TableName, Item: file('/a', 'x', '9'), ConditionExpression: 'attribute_not_exists(pk)' })).catch(() => 'refused')],
      [
        'move /a/x to /b/x (one transaction)',
        () =>
          client.send(
            new TransactWriteItemsCommand({
              TransactItems: [
                { Put: { TableName, Item: { ...file('/b', 'x', '1'), movedFrom: { S: '/a/x' } }, ConditionExpression: 'attribute_not_exists(id)' } },
                { Delete: { TableName, Key: { pk: { S: 'd#/a' }, sk: { S: 'x' } }, ConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': { S: '1' } } } },
              ],
            }),
          ),
      ],
      ['put /a/x again (id 2)', () => client.send(new PutItemCommand({ TableName, Item: file('/a', 'x', '2') }))],
      ['delete /b/x', () => client.send(new DeleteItemCommand({ TableName, Key: { pk: { S: 'd#/b' }, sk: { S: 'x' } } }))],
    ];
    for (const [label, step] of steps) console.log(JSON.stringify({ step: label, answer: (await step()) === 'refused' ? 'refused' : 'ok' }));
    const { Streams } = (await streams('ListStreams', { TableName })) as { Streams: { StreamArn: string }[] };
    const { StreamDescription } = (await streams('DescribeStream', { StreamArn: Streams[0].StreamArn })) as { StreamDescription: { Shards: { ShardId: string }[] } };
    console.log(JSON.stringify({ shards: StreamDescription.Shards.length }));
    for (const shard of StreamDescription.Shards) {
      const { ShardIterator } = (await streams('GetShardIterator', { StreamArn: Streams[0].StreamArn, ShardId: shard.ShardId, ShardIteratorType: 'TRIM_HORIZON' })) as { ShardIterator: string };
      const { Records } = (await streams('GetRecords', { ShardIterator })) as { Records: { eventName: string; dynamodb: { Keys: Record<string, { S: string }>; OldImage?: unknown; NewImage?: unknown; SequenceNumber: string } }[] };
      for (const record of Records) {
        const { Keys, OldImage, NewImage, SequenceNumber } = record.dynamodb;
        console.log(JSON.stringify({ shard: shard.ShardId.slice(-8), seq: SequenceNumber, event: record.eventName, key: `${Keys.pk.S}/${Keys.sk.S}`, old: OldImage !== undefined, new: NewImage !== undefined }));
      }
    }
  } finally {
    client.destroy();
    await local.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { DynamoDBClient, GetItemCommand, PutItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { LOCAL_REGION, LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// The embedded DynamoDB's transactions (lib/local/dynamo-transactions.ts) through the signed gateway, given what AWS refuses.

const TABLE = LOCAL_RESOURCES.nodesTable;
const dynamo = useEmbeddedDynamo('review-tx');
let client: DynamoDBClient;

beforeAll(async () => {
  client = dynamo.client;
});

const get = async (pk: string, sk = 'x') => (await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }))).Item;

test('two operations on one item, its key written in another attribute order: refused as AWS does, or both applied; never a success that drops a write', async () => {
  await client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'order' }, sk: { S: 'x' }, v: { S: 'old' } } }));
  let outcome: string;
  try {
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { ConditionCheck: { TableName: TABLE, Key: { sk: { S: 'x' }, pk: { S: 'order' } }, ConditionExpression: 'attribute_exists(pk)' } },
          { Put: { TableName: TABLE, Item: { pk: { S: 'order' }, sk: { S: 'x' }, v: { S: 'new' } } } },
        ],
      }),
    );
    outcome = 'ok';
  } catch (error) {
    outcome = (error as Error).name;
  }
  const v = (await get('order'))?.v.S;
  // AWS: ValidationException ("Transaction request cannot include multiple operations on one item").
  expect({ outcome, v }).toEqual(outcome === 'ok' ? { outcome, v: 'new' } : { outcome: 'ValidationException', v: 'old' });
});

test('a signed TransactWriteItems whose body is JSON null is a 400 (SerializationException/ValidationException), not the gateway\'s 500', async () => {
  const bad = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION, credentials: dynamo.credentials, maxAttempts: 1 });
  bad.middlewareStack.add(
    (next) => async (args) => {
      const req = args.request as { body: string; headers: Record<string, string> };
      req.body = 'null';
      for (const name of Object.keys(req.headers)) if (name.toLowerCase() === 'content-length') delete req.headers[name];
      req.headers['content-length'] = '4';
      return next(args);
    },
    { step: 'build', name: 'nullBody' },
  );
  let status: number | undefined;
  let name = '';
  try {
    await bad.send(new TransactWriteItemsCommand({ TransactItems: [{ ConditionCheck: { TableName: TABLE, Key: { pk: { S: 'n' }, sk: { S: 'x' } }, ConditionExpression: 'attribute_exists(pk)' } }] }));
  } catch (error) {
    status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    name = (error as Error).name;
  } finally {
    bad.destroy();
  }
  expect({ status, name }).toEqual({ status: 400, name: expect.stringMatching(/Serialization|Validation/) });
});

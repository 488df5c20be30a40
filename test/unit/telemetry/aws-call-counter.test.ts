import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { countAwsCalls } from '../../../functions/telemetry/aws-call-counter';
import { currentRequest, withRequestContext } from '../../../functions/telemetry/request-context';

/** A client whose calls answer at once, after `delayMs`, without the network: a middleware ends each one before it is sent. */
function offline<C extends S3Client | DynamoDBClient>(client: C, delayMs = 0): C {
  (client.middlewareStack as S3Client['middlewareStack']).add(
    () => async () => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { output: { $metadata: {} }, response: {} };
    },
    { step: 'finalizeRequest', name: 'offline' },
  );
  return client;
}

const config = { region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } };

describe('Function: countAwsCalls', () => {
  it('counts each command by service in the running request context', async () => {
    const s3 = countAwsCalls(offline(new S3Client(config)), 's3');
    const dynamodb = countAwsCalls(offline(new DynamoDBClient(config)), 'dynamodb');

    const counts = await withRequestContext('r1', async (context) => {
      await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: 'x' }));
      await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }));
      await dynamodb.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'p' } } }));
      return context.awsCalls;
    });

    expect(counts).toEqual({ s3: 2, dynamodb: 1 });
  });

  it('keeps the counts of concurrent requests in one process apart, as the local host runs them', async () => {
    const s3 = countAwsCalls(offline(new S3Client(config), 5), 's3');
    const calls = (n: number) => Array.from({ length: n }, () => s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })));

    const [a, b] = await Promise.all([
      withRequestContext('a', async (context) => {
        await Promise.all(calls(3));
        return context.awsCalls;
      }),
      withRequestContext('b', async (context) => {
        await Promise.all(calls(5));
        return context.awsCalls;
      }),
    ]);

    expect(a).toEqual({ s3: 3 });
    expect(b).toEqual({ s3: 5 });
  });

  it('counts nothing, and fails nothing, outside a request', async () => {
    const s3 = countAwsCalls(offline(new S3Client(config)), 's3');

    await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }));

    expect(currentRequest()).toBeUndefined();
  });
});

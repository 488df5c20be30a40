import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Readable } from 'node:stream';
import { DynamoNodeStore } from '../../../functions/aws/dynamo-node-store';
import type { FileNode } from '../../../functions/core/ports';
import { refusedOutright } from '../../../functions/core/upload';

// A real client (aws-sdk-client-mock replaces `send`, middleware and retries with it): what matters is what
// each of the SDK's attempts met. `putFile` marks its error refused only when every attempt was refused outright.

type Attempt = 'throttled' | 'hung up' | 'condition failed';

/** A store whose client meets `attempts` in turn, making at most `perCall` attempts a call. */
function storeAnswering(attempts: Attempt[], perCall = attempts.length) {
  let sent = 0;
  const client = new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    endpoint: 'http://127.0.0.1:1',
    maxAttempts: perCall,
    cacheMiddleware: true,
    // No wait between attempts: what each met is the point, not the SDK's backoff.
    retryStrategy: {
      acquireInitialRetryToken: async () => ({ getRetryCount: () => 0, getRetryDelay: () => 0 }),
      refreshRetryTokenForRetry: async (token: { getRetryCount(): number }) => {
        if (token.getRetryCount() + 1 >= perCall) throw new Error('no more attempts');
        const count = token.getRetryCount() + 1;
        return { getRetryCount: () => count, getRetryDelay: () => 0 };
      },
      recordSuccess: () => undefined,
    },
    requestHandler: {
      handle: async () => {
        const attempt = attempts[sent++];
        if (attempt === 'hung up') throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        const type = attempt === 'throttled' ? 'ProvisionedThroughputExceededException' : 'ConditionalCheckFailedException';
        const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: attempt });
        return { response: { statusCode: 400, headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type }, body: Readable.from([Buffer.from(body)]) } };
      },
    },
  });
  return { store: new DynamoNodeStore(client, 'nodes'), sent: () => sent };
}

const file: FileNode = { kind: 'file', id: 'f', path: '/a', size: 1, contentType: 'text/plain', createdAt: '2026-01-01T00:00:00.000Z', objectKey: 'd/f', etag: 'e' };

describe('Class: DynamoNodeStore, Method: putFile, when it fails', () => {
  it('marks a throttle at every attempt refused: no attempt was written', async () => {
    const { store, sent } = storeAnswering(['throttled', 'throttled', 'throttled']);
    const error = await store.putFile('d', file).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(sent()).toBe(3);
    expect(refusedOutright(error)).toBe(true);
  });

  it('does not mark a throttle whose first attempt lost its reply: that attempt may have been written', async () => {
    const { store, sent } = storeAnswering(['hung up', 'throttled', 'throttled']);
    const error = await store.putFile('d', file).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(sent()).toBe(3);
    expect(refusedOutright(error)).toBe(false);
  });

  it('does not mark a lost reply', async () => {
    const { store } = storeAnswering(['hung up']);
    const error = await store.putFile('d', file).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ message: 'socket hang up' });
    expect(refusedOutright(error)).toBe(false);
  });

  it('answers a failed condition, throwing nothing', async () => {
    const { store } = storeAnswering(['condition failed']);
    await expect(store.putFile('d', file)).resolves.toEqual({ ok: false });
  });

  it('judges each call by its own attempts, on one client', async () => {
    // Two attempts a call: the first call meets a lost reply then a throttle, the second two throttles.
    const { store, sent } = storeAnswering(['hung up', 'throttled', 'throttled', 'throttled'], 2);
    const first = await store.putFile('d', file).catch((e: unknown) => e);
    const second = await store.putFile('d', { ...file, path: '/b' }).catch((e: unknown) => e);
    expect(sent()).toBe(4);
    expect([refusedOutright(first), refusedOutright(second)]).toEqual([false, true]);
  });
});

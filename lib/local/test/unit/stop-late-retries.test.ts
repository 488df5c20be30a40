import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * The local host stops a function's AWS calls past its timeout (issue 26, docs/local-host.md): "a function
 * Lambda stopped sends nothing more". The stop is checked before a call and when its answer comes back; the
 * SDK's own retries of a call run between the two.
 */
describe('Local host: stopLateCalls, with a call the SDK retries', () => {
  let server: Server;
  const writes: number[] = [];
  let stopped: string | undefined;

  beforeAll(async () => {
    // Prepare: a DynamoDB endpoint that throttles the first write it gets, the function's timeout passing
    // while that answer travels, and takes every later one
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        writes.push(writes.length + 1);
        if (writes.length === 1) {
          stopped = 'drive-upload ran past its timeout of 29 s; Lambda would have stopped it';
          res.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0' });
          res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'throttled' }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', DRIVE_BUCKET: 'drive-test', DRIVE_DYNAMODB_ENDPOINT: url, DRIVE_S3_ENDPOINT: url });
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends no retry of a write once the function has passed its timeout', async () => {
    // (jest cannot import() a path, so the three modules the host loads by path are handed over as a bundle's are)
    const wiring = join(__dirname, '../../../../functions/wiring');
    (globalThis as Record<symbol, unknown>)[Symbol.for('drive.local.preloaded')] = {
      modules: { [join(wiring, 'dynamodb.ts')]: () => require(join(wiring, 'dynamodb.ts')), [join(wiring, 'objects.ts')]: () => require(join(wiring, 'objects.ts')), [join(wiring, 'job-queue.ts')]: () => require(join(wiring, 'job-queue.ts')) },
    };
    const { localDomain } = require('../../../local-host') as typeof import('../../../local-host');
    await localDomain.stopLateCalls(() => stopped);
    const { dynamodb } = require(join(wiring, 'dynamodb.ts')) as typeof import('../../../../functions/wiring/dynamodb');

    // Act: a write begun within the function's time, throttled once; the timeout passes meanwhile
    const outcome = await dynamodb.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'k' } } })).then(
      () => 'written',
      (error: Error) => error.name,
    );

    // Assess: refused, and nothing was sent after the timeout (the throttled attempt is the only one)
    expect({ outcome, writes: writes.length }).toEqual({ outcome: 'FunctionStopped', writes: 1 });
  });
});

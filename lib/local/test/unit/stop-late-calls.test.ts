import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * The local host stops a function's AWS calls past its timeout (issue 26, docs/local-host.md): Lambda would
 * have stopped the function, so nothing it starts after that reaches AWS. `localDomain.stopLateCalls` puts the
 * stop on the handlers' DynamoDB and S3 clients; the job queue's SQS client (functions/wiring/job-queue.ts),
 * which the host points at its embedded queue, is a third client a handler sends with (a folder's delete, a
 * move, a copy start their job by it).
 */
describe('Local host: stopLateCalls', () => {
  let server: Server;
  const seen: string[] = [];

  beforeAll(async () => {
    // Prepare: an endpoint that records every AWS call it is sent and answers as SQS and DynamoDB would
    server = createServer((req, res) => {
      seen.push(String(req.headers['x-amz-target'] ?? req.url));
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = (JSON.parse(Buffer.concat(chunks).toString() || '{}') as { MessageBody?: string }).MessageBody ?? '';
        res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ MessageId: 'm', MD5OfMessageBody: createHash('md5').update(body).digest('hex') }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      DRIVE_BUCKET: 'drive-test',
      DRIVE_DYNAMODB_ENDPOINT: url,
      DRIVE_S3_ENDPOINT: url,
      DRIVE_SQS_ENDPOINT: url,
      DRIVE_JOB_QUEUE_URL: `${url}/000000000000/jobs`,
    });
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses a job-queue send begun past the function\'s timeout, as it refuses a DynamoDB call', async () => {
    // Prepare: the host's stop, with a function that has passed its timeout
    // (jest cannot import() a path, so the three modules the host loads by path are handed over as a bundle's are)
    const wiring = join(__dirname, '../../../../functions/wiring');
    (globalThis as Record<symbol, unknown>)[Symbol.for('drive.local.preloaded')] = {
      modules: { [join(wiring, 'dynamodb.ts')]: () => require(join(wiring, 'dynamodb.ts')), [join(wiring, 'objects.ts')]: () => require(join(wiring, 'objects.ts')), [join(wiring, 'job-queue.ts')]: () => require(join(wiring, 'job-queue.ts')) },
    };
    const { localDomain } = require('../../../local-host') as typeof import('../../../local-host');
    await localDomain.stopLateCalls(() => 'drive-delete-folder ran past its timeout of 29 s; Lambda would have stopped it');
    const { dynamodb } = require(join(wiring, 'dynamodb.ts')) as typeof import('../../../../functions/wiring/dynamodb');
    const { jobQueue } = require(join(wiring, 'job-queue.ts')) as typeof import('../../../../functions/wiring/job-queue');

    // Act: the stopped function reads an item, then starts a job
    const read = dynamodb.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'k' } } }));
    const queued = jobQueue.send({ id: 'job-1', drive: 'default' });

    // Assess: neither reaches AWS; the send is refused as the read is
    await expect(read).rejects.toMatchObject({ name: 'FunctionStopped' });
    const outcome = await queued.then(() => 'sent', (error: Error) => error.name);
    expect({ outcome, seen }).toEqual({ outcome: 'FunctionStopped', seen: [] });
  });
});

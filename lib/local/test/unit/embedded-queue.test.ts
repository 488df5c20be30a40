import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { startEmbeddedQueues } from '../../embedded-queue';

// The host's embedded SQS: files it did not write (a null, an id that is a path, a body that is not a string,
// bytes that are not JSON) neither stop it from starting nor stall the feed; they are set aside.

const credentials = { accessKeyId: 'AKIDQUEUETEST', secretAccessKey: 'queue-test-secret-0123456789' };

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-queue-'));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

it('sets aside message files it did not write, starts, and delivers the real messages', async () => {
  const dir = join(dataDir, 'queues', 'jobs');
  await mkdir(dir, { recursive: true });
  const now = Date.now();
  await writeFile(join(dir, 'null.json'), 'null');
  await writeFile(join(dir, 'garbage.json'), '{not json');
  await writeFile(join(dir, 'path.json'), JSON.stringify({ id: '../escape', body: 'x', sentAt: now, receiveCount: 0, visibleAt: 0 }));
  await writeFile(join(dir, 'body.json'), JSON.stringify({ id: 'body', body: { job: 1 }, sentAt: now, receiveCount: 0, visibleAt: 0 }));

  const queues = await startEmbeddedQueues(dataDir, ['jobs'], 'us-east-1', credentials);
  const delivered: string[] = [];
  const logged: string[] = [];
  let got!: () => void;
  const gotOne = new Promise<void>((resolve) => (got = resolve));
  const stop = queues.feed('jobs', {
    handler: async (event: SQSEvent) => {
      delivered.push(...event.Records.map((record) => record.body));
      got();
      return { batchItemFailures: [] };
    },
    timeoutMs: 5000,
    maxReceives: 3,
    visibilityMs: 60_000,
    concurrency: 1,
    log: (line) => logged.push(line),
  });
  try {
    const client = new SQSClient({ endpoint: queues.endpoint, region: 'us-east-1', credentials });
    await client.send(new SendMessageCommand({ QueueUrl: queues.queueUrl('jobs'), MessageBody: '{"job":"j1","drive":"d"}' }));
    client.destroy();
    await gotOne;
    expect(delivered).toEqual(['{"job":"j1","drive":"d"}']);
    expect((await readdir(join(dataDir, 'queues', 'jobs-dead-letters'))).filter((file) => file.startsWith('malformed-'))).toHaveLength(4);
    expect(logged.filter((line) => /TypeError|failed to read/.test(line))).toEqual([]);
  } finally {
    await stop();
    await queues.close();
  }
});

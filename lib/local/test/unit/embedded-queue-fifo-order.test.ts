import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { startEmbeddedQueues } from '../../embedded-queue';

// Review of issue 27 (c27-hooks): SQS FIFO keeps a group's messages in the order they were sent, whatever
// the clock does ("FIFO queue delivery logic"). The embedded queue orders by `Date.now() * 1000 + (sends %
// 1000)`: a batch that crosses a multiple of 1000 sends within one millisecond numbers its later messages
// below its earlier ones. The clock is held still so that the test does not depend on the machine's speed.

const credentials = { accessKeyId: 'AKIDQUEUETEST', secretAccessKey: 'queue-test-secret-0123456789' };

describe('Embedded FIFO queue: order within a group', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'drive-fifo-order-'));
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers a batch of one group in the order sent when the sends counter passes 1000 within one millisecond', async () => {
    // Prepare: the clock held at one millisecond; 998 messages sent to another FIFO queue, not fed.
    const frozen = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(frozen);
    const queues = await startEmbeddedQueues(dataDir, ['deliveries', 'other'], 'us-east-1', credentials, ['deliveries', 'other']);
    const client = new SQSClient({ endpoint: queues.endpoint, region: 'us-east-1', credentials });
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    let stop: (() => Promise<void>) | undefined;
    try {
      for (let i = 0; i < 998; i += 10) {
        const bodies = Array.from({ length: Math.min(10, 998 - i) }, (_, n) => `o${i + n}`);
        await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queues.queueUrl('other'),
            Entries: bodies.map((body, n) => ({ Id: String(n), MessageBody: body, MessageGroupId: 'o', MessageDeduplicationId: body })),
          }),
        );
      }

      // Act: four messages of group g in one batch (the 999th to 1002nd FIFO sends), then fed one at a time.
      await client.send(
        new SendMessageBatchCommand({
          QueueUrl: queues.queueUrl('deliveries'),
          Entries: ['g1', 'g2', 'g3', 'g4'].map((body, n) => ({ Id: String(n), MessageBody: body, MessageGroupId: 'g', MessageDeduplicationId: body })),
        }),
      );
      stop = queues.feed('deliveries', {
        handler: async (event: SQSEvent) => {
          seen.push(event.Records[0].body);
          if (seen.length === 4) done();
          return { batchItemFailures: [] };
        },
        timeoutMs: 5000,
        maxReceives: 10,
        visibilityMs: 60_000,
        concurrency: 1,
        log: () => undefined,
      });
      await finished;

      // Assess: the group's order is the order sent.
      expect(seen).toEqual(['g1', 'g2', 'g3', 'g4']);
    } finally {
      client.destroy();
      await stop?.();
      await queues.close();
    }
  });
});

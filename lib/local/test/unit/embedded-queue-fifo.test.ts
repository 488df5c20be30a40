import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangeMessageVisibilityCommand, SQSClient, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { startEmbeddedQueues } from '../../embedded-queue';
import { DeduplicationWindow, deliverable } from '../../fifo';

// The embedded queue's FIFO queues, as the webhooks' deliveries use them (lib/local/fifo.ts): message groups
// one at a time in order, a failed message holding its group, deduplication ids, ChangeMessageVisibility,
// and ApproximateFirstReceiveTimestamp kept across receives.

const credentials = { accessKeyId: 'AKIDQUEUETEST', secretAccessKey: 'queue-test-secret-0123456789' };

describe('Function: deliverable', () => {
  it('gives each group its oldest message alone, and none while that one is hidden', () => {
    const messages = [
      { id: 'a1', groupId: 'a', sequence: 1, visibleAt: 0 },
      { id: 'b1', groupId: 'b', sequence: 2, visibleAt: 500 },
      { id: 'a2', groupId: 'a', sequence: 3, visibleAt: 0 },
      { id: 'c1', groupId: 'c', sequence: 4, visibleAt: 0 },
      { id: 'b2', groupId: 'b', sequence: 5, visibleAt: 0 },
    ];
    expect(deliverable(messages, 100).map((m) => m.id)).toEqual(['a1', 'c1']);
    expect(deliverable(messages, 500).map((m) => m.id)).toEqual(['a1', 'b1', 'c1']);
    expect(deliverable(messages.filter((m) => m.id !== 'a1'), 100).map((m) => m.id)).toEqual(['a2', 'c1']);
  });

  it('gives every visible message of a standard queue', () => {
    expect(deliverable([{ id: 'x', sequence: 2, visibleAt: 0 }, { id: 'y', sequence: 1, visibleAt: 0 }], 0).map((m) => m.id)).toEqual(['y', 'x']);
  });
});

describe('Class: DeduplicationWindow', () => {
  it('drops an id sent again within 5 minutes, and takes it after', () => {
    const window = new DeduplicationWindow();
    expect(window.duplicate('d1', 0)).toBe(false);
    expect(window.duplicate('d1', 299_999)).toBe(true);
    expect(window.duplicate('d1', 300_000)).toBe(false);
  });
});

describe('Embedded FIFO queue', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'drive-fifo-'));
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers a group in order, one at a time, a failed message before those behind it, and drops a repeated deduplication id', async () => {
    // Prepare: a FIFO queue; its worker fails a1's first receive and makes it visible again at once.
    const queues = await startEmbeddedQueues(dataDir, ['deliveries'], 'us-east-1', credentials, ['deliveries']);
    const client = new SQSClient({ endpoint: queues.endpoint, region: 'us-east-1', credentials });
    const url = queues.queueUrl('deliveries');
    const seen: SQSRecord[] = [];
    let inFlight = 0;
    let overlapped = false;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const stop = queues.feed('deliveries', {
      handler: async (event: SQSEvent) => {
        const record = event.Records[0];
        inFlight++;
        if (inFlight > 1) overlapped = true;
        seen.push(record);
        try {
          if (record.body === 'a1' && record.attributes.ApproximateReceiveCount === '1') {
            await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: record.receiptHandle, VisibilityTimeout: 0 }));
            return { batchItemFailures: [{ itemIdentifier: record.messageId }] };
          }
          return { batchItemFailures: [] };
        } finally {
          inFlight--;
          if (seen.filter((r) => r.body.startsWith('a')).length === 4) done();
        }
      },
      timeoutMs: 5000,
      maxReceives: 10,
      visibilityMs: 60_000,
      concurrency: 4,
      log: () => undefined,
    });
    try {
      // Act: three of group a in one batch, a1 again (the same deduplication id), then a refusal without a group.
      await client.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: ['a1', 'a2', 'a3'].map((body, i) => ({ Id: String(i), MessageBody: body, MessageGroupId: 'a', MessageDeduplicationId: `dedup-${body}` })),
        }),
      );
      await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'a1', MessageGroupId: 'a', MessageDeduplicationId: 'dedup-a1' }));
      await expect(client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'no group' }))).rejects.toThrow('MessageGroupId');
      await finished;

      // Assess: a1 twice (its first receive failed), then a2, a3; never two of the group at once; the
      // first-receive time the same on both of a1's receives.
      const group = seen.filter((r) => r.body.startsWith('a'));
      expect(group.map((r) => `${r.body}#${r.attributes.ApproximateReceiveCount}`)).toEqual(['a1#1', 'a1#2', 'a2#1', 'a3#1']);
      expect(overlapped).toBe(false);
      expect(group[1].attributes.ApproximateFirstReceiveTimestamp).toBe(group[0].attributes.ApproximateFirstReceiveTimestamp);
      expect(group[0].attributes.MessageGroupId).toBe('a');
    } finally {
      client.destroy();
      await stop();
      await queues.close();
    }
  });
});

import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, type SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Job, JobQueue } from '../core/ports';
import { type DeliveryMessage, type DeliveryQueue, deliveryId } from '../core/webhooks';

/** The job worker's queue; the client sends to the queue URL's own host (the host's embedded queue locally). */
export class SqsJobQueue implements JobQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(job: Pick<Job, 'id' | 'drive'>, options: { delaySeconds?: number } = {}): Promise<void> {
    const delay = options.delaySeconds ? { DelaySeconds: Math.min(900, Math.ceil(options.delaySeconds)) } : {};
    await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify({ job: job.id, drive: job.drive }), ...delay }));
  }
}

/** A message of the queue, as the worker reads it; undefined if it is not one this queue's senders make. */
export function parseJobMessage(body: string): { job: string; drive: string } | undefined {
  try {
    const value = JSON.parse(body) as { job?: unknown; drive?: unknown };
    return typeof value.job === 'string' && typeof value.drive === 'string' ? { job: value.job, drive: value.drive } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The deliveries queue (SQS FIFO): each message in its webhook's group, deduplicated by its delivery id for
 * 5 minutes, so that a dispatcher that sends again after dying before it advanced queues nothing twice.
 */
export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(messages: readonly DeliveryMessage[]): Promise<void> {
    // Batches of ten, one after the other: SQS keeps a group's order within and across sends.
    for (let i = 0; i < messages.length; i += 10) {
      const batch = messages.slice(i, i + 10);
      const { Failed } = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((message, n) => ({ Id: String(n), MessageBody: JSON.stringify(message), MessageGroupId: message.webhookId, MessageDeduplicationId: deliveryId(message) })),
        }),
      );
      if (Failed && Failed.length > 0) throw new Error(`the deliveries queue refused ${Failed.length} of ${batch.length} messages: ${Failed[0].Code} ${Failed[0].Message ?? ''}`);
    }
  }

  /** Hides a received message for `seconds` (its backoff): `ChangeMessageVisibility`. */
  async hide(receiptHandle: string, seconds: number): Promise<void> {
    await this.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
  }
}

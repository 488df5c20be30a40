import { type SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Job, JobQueue } from '../core/ports';

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

import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Job, JobQueue } from '../core/ports';
import { requireEnv } from './env';
import { QUIET_SDK_LOGGER } from './sdk-logger';
import { countAwsCalls } from '../telemetry/aws-call-counter';

/** The delete worker's queue; the client sends to the queue URL's own host (the host's embedded queue locally). */
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

/** The queue of this container, its client built at the first send (the functions that never send need no URL). */
let queue: SqsJobQueue | undefined;
export const jobQueue: JobQueue = {
  send: (job, options) => {
    // `DRIVE_SQS_ENDPOINT` points the client at the local host's embedded queue.
    const endpoint = process.env.DRIVE_SQS_ENDPOINT;
    queue ??= new SqsJobQueue(countAwsCalls(new SQSClient({ logger: QUIET_SDK_LOGGER, ...(endpoint ? { endpoint } : {}) }), 'sqs'), requireEnv('DRIVE_JOB_QUEUE_URL'));
    return queue.send(job, options);
  },
};

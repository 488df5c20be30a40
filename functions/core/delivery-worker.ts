import { type DeliveryMessage, type PostDelivery, type RetryPolicy, type WebhookStore, attemptDelivery } from './webhooks';

/** A message of the deliveries queue as the worker is handed it (the fields of Lambda's SQS record it reads). */
export interface DeliveryRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount: string; ApproximateFirstReceiveTimestamp: string; SentTimestamp: string };
}

/** Hides a received message for `seconds` (SQS's `ChangeMessageVisibility`): the backoff before its next attempt. */
export type HideMessage = (receiptHandle: string, seconds: number) => Promise<void>;

/** SQS's longest visibility timeout: 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/** A message of the deliveries queue, as the dispatcher wrote it; undefined if it is not one. */
export function parseDeliveryMessage(body: string): DeliveryMessage | undefined {
  try {
    const value = JSON.parse(body) as Partial<DeliveryMessage>;
    const change = value.change as DeliveryMessage['change'] | undefined;
    if (typeof value.drive !== 'string' || typeof value.webhookId !== 'string' || typeof value.position !== 'number' || typeof value.cursor !== 'string') return undefined;
    if (typeof change !== 'object' || change === null || typeof change.id !== 'string' || typeof change.type !== 'string') return undefined;
    return value as DeliveryMessage;
  } catch {
    return undefined;
  }
}

/**
 * Works a batch of the deliveries queue (batch size 1 in the stack; one message group a webhook, so a
 * webhook's deliveries come one at a time, in order): each message attempted once. One to try again is
 * hidden for its backoff, then reported failed, so its group waits behind it; the rest are deleted. Answers
 * the ids to report as failed (`batchItemFailures`), and after a failure the rest of the batch too (a FIFO
 * queue's later messages must not pass it).
 */
export async function workDeliveries(
  ports: { store: WebhookStore; post: PostDelivery; hide: HideMessage },
  records: readonly DeliveryRecord[],
  options: { now: () => Date; policy?: RetryPolicy; log?: (level: 'INFO' | 'WARN' | 'ERROR', message: string, fields: Record<string, unknown>) => void },
): Promise<string[]> {
  const failed: string[] = [];
  const log = options.log ?? (() => undefined);
  for (const record of records) {
    if (failed.length > 0) {
      failed.push(record.messageId);
      continue;
    }
    const message = parseDeliveryMessage(record.body);
    if (!message) {
      log('ERROR', 'dropped a message that is no delivery', { message_id: record.messageId });
      continue;
    }
    const now = options.now();
    const first = Number(record.attributes.ApproximateFirstReceiveTimestamp);
    const sent = Number(record.attributes.SentTimestamp);
    const attempt = {
      number: Number(record.attributes.ApproximateReceiveCount) || 1,
      firstAt: new Date(Number.isFinite(first) && first > 0 ? first : now.getTime()),
      ...(Number.isFinite(sent) && sent > 0 ? { queuedAt: new Date(sent) } : {}),
      now,
    };
    const result = await attemptDelivery(ports, message, attempt, options.policy);
    if (result.kind === 'retry') {
      const seconds = Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(result.afterMs / 1000));
      await ports.hide(record.receiptHandle, seconds);
      log('WARN', 'a webhook delivery failed; it is tried again', { webhook: message.webhookId, change: message.change.id, attempt: attempt.number, reason: result.reason, retry_in_s: seconds });
      failed.push(record.messageId);
    } else if (result.kind === 'failed') {
      log('WARN', 'a webhook delivery failed for good', { webhook: message.webhookId, change: message.change.id, attempts: attempt.number });
    }
  }
  return failed;
}

import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deliveryQueue } from './wiring/delivery-queue';
import { webhooks } from './wiring/webhooks';
import { setting } from './config';
import { workDeliveries } from './core/delivery-worker';
import { DEFAULT_RETRY } from './core/webhooks';
import { webhookPoster } from './http/webhook-post';
import { log } from './telemetry/log';

const policy = {
  ...DEFAULT_RETRY,
  baseMs: setting('webhookRetryBaseMs') ?? DEFAULT_RETRY.baseMs,
  forMs: (setting('webhookRetryForSeconds') ?? DEFAULT_RETRY.forMs / 1000) * 1000,
};
const post = webhookPoster({ allowLoopback: setting('webhookAllowLoopback') });

/**
 * Fed by the deliveries queue (SQS FIFO, one message group a webhook, batch size 1): POSTs each delivery,
 * signed; one that fails is hidden for its backoff (`ChangeMessageVisibility`) and reported failed, so its
 * webhook's later deliveries wait behind it; after 24 hours it is written off as a failed delivery.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failed = await workDeliveries({ store: webhooks, post, hide: deliveryQueue.hide }, event.Records, { now: () => new Date(), policy, log: (level, message, fields) => log(level, message, fields) });
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
};

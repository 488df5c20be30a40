import { SqsDeliveryQueue } from '../aws/sqs';
import { setting } from '../config';
import type { DeliveryMessage, DeliveryQueue } from '../core/webhooks';
import { sqs } from './job-queue';

/** The deliveries queue of this container, made at the first use (only the dispatcher and the worker use it). */
let queue: SqsDeliveryQueue | undefined;
const made = () => (queue ??= new SqsDeliveryQueue(sqs, setting('deliveryQueueUrl')));

export const deliveryQueue: DeliveryQueue & { hide(receiptHandle: string, seconds: number): Promise<void> } = {
  send: (messages: readonly DeliveryMessage[]) => made().send(messages),
  hide: (receiptHandle, seconds) => made().hide(receiptHandle, seconds),
};

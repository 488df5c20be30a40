import { DynamoWebhookStore } from '../aws/dynamo-webhooks';
import { setting } from '../config';
import { dynamodb } from './dynamodb';

/** The webhooks, their dispatcher's position and their failed deliveries, in the changes table. */
export const webhooks = new DynamoWebhookStore(dynamodb, setting('changesTable'));

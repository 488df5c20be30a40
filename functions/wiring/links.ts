import { DynamoLinkStore } from '../aws/dynamo-links';
import { setting } from '../config';
import { dynamodb } from './dynamodb';

/** Share links, beside the API keys. */
export const links = new DynamoLinkStore(dynamodb, setting('accessTable'));

import { DynamoTrustStore } from '../aws/dynamo-trust';
import { setting } from '../config';
import { dynamodb } from './dynamodb';

/** Whether issuers on this machine's loopback (plain http) may be trusted: the local host's, never the stack's. */
export const loopbackIssuers = setting('trustLoopbackIssuers');

/** Trust rules and the keys minted under them, in the access table. */
export const trust = new DynamoTrustStore(dynamodb, setting('accessTable'));

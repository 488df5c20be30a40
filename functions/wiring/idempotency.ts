import { DynamoIdempotencyStore, INLINE_ANSWER_BYTES } from '../aws/dynamo-idempotency';
import { setting } from '../config';
import { dynamodb } from './dynamodb';

/** Idempotency-Key records, in the access table beside the keys they are scoped to (functions/aws/dynamo-idempotency.ts). */
export const idempotency = new DynamoIdempotencyStore(dynamodb, setting('accessTable'), setting('idempotencyInlineBytes') ?? INLINE_ANSWER_BYTES);

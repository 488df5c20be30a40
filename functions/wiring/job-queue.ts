import { SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../core/ports';
import { QUIET_SDK_LOGGER } from '../aws/sdk-logger';
import { SqsJobQueue } from '../aws/sqs';
import { setting } from '../config';
import { countAwsCalls } from '../telemetry/aws-call-counter';

/**
 * The SQS client of this container, built at import as the other stores' clients are (the local host adds its
 * stop past a function's timeout to it, lib/local-host.ts); `DRIVE_SQS_ENDPOINT` points it at the local host's
 * embedded queue.
 */
export const sqs = countAwsCalls(new SQSClient({ logger: QUIET_SDK_LOGGER, ...(setting('sqsEndpoint') ? { endpoint: setting('sqsEndpoint') } : {}) }), 'sqs');

/** The queue of this container, made at the first send (the functions that never send need no URL). */
let queue: SqsJobQueue | undefined;
export const jobQueue: JobQueue = {
  send: (job, options) => {
    queue ??= new SqsJobQueue(sqs, setting('jobQueueUrl'));
    return queue.send(job, options);
  },
};

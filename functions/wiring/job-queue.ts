import { SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../core/ports';
import { QUIET_SDK_LOGGER } from '../aws/sdk-logger';
import { SqsJobQueue } from '../aws/sqs';
import { setting } from '../config';
import { countAwsCalls } from '../telemetry/aws-call-counter';

/** The queue of this container, its client built at the first send (the functions that never send need no URL). */
let queue: SqsJobQueue | undefined;
export const jobQueue: JobQueue = {
  send: (job, options) => {
    // `DRIVE_SQS_ENDPOINT` points the client at the local host's embedded queue.
    const endpoint = setting('sqsEndpoint');
    queue ??= new SqsJobQueue(countAwsCalls(new SQSClient({ logger: QUIET_SDK_LOGGER, ...(endpoint ? { endpoint } : {}) }), 'sqs'), setting('jobQueueUrl'));
    return queue.send(job, options);
  },
};

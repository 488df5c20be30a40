import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { jobs, journal, nodes, records } from './aws/dynamodb';
import { millisecondsEnv } from './aws/env';
import { objects } from './aws/s3';
import { jobQueue, parseJobMessage } from './aws/sqs';
import { STEP_DELETE_BUDGET_MS } from './core/delete-folder';
import { advanceJob } from './core/jobs';

/** How long a step works before it sends the job on; tests make it short to see a job cross several steps. */
const budgetMs = millisecondsEnv('DRIVE_DELETE_STEP_MS', STEP_DELETE_BUDGET_MS);

/**
 * Fed by the jobs queue (SQS in AWS, one message at a time; the local host's embedded queue): advances
 * each job a step. A step that fails is reported, so the queue sends that message again later, and after
 * five failures to the dead-letter queue, whose alarm an operator sees; the job itself stays running, and
 * the sweep sends it again.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const message = parseJobMessage(record.body);
    if (!message) {
      console.error(JSON.stringify({ level: 'error', message: 'dropped a message that names no job', messageId: record.messageId }));
      continue;
    }
    try {
      const job = await advanceJob({ nodes, objects, jobs, journal, records, queue: jobQueue }, message.job, message.drive, budgetMs);
      console.log(JSON.stringify({ level: 'info', message: 'advanced a job', job: message.job, status: job?.status ?? 'unknown', files: job?.files }));
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', message: 'a job step failed', job: message.job, error: String(error) }));
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

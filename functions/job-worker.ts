import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { jobs } from './wiring/jobs';
import { journal } from './wiring/journal';
import { records } from './wiring/records';
import { trash, trashPolicy } from './wiring/trash';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { parseJobMessage } from './aws/sqs';
import { jobQueue } from './wiring/job-queue';
import { STEP_DELETE_BUDGET_MS } from './core/delete-folder';
import { advanceJob } from './core/jobs';
import { describeError, log } from './telemetry/log';
import { withRequestContext } from './telemetry/request-context';
import { setting } from './config';

/** How long a step works before it sends the job on (`DRIVE_JOB_STEP_MS`); tests make it short to see a job cross several steps. */
const budgetMs = setting('jobStepMs') ?? STEP_DELETE_BUDGET_MS;

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
      log('ERROR', 'dropped a message that names no job', { message_id: record.messageId });
      continue;
    }
    // Each message a context of its own, named by its id: its line counts its AWS calls as a request's does.
    await withRequestContext(record.messageId, async (context) => {
      try {
        const job = await advanceJob({ nodes, objects, jobs, journal, records, trash, trashPolicy: trashPolicy(), queue: jobQueue }, message.job, message.drive, budgetMs);
        log('INFO', 'advanced a job', { message_id: record.messageId, job: message.job, status: job?.status ?? 'unknown', files: job?.files, aws_calls: context.awsCalls });
      } catch (error) {
        log('ERROR', 'a job step failed', { message_id: record.messageId, job: message.job, error: describeError(error), aws_calls: context.awsCalls });
        failures.push({ itemIdentifier: record.messageId });
      }
    });
  }
  return { batchItemFailures: failures };
};

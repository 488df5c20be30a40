import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { enabled, log } from './log';
import { currentRequest, noteAwsCall } from './request-context';
import { MAX_SUBSEGMENTS, sendSubsegment, stopwatch } from './trace';

type Client = S3Client | DynamoDBClient | SQSClient;

/**
 * Counts each command `client` sends, under `service`, in the running request's context (its log line's
 * `aws_calls`); when the request is traced, each call is a subsegment of its trace (./trace.ts); at DEBUG
 * level each call gets a line of its own with its command and time taken. A command counts once, however
 * many times the SDK retries it.
 */
export function countAwsCalls<C extends Client>(client: C, service: string): C {
  // Each client's stack has its own input and output types; this middleware reads only the response's metadata.
  const stack = client.middlewareStack as S3Client['middlewareStack'];
  stack.add((next, context) => async (args) => {
    noteAwsCall(service);
    const request = currentRequest();
    const traced = request?.trace?.sampled === true && request.subsegments < MAX_SUBSEGMENTS;
    const debug = enabled('DEBUG');
    if (!traced && !debug) return next(args);
    if (traced) request.subsegments++;
    const timer = stopwatch();
    let meta: Metadata | undefined;
    let failure: string | undefined;
    try {
      const out = await next(args);
      meta = (out.output as { $metadata?: Metadata }).$metadata;
      return out;
    } catch (error) {
      failure = error instanceof Error ? error.name : 'error';
      meta = (error as { $metadata?: Metadata }).$metadata;
      throw error;
    } finally {
      const call = { service, operation: context.commandName?.replace(/Command$/, '') ?? 'unknown', start: timer.start, end: timer.stop(), status: meta?.httpStatusCode, awsRequestId: meta?.requestId, attempts: meta?.attempts, error: failure };
      if (traced) sendSubsegment(request.trace!, call);
      if (debug) log('DEBUG', 'aws call', { request_id: request?.requestId, service, command: context.commandName, outcome: failure ?? 'ok', ms: Math.round(call.end - call.start) });
    }
  }, { step: 'initialize', name: 'driveAwsCallCounter' });
  return client;
}

/** What the SDK tells of a call's response. */
interface Metadata {
  httpStatusCode?: number;
  requestId?: string;
  attempts?: number;
}

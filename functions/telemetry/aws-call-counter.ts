import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { enabled, log } from './log';
import { currentRequest, noteAwsCall } from './request-context';

type Client = S3Client | DynamoDBClient | SQSClient;

/**
 * Counts each command `client` sends, under `service`, in the running request's context (its log line's
 * `aws_calls`); at DEBUG level each call gets a line of its own with its command and time taken. A command
 * counts once, however many times the SDK retries it.
 */
export function countAwsCalls<C extends Client>(client: C, service: string): C {
  // Each client's stack has its own input and output types; this middleware reads neither.
  const stack = client.middlewareStack as S3Client['middlewareStack'];
  stack.add((next, context) => async (args) => {
    noteAwsCall(service);
    if (!enabled('DEBUG')) return next(args);
    const started = Date.now();
    let outcome = 'ok';
    try {
      return await next(args);
    } catch (error) {
      outcome = error instanceof Error ? error.name : 'error';
      throw error;
    } finally {
      log('DEBUG', 'aws call', { request_id: currentRequest()?.requestId, service, command: context.commandName, outcome, ms: Date.now() - started });
    }
  }, { step: 'initialize', name: 'driveAwsCallCounter' });
  return client;
}

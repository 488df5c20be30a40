import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';

const STEP = { step: 'initialize' as const, name: 'driveBenchCallCounter' };

/** Counts the commands SDK clients send, by name, through a middleware at the first step of each call. */
export class CallCounter {
  private readonly counts = new Map<string, number>();

  constructor(dynamodb: DynamoDBClient, s3: S3Client) {
    dynamodb.middlewareStack.add((next, context) => async (args) => {
      this.count(context.commandName);
      return next(args);
    }, STEP);
    s3.middlewareStack.add((next, context) => async (args) => {
      this.count(context.commandName);
      return next(args);
    }, STEP);
  }

  /** The calls made while `work` runs, by command. */
  async during(work: () => Promise<unknown>): Promise<Record<string, number>> {
    this.counts.clear();
    await work();
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  private count(commandName: string | undefined): void {
    const name = (commandName ?? 'unknown').replace(/Command$/, '');
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }
}

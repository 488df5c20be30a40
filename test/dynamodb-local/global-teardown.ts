import type { DynamoDBLocal } from '../support/dynamodb-local';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { dynamodbLocal?: DynamoDBLocal }).dynamodbLocal?.stop();
}

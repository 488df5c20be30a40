import { type DynamoDBLocal, findDynamoDBLocal, startDynamoDBLocal } from '../support/dynamodb-local';

/** The environment variables the tier's files read: DynamoDB Local's endpoint, or why it is not running. */
export const LOCAL_ENDPOINT_ENV = 'DRIVE_DYNAMODB_LOCAL_ENDPOINT';
export const UNAVAILABLE_ENV = 'DRIVE_DYNAMODB_LOCAL_UNAVAILABLE';

/** Starts one DynamoDB Local for the whole run (its JVM takes seconds to start), or says plainly why not. */
export default async function globalSetup(): Promise<void> {
  const found = findDynamoDBLocal();
  if ('unavailable' in found) {
    // CI sets it: there, a missing Java is a broken machine, not a reason to pass.
    if (process.env.DRIVE_REQUIRE_DYNAMODB_LOCAL === '1') throw new Error(`${found.unavailable} (DRIVE_REQUIRE_DYNAMODB_LOCAL=1)`);
    process.env[UNAVAILABLE_ENV] = found.unavailable;
    process.stdout.write(`\n${found.unavailable}: every comparison is skipped.\n`);
    return;
  }
  const local: DynamoDBLocal = await startDynamoDBLocal(found.dir);
  (globalThis as { dynamodbLocal?: DynamoDBLocal }).dynamodbLocal = local;
  process.env[LOCAL_ENDPOINT_ENV] = local.endpoint;
  process.stdout.write(`\nDynamoDB Local answered at ${local.endpoint}, ${local.startMs} ms after its JVM was spawned.\n`);
}

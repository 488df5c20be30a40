import { startEmulators } from '../../lib/local/emulators';

/** The embedded S3 and DynamoDB alone, in a process of their own: the benchmark's stand-in for AWS storage. */
async function main(): Promise<void> {
  const emulators = await startEmulators(process.argv[2]);
  console.log(JSON.stringify({ dynamodb: emulators.dynamodbEndpoint, s3: emulators.s3Endpoint, credentials: emulators.credentials }));
  process.on('SIGTERM', () => void emulators.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

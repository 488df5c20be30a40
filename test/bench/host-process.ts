import { startLocalHost } from '../../lib/local-host';
import { hostCpu } from '../../lib/local/host-cpu';
import { DEFAULT_TRACING } from '../../lib/aws-limits';

/** The local host serving the handlers over storage in another process (DRIVE_STORAGE = its endpoints, JSON). */
async function main(): Promise<void> {
  const storage = JSON.parse(process.env.DRIVE_STORAGE!) as { dynamodb: string; s3: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  const host = await startLocalHost({
    port: 0,
    dataDir: process.argv[2],
    apiKeys: process.env.DRIVE_API_KEYS,
    // The host's own lines only where something failed (a 5xx no function logged, a scheduled function), on
    // stderr, which the bench copies to its own: the rest is one line per request the bench does not read.
    log: (line) => {
      if (/ 5\d\d \d+ms| failed/.test(line)) console.error(line);
    },
    storage: { dynamodbEndpoint: storage.dynamodb, s3Endpoint: storage.s3, credentials: storage.credentials },
    // Requests traced as the stack's sampling rule traces them in AWS (1 a second, then 1 %), not every one.
    tracing: DEFAULT_TRACING,
  });
  console.log(`Drive API listening on ${host.url}`);
  // The bench asks for the split of the host's CPU between handlers and emulation (when spawned with IPC).
  process.on('message', (message) => {
    if (message === 'host-cpu') process.send?.(hostCpu);
  });
  process.on('SIGTERM', () => void host.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

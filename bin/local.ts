import { setting } from '../functions/config';
import { startLocalHost } from '../lib/local-host';

// The SDK's notice about Node versions it will drop in 2027 says nothing about this run; Lambda runs a newer Node.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** How long a stop may take before the host exits without waiting further. */
const STOP_SECONDS = 30;

/** `npm start`: the whole API on this machine, over embedded DynamoDB and S3 (see README, "Run locally"). */
async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number (got ${process.env.PORT})`);
  const dataDir = setting('dataDir');

  // The storage on a thread of its own: two event loops, as S3 and Lambda are two services (docs/local-host.md).
  const host = await startLocalHost({ port, dataDir, apiKeys: setting('apiKeys'), storageThread: true });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    // A stop waits out what is running (a job's step, a sweep) for so long only: every job is durable and the
    // next start goes on with it, as after a kill. A host whose parent died must not stay behind, busy.
    setTimeout(() => {
      console.error(`${signal}: not stopped within ${STOP_SECONDS} s; exiting`);
      process.exit(1);
    }, STOP_SECONDS * 1000).unref();
    host.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`could not stop cleanly: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  // A handler's stray failure ends that invocation in Lambda, not every other one: the host logs it and serves on.
  process.on('uncaughtException', (error) => console.error(JSON.stringify({ level: 'error', message: 'uncaught exception (the host goes on)', error: String(error.stack ?? error) })));
  process.on('unhandledRejection', (reason) => console.error(JSON.stringify({ level: 'error', message: 'unhandled rejection (the host goes on)', error: String(reason) })));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // `kill <npm's pid>` ends npm but not its shell's child: a host whose parent is gone stops too.
  const parent = process.ppid;
  setInterval(() => (process.ppid !== parent ? stop('its parent process exited') : undefined), 500).unref();

  // Only now that a signal stops it cleanly: whoever reads this line may send one at once.
  // One write, so whoever reads the address line has the key line too.
  const lines = [`Drive API listening on ${host.url} (data in ${dataDir})`];
  if (host.createdKey) {
    lines.push(`Created an admin API key for drive "${host.createdKey.drive}"; it is shown only this once:`, host.createdKey.secret);
  }
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  console.error(`Drive could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

import { parentPort, workerData } from 'node:worker_threads';
import { startEmulators } from './emulators';
import type { StorageMessage } from './storage-thread';

// The body of the storage thread (lib/local/storage-thread.ts): the emulators, until asked to close.
const port = parentPort!;
// As on the host's main thread (bin/local.ts): a stray failure in the emulators' code fails its request, not the storage.
process.on('uncaughtException', (error) => console.error(JSON.stringify({ level: 'error', message: 'uncaught exception in the storage thread (it goes on)', error: String(error.stack ?? error) })));
process.on('unhandledRejection', (reason) => console.error(JSON.stringify({ level: 'error', message: 'unhandled rejection in the storage thread (it goes on)', error: String(reason) })));
const post = (message: StorageMessage) => port.postMessage(message);

startEmulators((workerData as { dataDir: string }).dataDir).then(
  (emulators) => {
    port.on('message', (message) => {
      if (message !== 'close') return;
      emulators.close().then(
        () => post({ kind: 'closed' }),
        (error: unknown) => post({ kind: 'failed', message: String(error) }),
      );
    });
    post({ kind: 'serving', dynamodbEndpoint: emulators.dynamodbEndpoint, s3Endpoint: emulators.s3Endpoint, credentials: emulators.credentials });
  },
  (error: unknown) => post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) }),
);

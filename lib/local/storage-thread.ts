import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import type { Emulators } from './emulators';
import { preloaded } from './preloaded';

/** What the storage thread posts: its endpoints once serving, `closed` once stopped, or why it failed. */
export type StorageMessage =
  | { kind: 'serving'; dynamodbEndpoint: string; s3Endpoint: string; credentials: Emulators['credentials'] }
  | { kind: 'closed' }
  | { kind: 'failed'; message: string };

/**
 * Starts the embedded S3 and DynamoDB (lib/local/emulators.ts) on a thread of their own, so that on a
 * machine of two cores or more the storage and the handlers each have an event loop, as S3 and Lambda
 * do in AWS: `npm start` uses this (it runs through tsx, which the thread loads too).
 */
export function startEmulatorsThread(dataDir: string, died: (error: Error) => void): Promise<Emulators> {
  // A worker's own loader knows no TypeScript: the thread loads tsx's require hook, then the module; a host run
  // from a bundle (lib/local/preloaded.ts) has the thread's body bundled too.
  const bundled = preloaded()?.storageWorker;
  const worker = bundled ? new Worker(bundled, { workerData: { dataDir } }) : new Worker(throughTsx(join(__dirname, 'storage-worker.ts')), { eval: true, workerData: { dataDir } });
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(new Error(`the storage thread did not start: ${error.message}`));
    worker.once('error', failed);
    worker.once('exit', (code) => failed(new Error(`it exited with code ${code}`)));
    worker.once('message', (message: StorageMessage) => {
      worker.removeAllListeners('error');
      worker.removeAllListeners('exit');
      // Once serving, a thread that fails or ends takes the storage with it: the host cannot serve on.
      worker.once('error', died);
      worker.once('exit', (code) => died(new Error(`the storage thread ended (exit code ${code})`)));
      if (message.kind !== 'serving') {
        void worker.terminate();
        reject(new Error(`the storage thread did not start: ${message.kind === 'failed' ? message.message : message.kind}`));
        return;
      }
      resolve({
        dynamodbEndpoint: message.dynamodbEndpoint,
        s3Endpoint: message.s3Endpoint,
        credentials: message.credentials,
        close: () => closeThread(worker),
      });
    });
  });
}

/** A worker's script that registers tsx's require hook (found from here, not from the working directory), then loads `entry`. */
function throughTsx(entry: string): string {
  return `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(entry)});`;
}

/** Asks the thread to close its emulators (LevelDB and s3rver flush to disk), then waits for it to end. */
function closeThread(worker: Worker): Promise<void> {
  return new Promise((resolve, reject) => {
    worker.removeAllListeners('error');
    worker.removeAllListeners('exit');
    worker.once('error', reject);
    worker.once('exit', () => resolve());
    worker.once('message', (message: StorageMessage) => {
      if (message.kind === 'failed') reject(new Error(`the storage did not close cleanly: ${message.message}`));
      void worker.terminate();
    });
    worker.postMessage('close');
  });
}

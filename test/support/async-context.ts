import { AsyncLocalStorage } from 'node:async_hooks';

// A Jest worker runs file after file in one process, each file in a module registry of its own; `node:async_hooks`
// is the process's. Every AsyncLocalStorage a file runs in (jest-circus's own, one a file: the test's context;
// functions/telemetry/request-context.ts's, one a file that invokes a handler in process) stays enabled after
// the file ends, and on Node 20 each enabled one is copied onto every promise the process makes from then on.
// Sixty files into a worker, a promise paid for sixty: the model test, which makes millions, took four times
// the CPU it takes first in a worker. So each file's storages are noted as they are first used, and the next file of the
// worker disables them before it starts (test/setup-env.ts): by then nothing of the earlier file runs.

/** The storages used so far in this worker process: on the class's prototype, which every file shares. */
const NOTED = Symbol.for('drive.test.asyncLocalStorages');

type Noting = AsyncLocalStorage<unknown> & { [NOTED]?: Set<AsyncLocalStorage<unknown>> };

/** Disables the storages the worker's earlier files used, and notes those this file uses. */
export function releaseEarlierFilesContexts(): void {
  const prototype = AsyncLocalStorage.prototype as Noting;
  let noted = prototype[NOTED];
  if (!noted) {
    const used = new Set<AsyncLocalStorage<unknown>>();
    noted = used;
    prototype[NOTED] = used;
    const { run, enterWith } = prototype;
    prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
      used.add(this);
      return run.apply(this, args);
    } as typeof run;
    prototype.enterWith = function (this: AsyncLocalStorage<unknown>, store: unknown) {
      used.add(this);
      enterWith.call(this, store);
    };
  }
  for (const storage of noted) storage.disable();
  noted.clear();
}

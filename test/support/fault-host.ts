import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startLocalHost } from '../../lib/local-host';

/**
 * A local host whose handlers' AWS calls fail on demand: the test writes `<data dir>/faults.json`, a list
 * of rules, and the next calls of the named command fail as the rule says. Run with tsx:
 * `node --import tsx test/support/fault-host.ts <data dir>`.
 */
export interface FaultRule {
  command: string;
  /** Calls of the command to let through first. */
  skip?: number;
  /** How many calls to spoil. */
  times: number;
  /**
   * `error`: the call fails; `unprocessed` (BatchWriteItem) and `partial` (DeleteObjects): half is sent, half
   * reported unprocessed; `hold`: the call waits, the host having written `<data dir>/held`, until the test
   * writes `<data dir>/release`, then goes through (a request held mid-way, without timing).
   */
  mode: 'error' | 'unprocessed' | 'partial' | 'hold';
  /**
   * Only calls whose input, as JSON, contains this text (a path the test's request names): the host's own
   * work (the change feed's sequencer after each write, the sweep's reads of the trash's due entries, jobs)
   * makes calls of the same commands at times the machine's speed decides, and must not take the fault.
   */
  match?: string;
}

/** The file a held call waits for, and the one that says a call is held. */
export const HOLD_FILES = { held: 'held', release: 'release' } as const;
/**
 * Milliseconds the host's clock has been moved on: the idempotency records' clock runs this far ahead of the
 * machine's (to lapse a lease or a record), and the functions' timeouts are measured on it alone (a function
 * held past its timeout by moving it is stopped, as Lambda stops it; wall time never stops one).
 */
export const CLOCK_OFFSET_FILE = 'clock-offset-ms';

/** The test's side of the fault host running on `dataDir`: its rules, the call it holds, and its records' clock. */
export function faultControls(dataDir: string) {
  /** Makes the next calls of each rule's command fail (or wait) as it says. */
  const inject = async (rules: FaultRule[]): Promise<void> => {
    await writeFile(join(dataDir, 'faults.json'), JSON.stringify(rules));
    // The host notices the file by its modification time; let the clock move.
    await new Promise((resolve) => setTimeout(resolve, 15));
  };
  return {
    inject,
    /** Resolves once the host holds a call (it wrote its marker). */
    async held(): Promise<void> {
      while (!existsSync(join(dataDir, HOLD_FILES.held))) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    /** Lets the held call go on. */
    release: () => writeFile(join(dataDir, HOLD_FILES.release), ''),
    /** Moves the host's clock `ms` on: the idempotency records' runs that far ahead of the machine's, and a function held past its timeout on it is stopped. */
    moveClock: (ms: number) => writeFile(join(dataDir, CLOCK_OFFSET_FILE), String(ms)),
    /** No rules, no call held, the records' clock the machine's: between tests. */
    async reset(): Promise<void> {
      await inject([]);
      for (const file of [HOLD_FILES.held, HOLD_FILES.release, CLOCK_OFFSET_FILE]) await rm(join(dataDir, file), { force: true });
    },
  };
}

interface Args {
  input: Record<string, unknown>;
}
type Next = (args: Args) => Promise<{ output: Record<string, unknown> }>;

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  const offset = () => {
    const file = join(dataDir, CLOCK_OFFSET_FILE);
    return existsSync(file) ? Number(readFileSync(file, 'utf8')) : 0;
  };
  const host = await startLocalHost({ port: 0, dataDir, apiKeys: process.env.DRIVE_API_KEYS, log: () => undefined, invocationClock: offset });
  const planFile = join(dataDir, 'faults.json');
  let version = -1;
  let rules: (FaultRule & { seen: number; spoiled: number })[] = [];
  const rulesNow = () => {
    let mtime = 0;
    try {
      mtime = statSync(planFile).mtimeMs;
    } catch {
      return [];
    }
    if (mtime !== version) {
      version = mtime;
      rules = (JSON.parse(readFileSync(planFile, 'utf8')) as FaultRule[]).map((rule) => ({ ...rule, seen: 0, spoiled: 0 }));
    }
    return rules;
  };

  const middleware = (next: Next, context: { commandName?: string }) => async (args: Args) => {
    const command = (context.commandName ?? '').replace(/Command$/, '');
    const rule = rulesNow().find((r) => r.command === command && r.spoiled < r.times && (r.match === undefined || JSON.stringify({ ...args.input, Body: undefined }).includes(r.match)));
    if (!rule || ++rule.seen <= (rule.skip ?? 0)) return next(args);
    rule.spoiled++;
    if (rule.mode === 'hold') {
      writeFileSync(join(dataDir, HOLD_FILES.held), command);
      while (!existsSync(join(dataDir, HOLD_FILES.release))) await new Promise((resolve) => setTimeout(resolve, 10));
      return next(args);
    }
    if (rule.mode === 'unprocessed') {
      const [table, requests] = Object.entries(args.input.RequestItems as Record<string, unknown[]>)[0];
      const half = Math.ceil(requests.length / 2);
      const out = await next({ ...args, input: { ...args.input, RequestItems: { [table]: requests.slice(0, half) } } });
      out.output.UnprocessedItems = requests.length > half ? { [table]: requests.slice(half) } : {};
      return out;
    }
    if (rule.mode === 'partial') {
      const remove = args.input.Delete as { Objects: { Key: string }[] };
      const half = Math.ceil(remove.Objects.length / 2);
      const out = await next({ ...args, input: { ...args.input, Delete: { ...remove, Objects: remove.Objects.slice(0, half) } } });
      out.output.Errors = remove.Objects.slice(half).map(({ Key }) => ({ Key, Code: 'InternalError', Message: 'injected' }));
      return out;
    }
    throw Object.assign(new Error(`injected fault in ${command}`), { name: 'InjectedFault' });
  };
  // Before any request: the clients resolve their middleware once.
  const { dynamodb } = await import('../../functions/wiring/dynamodb.js');
  const { s3 } = await import('../../functions/wiring/objects.js');
  dynamodb.middlewareStack.add(middleware as never, { step: 'initialize', name: 'injectFaults' });
  // The idempotency records' clock, moved by the test: a lease or a record's 24 hours lapse without waiting.
  const { idempotency } = await import('../../functions/wiring/idempotency.js');
  idempotency.useClock(() => Date.now() + offset());
  s3.middlewareStack.add(middleware as never, { step: 'initialize', name: 'injectFaults' });

  console.log(`Drive API listening on ${host.url}`);
  process.on('SIGTERM', () => void host.close().then(() => process.exit(0)));
}

// Run as the host's entry; imported (for its rule names and files), it starts nothing.
if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

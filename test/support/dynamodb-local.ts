import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join } from 'node:path';

/**
 * AWS's own DynamoDB emulator, DynamoDBLocal.jar (carried by the npm package `amplify-dynamodb-simulator`),
 * run in memory on a free port: the reference the embedded DynamoDB (dynalite and lib/local's layer) is
 * compared with in `npm run test:dynamodb-local`.
 */
export interface DynamoDBLocal {
  endpoint: string;
  /** Milliseconds from spawning the JVM to its first answer. */
  startMs: number;
  stop(): Promise<void>;
}

/** Where the jar is, or why DynamoDB Local cannot run here (no Java, no jar): one line, for a skipped test's name. */
export function findDynamoDBLocal(): { dir: string } | { unavailable: string } {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return { unavailable: 'DynamoDB Local cannot run: no `java` on PATH (install Java 17 or later)' };
  let dir: string;
  try {
    dir = join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
  } catch {
    return { unavailable: 'DynamoDB Local cannot run: the package amplify-dynamodb-simulator is not installed (npm ci)' };
  }
  if (!existsSync(join(dir, 'DynamoDBLocal.jar'))) return { unavailable: `DynamoDB Local cannot run: no DynamoDBLocal.jar in ${dir}` };
  return { dir };
}

/** Starts DynamoDB Local in memory on a free port and waits until it answers (at most `timeoutMs`). */
export async function startDynamoDBLocal(dir: string, timeoutMs = 120_000): Promise<DynamoDBLocal> {
  const port = await freePort();
  const started = Date.now();
  // -disableTelemetry: the jar would otherwise try to send usage data to AWS from a test run.
  const child: ChildProcess = spawn('java', [`-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`, '-jar', join(dir, 'DynamoDBLocal.jar'), '-inMemory', '-disableTelemetry', '-port', String(port)], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((done) =>
    child.once('exit', (code) => {
      exitCode = code;
      done();
    }),
  );
  const stop = async () => {
    if (exitCode === undefined) child.kill('SIGTERM');
    await exited;
  };
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    for (;;) {
      if (exitCode !== undefined) throw new Error(`DynamoDB Local exited with ${exitCode} before it answered:\n${output}`);
      if (Date.now() - started > timeoutMs) throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms:\n${output}`);
      if (await answers(endpoint)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, startMs: Date.now() - started, stop };
}

/** Whether an HTTP server answers at `endpoint` (any status: an unsigned POST is refused, but answered). */
function answers(endpoint: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${endpoint}/`, { method: 'POST', timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

import { appendFileSync, readFileSync } from 'node:fs';

// Where a run's CPU goes, file by file (docs/testing.md, "Where the time goes"): with TEST_CPU_LOG=<file>,
// each test file appends a JSON line with the CPU its Jest worker spent on it up to its last test (loading
// its modules, running its tests), and one line for each host it started, with that host's CPU, read from
// /proc as the host is stopped (a worker's shared host: the CPU it spent while the file used it). Off
// otherwise. Processes a test runs itself (fsck, Chromium, esbuild) are not counted.

/** The CPU seconds (user + system) that process `pid` has used so far, or undefined where /proc has none. */
export function cpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // utime and stime, in clock ticks: fields 14 and 15, counted after the command name, which may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function append(line: Record<string, unknown>): void {
  const file = process.env.TEST_CPU_LOG;
  if (file && typeof expect !== 'undefined') appendFileSync(file, `${JSON.stringify({ file: expect.getState().testPath, ...line })}\n`);
}

/** Notes a host's CPU (its process `pid`, read just before it is stopped) against the running test file. */
export function noteHostCpu(pid: number | undefined): void {
  if (!process.env.TEST_CPU_LOG) return;
  const seconds = cpuSecondsOf(pid);
  if (seconds !== undefined) append({ host: seconds });
}

/**
 * Notes the CPU a worker's shared host (local-host.ts `sharedHost`) spent while the running file used it,
 * `started` if the file started it (its start counted here, then).
 */
export function noteSharedHostCpu(seconds: number, started: boolean): void {
  if (process.env.TEST_CPU_LOG) append({ host: seconds, shared: true, started });
}

/** Called once a test file (jest.config.js, setupFilesAfterEnv): notes the worker's CPU for the file when its tests end. */
export function logFileCpu(): void {
  if (!process.env.TEST_CPU_LOG) return;
  const started = process.cpuUsage();
  afterAll(() => {
    const used = process.cpuUsage(started);
    append({ worker: (used.user + used.system) / 1e6 });
  });
}

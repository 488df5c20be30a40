import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const BIN = resolve(__dirname, '..', '..', 'bin', 'drive.cjs');

/** What a `drive` process did. */
export interface CliRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = Record<string, unknown>>(): T;
}

/** Runs `drive <args…>` (the package's bin, from source) against `url` with `key` in the environment. */
export function runCli(args: string[], env: Record<string, string>, options: { cwd?: string } = {}): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, DRIVE_CLI_SOURCE: '1', DRIVE_URL: '', DRIVE_API_KEY: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      const stdout = Buffer.concat(out);
      done({ code, stdout, stderr, json: <T>() => JSON.parse(stdout.toString()) as T });
    });
  });
}

/** Environment that points the CLI at a host. */
export function driveEnv(url: string, key: string): Record<string, string> {
  return { DRIVE_URL: url, DRIVE_API_KEY: key };
}

import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { HOST_BUNDLE_ENV, bundleFile } from '../../../test/support/host-bundle-files';

const BIN = resolve(__dirname, '..', '..', 'bin', 'drive.cjs');

/**
 * The arguments to `node` that run the package's bin: this run's bundle of it (and of the source it runs) where
 * Jest's globalSetup built one, so that the suite's 60-odd runs do not each load tsx and transpile the client
 * through it; else the bin itself, which runs the source through tsx.
 */
export function cliArgs(): string[] {
  const bundles = process.env[HOST_BUNDLE_ENV];
  return bundles ? [bundleFile(bundles, 'client/bin/drive.cjs')] : [BIN];
}

/** What a `drive` process did. */
export interface CliRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = Record<string, unknown>>(): T;
}

/** Runs `drive <args…>` (the package's bin, from source: `cliArgs`) against `url` with `key` in the environment. */
export function runCli(args: string[], env: Record<string, string>, options: { cwd?: string } = {}): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...cliArgs(), ...args], {
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

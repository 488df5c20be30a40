import { Drive } from '../drive';
import { isAbortError } from '../errors';
import type { RetryNotice } from '../transport';
import { type TokenProvider, githubActionsToken, tokenFile } from '../oidc';
import { type Command, type OidcSource, USAGE, UsageError, connectionOf, parseCommand } from './args';
import { linkCommand } from './link-command';
import { getCommand, lsCommand, mkdirCommand, rmCommand } from './ls-get-mkdir-rm';
import { mvCpCommand } from './mv-cp-command';
import { type CliIo, Output } from './output';
import { EXIT_INTERRUPTED, uploadCommand } from './upload-command';

import packageJson from '../../package.json';

/** The client's version, printed by `drive --version`. */
export const VERSION: string = packageJson.version;

const EXIT_USAGE = 2;

/**
 * Runs `drive <argv…>` and resolves with the exit code. The first SIGINT or SIGTERM (Ctrl-C, a container
 * being stopped) aborts the work in flight and lets the command report what finished; a second one exits
 * at once.
 */
export async function run(argv: readonly string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`drive: ${error.message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (command.name === 'help' || command.name === 'version') {
    io.stdout.write(command.name === 'help' ? USAGE : `${VERSION}\n`);
    return 0;
  }

  const out = new Output(io, command.json);
  const interrupt = new AbortController();
  const onSignal = () => {
    if (interrupt.signal.aborted) process.exit(EXIT_INTERRUPTED);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const connection = connectionOf(command, io.env);
    const credentials = 'apiKey' in connection ? { apiKey: connection.apiKey } : { oidc: { token: tokenOf(connection.oidc), drive: io.env.DRIVE_OIDC_DRIVE || undefined } };
    const drive = new Drive({
      baseUrl: connection.url,
      ...credentials,
      concurrency: command.name === 'upload' ? command.concurrency : undefined,
      // Never silent while it retries: each retry on stderr (stdout stays the result's, JSON or not).
      onRetry: (notice) => io.stderr.write(`${retryLine(command.name, notice)}\n`),
    });
    switch (command.name) {
      case 'upload':
        return await uploadCommand(command, drive, out, interrupt.signal);
      case 'ls':
        return await lsCommand(command, drive, out, interrupt.signal);
      case 'get':
        return await getCommand(command, drive, out, interrupt.signal);
      case 'mkdir':
        return await mkdirCommand(command, drive, out, interrupt.signal);
      case 'rm':
        return await rmCommand(command, drive, out, interrupt.signal);
      case 'link':
        return await linkCommand(command, drive, out, interrupt.signal);
      case 'mv':
      case 'cp':
        return await mvCpCommand(command, drive, out, interrupt.signal);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`drive ${command.name}: ${error.message}\n`);
      return EXIT_USAGE;
    }
    if (isAbortError(error) && interrupt.signal.aborted) {
      out.warn(`drive ${command.name}: interrupted`);
      return EXIT_INTERRUPTED;
    }
    out.failure(command.name, error);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** One retry, as the CLI says it: `drive upload: POST /drive/upload: attempt 2 in 1.3 s (the gateway timed out (504))`. */
export function retryLine(command: string, notice: RetryNotice): string {
  return `drive ${command}: ${notice.method} ${notice.path}: attempt ${notice.attempt} in ${(notice.waitMs / 1000).toFixed(1)} s (${notice.reason})`;
}

/** The token each exchange sends: the variable's, the file's as it is then, or a fresh one from the runner. */
function tokenOf(source: OidcSource): string | TokenProvider {
  switch (source.kind) {
    case 'token':
      return source.token;
    case 'file':
      return tokenFile(source.path);
    case 'github-actions':
      return githubActionsToken(source.requestUrl, source.requestToken, source.audience);
  }
}

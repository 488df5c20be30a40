import { Drive } from '../drive';
import { DriveError, isAbortError } from '../errors';
import { SyncRefusedError, SyncUsageError } from '../sync/sync';
import type { RetryNotice } from '../transport';
import { type TokenProvider, githubActionsToken, tokenFile } from '../oidc';
import { type Command, type OidcSource, USAGE, UsageError, connectionOf, parseCommand } from './args';
import { linkCommand } from './link-command';
import { getCommand, lsCommand, mkdirCommand, rmCommand } from './ls-get-mkdir-rm';
import { mvCpCommand } from './mv-cp-command';
import { type CliIo, Output } from './output';
import { syncCommand } from './sync-command';
import { trashCommand } from './trash-command';
import { watchCommand } from './watch-command';
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
    io.stderr.write(`drive: ${error.message} (see drive --help)\n`);
    return EXIT_USAGE;
  }
  if (command.name === 'help' || command.name === 'version') {
    io.stdout.write(command.name === 'help' ? USAGE : `${VERSION}\n`);
    return 0;
  }

  const out = new Output(io, command.json, command.quiet);
  const interrupt = new AbortController();
  let url: string | undefined;
  const onSignal = () => {
    if (interrupt.signal.aborted) process.exit(EXIT_INTERRUPTED);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const connection = connectionOf(command, io.env);
    const credentials = 'apiKey' in connection ? { apiKey: connection.apiKey } : { oidc: { token: tokenOf(connection.oidc), drive: io.env.DRIVE_OIDC_DRIVE || undefined } };
    url = connection.url;
    const drive = new Drive({
      baseUrl: connection.url,
      ...credentials,
      concurrency: command.name === 'upload' ? command.concurrency : undefined,
      // Never silent while it retries: each retry on stderr (stdout stays the result's, JSON or not), unless --quiet.
      onRetry: command.quiet ? undefined : (notice) => io.stderr.write(`${retryLine(command.name, notice)}\n`),
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
      case 'sync':
        return await syncCommand(command, drive, out, interrupt.signal);
      case 'watch':
        return await watchCommand(command, drive, out, interrupt.signal);
      case 'trash':
        return await trashCommand(command, drive, out, interrupt.signal);
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof SyncUsageError || error instanceof SyncRefusedError) {
      io.stderr.write(`drive ${command.name}: ${error.message}${error instanceof UsageError ? ' (see drive --help)' : ''}\n`);
      return EXIT_USAGE;
    }
    if (isAbortError(error) && interrupt.signal.aborted) {
      out.warn(`drive ${command.name}: interrupted`);
      return EXIT_INTERRUPTED;
    }
    // A host that cannot be reached is named: the retries said why each attempt failed, this says where.
    out.failure(command.name, error instanceof DriveError && error.code === 'network_error' && url ? new DriveError(error.code, `cannot reach ${url}: ${error.message}`, 0, { cause: error }) : error);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * One retry, as the CLI says it, naming the URL (so a host that cannot be reached is named):
 * `drive upload: POST http://127.0.0.1:3000/drive/upload: attempt 2 of 6 in 1.3 s (the gateway timed out (504))`.
 */
export function retryLine(command: string, notice: RetryNotice): string {
  const of = notice.attempts === undefined ? '' : ` of ${notice.attempts}`;
  return `drive ${command}: ${notice.method} ${notice.url}: attempt ${notice.attempt}${of} in ${(notice.waitMs / 1000).toFixed(1)} s (${notice.reason})`;
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

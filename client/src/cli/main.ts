import { Drive } from '../drive';
import { isAbortError } from '../errors';
import { type Command, USAGE, UsageError, connectionOf, parseCommand } from './args';
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
    const drive = new Drive({ baseUrl: connection.url, apiKey: connection.apiKey, concurrency: command.name === 'upload' ? command.concurrency : undefined });
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

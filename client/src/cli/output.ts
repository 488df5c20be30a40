import { DriveError } from '../errors';

/** Where the CLI writes, and what it reads from its environment; tests pass their own. */
export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: Record<string, string | undefined>;
}

/** Text lines for people, or (with `--json`) one JSON document for scripts. */
export class Output {
  constructor(
    readonly io: CliIo,
    readonly json: boolean,
    /** `--quiet`: no result lines (failures and JSON still print). */
    readonly quiet = false,
  ) {}

  /** A line of the result, on stdout; silent with `--json` or `--quiet`. */
  line(text: string): void {
    if (!this.json && !this.quiet) this.io.stdout.write(`${text}\n`);
  }

  /** One JSON object on one line of stdout (a stream of them, for `sync --json`); only with `--json`. */
  jsonLine(value: unknown): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** A line about something that went wrong or was left out, on stderr; silent with `--json`. */
  warn(text: string): void {
    if (!this.json) this.io.stderr.write(`${text}\n`);
  }

  /** The JSON document, on stdout; only with `--json`. */
  document(value: unknown): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A failed command: `{"error": …}` on stdout with `--json`, else a line on stderr. */
  failure(command: string, error: unknown): void {
    const described = describe(error);
    if (this.json) this.io.stdout.write(`${JSON.stringify({ error: described }, null, 2)}\n`);
    else this.io.stderr.write(`drive ${command}: ${described.message}${described.code ? ` (${described.code}${described.status ? `, ${described.status}` : ''})` : ''}\n`);
  }
}

/** An error as `code`, `message` and `status`, the API's shape. */
export function describe(error: unknown): { code: string; message: string; status: number } {
  if (error instanceof DriveError) return { code: error.code, message: error.message, status: error.status };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'error', message, status: 0 };
}

import { type Environment, runtimeVariable, setting } from '../config';

/** Log levels, lowest first, as Lambda names them in its JSON log format. */
export const LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type Level = (typeof LEVELS)[number];

/**
 * The lowest level written: Lambda's application log level (`AWS_LAMBDA_LOG_LEVEL`, which the stack sets from
 * the `logLevel` context), or `DRIVE_LOG_LEVEL` on the local host; INFO when neither is set or either is unknown.
 */
export function configuredLevel(env?: Environment): Level {
  const named = (runtimeVariable('AWS_LAMBDA_LOG_LEVEL', env) ?? setting('logLevel', env) ?? 'INFO').toUpperCase();
  // Lambda's TRACE and FATAL have no line of their own here: TRACE shows everything, FATAL errors only.
  if (named === 'TRACE') return 'DEBUG';
  if (named === 'FATAL') return 'ERROR';
  return (LEVELS as readonly string[]).includes(named) ? (named as Level) : 'INFO';
}

// Read once per container, as Lambda sets it once per function version.
const threshold = LEVELS.indexOf(configuredLevel());

/** Whether a line at `level` is written under the configured level. */
export function enabled(level: Level): boolean {
  return LEVELS.indexOf(level) >= threshold;
}

/**
 * Writes one JSON line at `level` if the configured level lets it through. Straight to stdout, not through
 * `console`: under Lambda's JSON log format `console.log` would wrap the line as a string in its own
 * `message`, which hides the fields from Logs Insights and the embedded metrics from CloudWatch.
 */
export function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  if (enabled(level)) writeLine({ timestamp: new Date().toISOString(), level, message, ...fields });
}

/** Writes `line` as one JSON line, whatever the level (lines that carry metrics must not be dropped). */
export function writeLine(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** An error as a log line shows it: its name, message, stack and, a level at a time, its cause. */
export function describeError(error: unknown, depth = 0): Record<string, unknown> | string {
  if (!(error instanceof Error)) return String(error);
  const described: Record<string, unknown> = { name: error.name, message: error.message, stack: error.stack };
  // The SDK's errors say which call failed and how (status, AWS's request id): what an operator looks up.
  const meta = (error as { $metadata?: { httpStatusCode?: number; requestId?: string } }).$metadata;
  if (meta) described.aws = { status: meta.httpStatusCode, request_id: meta.requestId };
  if (error.cause !== undefined && depth < 3) described.cause = describeError(error.cause, depth + 1);
  return described;
}

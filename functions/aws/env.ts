/** The value of a required environment variable; throws at cold start if it is missing. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} environment variable is not set`);
  return value;
}

/** A whole number of milliseconds (0 or more) from the environment variable `name`, or `fallback` if unset. */
export function millisecondsEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number of milliseconds (got ${JSON.stringify(raw)})`);
  return value;
}

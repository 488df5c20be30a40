/**
 * Codes a failure can carry: the API's own (spec section 7, plus Drive's 413 and 416), and the client's for
 * what never got an API answer.
 */
export type DriveErrorCode =
  | 'bad_request'
  | 'unauthorized'
  /** The key's role or prefix does not allow the call (an extension of the spec: key roles). */
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  /** A condition the call set (`ifMatch`, `ifNoneMatch`) does not hold; nothing was changed. `PreconditionFailedError`. */
  | 'precondition_failed'
  | 'payload_too_large'
  | 'range_not_satisfiable'
  /** A change feed cursor older than the changes kept: list again and follow from a new cursor. */
  | 'cursor_expired'
  | 'validation_error'
  | 'rate_limited'
  | 'internal_error'
  /** No HTTP answer: connection refused or reset, DNS, a timeout. `status` is 0. */
  | 'network_error'
  /** An answer that is not the API's JSON (a proxy's error page, S3's XML), or not what the API promises. */
  | 'unexpected_response'
  /** A file changed on the server while it was being downloaded, so the bytes so far cannot be continued. */
  | 'changed_during_download'
  /** A local file could not be read (gone, unreadable, or changed while it was being uploaded). */
  | 'local_file_error';

/**
 * What the API says beyond the code, for a client to act on (its error's `reason`): `upload_busy` (409) is a
 * large upload being completed or aborted by another request, to wait out and retry;
 * `idempotency_in_progress` (409) is an earlier attempt with the call's Idempotency-Key still running (the
 * transport waits it out); `idempotency_key_reused` (422) is a key sent before with another request.
 */
export type DriveErrorReason = 'upload_busy' | 'idempotency_in_progress' | 'idempotency_key_reused';

/** A failed call: the API's `code`, `message` and `reason` (if any), and the HTTP status (0 when no answer came). */
export class DriveError extends Error {
  readonly reason?: DriveErrorReason | (string & {});

  constructor(
    readonly code: DriveErrorCode | (string & {}),
    message: string,
    readonly status: number,
    options?: { cause?: unknown; reason?: string },
  ) {
    super(message, options);
    this.name = 'DriveError';
    if (options?.reason !== undefined) this.reason = options.reason;
  }
}

/**
 * A `412 precondition_failed`: a condition the call set (an upload's `ifMatch` or `ifNoneMatch`, a move's or
 * copy's `ifMatch`) did not hold, so nothing of that request was stored, moved or copied. The message names
 * the paths; the file at each has changed since the caller last saw it.
 */
export class PreconditionFailedError extends DriveError {
  constructor(message: string, status = 412, options?: { cause?: unknown; reason?: string }) {
    super('precondition_failed', message, status, options);
    this.name = 'PreconditionFailedError';
  }
}

/** The error of an API answer: a `PreconditionFailedError` for `precondition_failed`, a `DriveError` for any other code. */
export function apiError(code: string, message: string, status: number, options?: { cause?: unknown; reason?: string }): DriveError {
  return code === 'precondition_failed' ? new PreconditionFailedError(message, status, options) : new DriveError(code, message, status, options);
}

/** The `name` of an error-like value. Duck-typed: a `DOMException` may come from another realm, where `instanceof Error` fails. */
export function errorName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'name' in error && typeof error.name === 'string' ? error.name : undefined;
}

/** True for the error `fetch` and this client throw when an `AbortSignal` fired. */
export function isAbortError(error: unknown): boolean {
  const name = errorName(error);
  return (name === 'AbortError' || name === 'TimeoutError') && !(error instanceof DriveError);
}

/** The reason an aborted signal carries, as an Error to throw. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return errorName(reason) !== undefined ? (reason as Error) : new DOMException('This operation was aborted', 'AbortError');
}

/** The API's code of each error status (its `ERROR_STATUS`; test/unit/openapi/client-contract.test.ts holds the two together). */
export const CODE_OF_STATUS: Record<number, DriveErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  416: 'range_not_satisfiable',
  410: 'cursor_expired',
  422: 'validation_error',
  429: 'rate_limited',
  500: 'internal_error',
};

/** The error a job that stopped short reports (`GET /drive/jobs/{id}` itself answered `200`), with the status its code has in a direct answer. */
export function jobFailure(error: { code: string; message: string }): DriveError {
  const status = Object.entries(CODE_OF_STATUS).find(([, code]) => code === error.code)?.[0];
  return apiError(error.code, error.message, status === undefined ? 0 : Number(status));
}

/** Reads a failed response's `{error: {code, message}}`, or describes what came instead. */
export async function errorFromResponse(response: Response, what: string): Promise<DriveError> {
  const text = await response.text().catch(() => '');
  const parsed = parseApiError(text);
  if (parsed) return apiError(parsed.code, parsed.message, response.status, parsed.reason === undefined ? undefined : { reason: parsed.reason });
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  // A HEAD answer has no body to read the code from; the status alone names it.
  const code = text === '' ? (CODE_OF_STATUS[response.status] ?? 'unexpected_response') : 'unexpected_response';
  return apiError(code, `${what} answered ${response.status}${snippet ? `: ${snippet}` : ''}`, response.status);
}

function parseApiError(text: string): { code: string; message: string; reason?: string } | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
    const error: unknown = body.error;
    if (typeof error !== 'object' || error === null) return undefined;
    const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
    const message = 'message' in error && typeof error.message === 'string' ? error.message : '';
    const reason = 'reason' in error && typeof error.reason === 'string' ? error.reason : undefined;
    return code ? { code, message, ...(reason === undefined ? {} : { reason }) } : undefined;
  } catch {
    return undefined;
  }
}

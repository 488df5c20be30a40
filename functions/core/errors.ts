/**
 * The error codes of the API (spec section 7) and the HTTP status each one is sent with; 412, 413 and 416 are
 * Drive's own, for what the spec does not cover (a condition the request set that does not hold, a body too
 * large, a byte range past the end of a file).
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  // The change feed's: a cursor older than the changes kept (list again and take a new cursor).
  cursor_expired: 410,
  validation_error: 422,
  rate_limited: 429,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * What a client acts on beyond the code, sent as the error's `reason`: `upload_busy` (409) is a large upload
 * being completed or aborted by another request, to wait out and retry; `idempotency_in_progress` (409, with
 * `Retry-After`) is the first request with the request's Idempotency-Key still running, whose answer a retry
 * with the same key gets; `idempotency_key_reused` (422) is a key sent before with another request.
 */
export const ERROR_REASONS = ['upload_busy', 'idempotency_in_progress', 'idempotency_key_reused'] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

/** A failure the client caused or may act on; its message is safe to send. */
export class DriveError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Headers the response must carry, such as `Retry-After`. */
    readonly headers: Record<string, string> = {},
    /** Sent as the error's `reason`, for a client to act on. */
    readonly reason?: ErrorReason,
    /**
     * The drive paths the message names (a conflict's): what a key may be told of the error is decided from
     * them (`conflictFor`), never from the wording. Never sent.
     */
    readonly paths: readonly string[] = [],
  ) {
    super(message);
    this.name = 'DriveError';
    this.status = ERROR_STATUS[code];
  }
}

export const badRequest = (message: string) => new DriveError('bad_request', message);
export const invalid = (message: string) => new DriveError('validation_error', message);
export const notFound = (message: string) => new DriveError('not_found', message);
/** A 409; `paths` are the drive paths the message names, which decide what a confined key may be told of it. */
export const conflict = (message: string, paths: readonly string[]) => new DriveError('conflict', message, {}, undefined, paths);
/**
 * A 412: a condition the request set (`if_match`, `if_none_match`, the `If-Match` header) does not hold, and
 * nothing was changed; `paths` are the drive paths whose condition failed, named in the message.
 */
export const preconditionFailed = (message: string, paths: readonly string[]) => new DriveError('precondition_failed', message, {}, undefined, paths);
export const forbidden = (message: string) => new DriveError('forbidden', message);
export const cursorExpired = (message: string) => new DriveError('cursor_expired', message);
export const unauthorized = (message: string) => new DriveError('unauthorized', message);

/**
 * A 503: a service outside Drive that the request needs did not answer (a token issuer the exchange must ask).
 * Its code is `internal_error`, as the gateway's 502 and 504 are: the API's codes are the spec's and Drive's
 * own, and only grow by additions the clients already read.
 */
export class UnavailableError extends DriveError {
  override readonly status = 503;

  constructor(message: string) {
    super('internal_error', message);
    this.name = 'UnavailableError';
  }
}
export const unavailable = (message: string) => new UnavailableError(message);

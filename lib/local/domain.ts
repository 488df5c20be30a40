import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * What the host needs of Drive beyond what AWS itself reads (the route table, the settings table, the table
 * schema, and the handler modules it runs as Lambda runs them): the root builds it (lib/local-domain.ts)
 * and passes it to `startLocalHost`, so that this package imports nothing else of functions/.
 */
export interface LocalDomain {
  /** `DRIVE_API_KEYS`, parsed and checked; a bad entry throws a message that names it. */
  parseApiKeys(value: string | undefined): ApiKeyEntry[];
  /** The keys of the access table, as `npm run keys` manages them. */
  keyAdmin(dynamodb: DynamoDBClient, accessTable: string): KeyAdmin;
  /** The guard's own check of a request's key, for the 401 the host sends before reading a body. */
  keyCheck(dynamodb: DynamoDBClient, accessTable: string): KeyCheck;
  /** Gives up the claims of delete jobs that a killed host left (their messages come back at once too). */
  releaseJobClaims(dynamodb: DynamoDBClient, uploadsTable: string): Promise<void>;
  /** Tests only (`DRIVE_LOCAL_CLOCK`): the functions' rate-limit buckets never refill. */
  stopRateLimitClock(): Promise<void>;
  /**
   * Makes the handlers' AWS clients refuse a call while `stopped` gives a reason (the invocation it is part
   * of passed its function's timeout: lib/local/invoke.ts), as Lambda would have stopped the function.
   */
  stopLateCalls(stopped: () => string | undefined): Promise<void>;
  /** The API's OpenAPI document, for the contract checker. */
  openApiDocument(): Promise<object>;
}

/** One `DRIVE_API_KEYS` entry. */
export interface ApiKeyEntry {
  drive: string;
  secret: string;
  role?: string;
  prefix?: string;
}

/** A key's record, as far as the host reads it. */
export interface KeyRecord {
  keyId: string;
  drive: string;
  name: string;
  revokedAt?: string;
}

export interface KeyAdmin {
  /** A new admin key of `drive`, its secret shown once. */
  createAdmin(drive: string, name: string): Promise<{ drive: string; secret: string }>;
  /** Makes the key of `secret` `drive`'s with this access; a revoked key stays revoked. */
  upsert(drive: string, name: string, access: { role?: string; prefix?: string }, secret: string): Promise<{ record: KeyRecord } | 'revoked'>;
  /** Every key of every drive, revoked ones included. */
  listAll(): Promise<KeyRecord[]>;
  revoke(keyId: string): Promise<unknown>;
}

/** How the function's guard answers a request's key, for the host to answer so before reading the body. */
export interface KeyCheck {
  /** The 401 error the guard sends for this `Authorization` header, or undefined if it names a live key. */
  refusal(authorization: string | undefined): Promise<{ code: string; message: string } | undefined>;
  /** Logs the request line the guard logs for such a 401 (its metrics included). */
  logRefusal(resource: string, method: string, requestId: string): void;
  /** The header the functions name a request's id in. */
  requestIdHeader: string;
}

import type { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { join } from 'node:path';
import { DynamoKeyAdmin } from '../functions/aws/api-key-admin';
import { DynamoKeyStore } from '../functions/aws/dynamo-access';
import { DynamoJobStore } from '../functions/aws/dynamo-jobs';
import { setting } from '../functions/config';
import { DRIVE_ID, ROLES, type Role, hashSecret } from '../functions/core/access';
import { DriveError } from '../functions/core/errors';
import { parsePath } from '../functions/core/paths';
import { weakSecretProblem } from '../functions/core/secret-strength';
import { bearerSecret, unknownKey } from '../functions/http/guard';
import { REQUEST_ID_HEADER, logRequest } from '../functions/http/request-log';
import type { KeyCheck, LocalDomain } from './local/domain';
import { type LocalHost, type LocalHostOptions, startHost } from './local/host';
import { importModule } from './local/preloaded';

// The local host (lib/local, a package of its own) wired to Drive: what it needs of the domain beyond the
// route table, the settings, the table schema and the handler modules comes from here (lib/local/domain.ts).

export type { LocalHost, LocalHostOptions };

/** Serves the API on this machine over embedded DynamoDB and S3 (see lib/local/host.ts). */
export function startLocalHost(options: LocalHostOptions): Promise<LocalHost> {
  return startHost(options, localDomain);
}

export const localDomain: LocalDomain = {
  parseApiKeys,
  keyAdmin(dynamodb, accessTable) {
    const keys = new DynamoKeyAdmin(dynamodb, accessTable);
    return {
      async createAdmin(drive, name) {
        const { record, secret } = await keys.create(drive, name, { role: 'admin' });
        return { drive: record.drive, secret };
      },
      // The host passes on only entries `parseApiKeys` made, whose role it checked to be a Role.
      upsert: (drive, name, access, secret) => keys.upsert(drive, name, access as { role?: Role; prefix?: string }, secret),
      listAll: () => keys.listAll(),
      revoke: (keyId) => keys.revoke(keyId),
    };
  },
  keyCheck(dynamodb, accessTable) {
    const store = new DynamoKeyStore(dynamodb, accessTable);
    // Trusted as long as the functions' guard trusts a verified key (DRIVE_KEY_CACHE_SECONDS, which the host has
    // set by now: 0 unless configured, 30 in the bench as in a warm Lambda): a key the guard takes from its cache
    // costs the host no read of its own either. API Gateway reads no key at all.
    return guardKeyCheck(trustedFor(setting('keyCacheSeconds') * 1000, (hash) => store.find(hash)));
  },
  async releaseJobClaims(dynamodb, uploadsTable) {
    const jobs = new DynamoJobStore(dynamodb, uploadsTable);
    for (const job of await jobs.stalled(new Date('9999-12-31T00:00:00.000Z'))) await jobs.release(job.id);
  },
  async stopRateLimitClock() {
    // The module the handlers load (by the same path), so that its one limiter is the one stopped.
    const stopped = Date.now();
    const { rateLimiter } = await importModule<{ rateLimiter: { useClock(clock: () => number): void } }>(join(__dirname, '..', 'functions/wiring/guard.ts'));
    rateLimiter.useClock(() => stopped);
  },
  async stopLateCalls(stopped) {
    // The clients the handlers load (by the same paths), before any request resolves their middleware.
    const root = join(__dirname, '..', 'functions/wiring');
    const { dynamodb } = await importModule<{ dynamodb: { middlewareStack: MiddlewareStack } }>(join(root, 'dynamodb.ts'));
    const { s3 } = await importModule<{ s3: { middlewareStack: MiddlewareStack } }>(join(root, 'objects.ts'));
    const { sqs } = await importModule<{ sqs: { middlewareStack: MiddlewareStack } }>(join(root, 'job-queue.ts'));
    for (const client of [dynamodb, s3, sqs]) {
      client.middlewareStack.add(refusedWhen(stopped) as never, { step: 'initialize', name: 'stopPastTimeout' });
      // Inside the SDK's retries too (finalizeRequest, below its retry middleware): no attempt is sent late.
      client.middlewareStack.add(refusedWhen(stopped) as never, { step: 'finalizeRequest', priority: 'low', name: 'stopAttemptPastTimeout' });
    }
  },
  async openApiDocument() {
    const { openApiDocument } = await import('../functions/openapi/document.js');
    return openApiDocument();
  },
};

type MiddlewareStack = S3Client['middlewareStack'];
type Next = (args: unknown) => Promise<unknown>;

/**
 * A middleware that fails a call while `stopped` gives a reason, before it is sent and when its answer comes
 * back: a function Lambda stopped sends nothing more, and reads no answer of what it had sent.
 */
function refusedWhen(stopped: () => string | undefined): (next: Next) => Next {
  const refuse = (reason: string) => Object.assign(new Error(reason), { name: 'FunctionStopped' });
  return (next) => async (args) => {
    const before = stopped();
    if (before) throw refuse(before);
    const out = await next(args);
    const after = stopped();
    if (after) throw refuse(after);
    return out;
  };
}

/** Keys the host trusts at once, at most: past it, those whose trust ran out are forgotten (and, if none had, all). */
const TRUSTED_KEYS = 10_000;

/**
 * Whether a secret names a live key, by `find` (the key's record by the SHA-256 of its secret), with a live answer
 * trusted for `ttlMs` and never past the key's own expiry, as the functions' guard trusts one
 * (functions/http/guard.ts); a key not found is looked up again every time, and a `ttlMs` of 0 looks up every key
 * every time. Only the secret's hash is kept.
 */
export function trustedFor(ttlMs: number, find: (secretHash: string) => Promise<{ expiresAt?: string } | undefined>, clock: () => number = Date.now): (secret: string) => Promise<boolean> {
  const trusted = new Map<string, number>();
  return async (secret) => {
    const hash = hashSecret(secret);
    const until = trusted.get(hash);
    if (until !== undefined && until > clock()) return true;
    const found = await find(hash);
    if (!found) {
      trusted.delete(hash);
      return false;
    }
    if (ttlMs > 0) {
      if (trusted.size >= TRUSTED_KEYS) {
        for (const [held, heldUntil] of trusted) if (heldUntil <= clock()) trusted.delete(held);
        if (trusted.size >= TRUSTED_KEYS) trusted.clear();
      }
      trusted.set(hash, Math.min(clock() + ttlMs, found.expiresAt === undefined ? Infinity : Date.parse(found.expiresAt)));
    }
    return true;
  };
}

/** The function guard's answer to a request's key, with `knownKey` telling whether a live key has a secret. */
export function guardKeyCheck(knownKey: (secret: string) => Promise<boolean>): KeyCheck {
  return {
    async refusal(authorization) {
      try {
        if (await knownKey(bearerSecret(authorization))) return undefined;
        const { code, message } = unknownKey();
        return { code, message };
      } catch (error) {
        if (error instanceof DriveError) return { code: error.code, message: error.message };
        throw error;
      }
    },
    logRefusal(resource, method, requestId) {
      const event = { resource, httpMethod: method, body: null, isBase64Encoded: false, headers: {}, multiValueHeaders: {}, requestContext: { requestId } } as unknown as APIGatewayProxyEvent;
      logRequest(event, { status: 401, startedAt: Date.now(), bytesOut: 0 });
    },
    requestIdHeader: REQUEST_ID_HEADER,
  };
}

/**
 * Parses `DRIVE_API_KEYS`: entries `secret`, `drive:secret`, `drive:secret:role` or `drive:secret:role:/prefix`.
 * A bad entry stops the start with a message that names it (never the secret): a secret too easy to guess
 * (`weakSecretProblem`), or a role where the secret should be (`drive:admin`).
 */
export function parseApiKeys(value: string | undefined): { drive: string; secret: string; role?: Role; prefix?: string }[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry, i) => {
      const fields = entry.split(':');
      const [drive, secret, role, ...prefixParts] = fields.length === 1 ? ['default', entry] : fields;
      if (!DRIVE_ID.test(drive)) throw new Error(`DRIVE_API_KEYS entry ${i + 1}: drive must match ${DRIVE_ID}`);
      if ((ROLES as string[]).includes(secret ?? '')) {
        throw new Error(`DRIVE_API_KEYS entry ${i + 1}: the second field is a role; write drive:secret:role (or secret alone for the default drive)`);
      }
      if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(secret ?? '')) {
        throw new Error(`DRIVE_API_KEYS entry ${i + 1}: the secret must be a non-empty token of letters, digits and -._~+/`);
      }
      const weak = weakSecretProblem(secret);
      if (weak) throw new Error(`DRIVE_API_KEYS entry ${i + 1}: ${weak}`);
      if (role !== undefined && !(ROLES as string[]).includes(role)) throw new Error(`DRIVE_API_KEYS entry ${i + 1}: role must be one of ${ROLES.join(', ')}`);
      const prefix = prefixParts.length > 0 ? parsePath(prefixParts.join(':'), `DRIVE_API_KEYS entry ${i + 1} prefix`, { allowTrailingSlash: true }) : undefined;
      return { drive, secret, ...(role ? { role: role as Role } : {}), ...(prefix ? { prefix } : {}) };
    });
}

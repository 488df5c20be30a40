import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Caller } from '../core/access';
import { DriveError, badRequest } from '../core/errors';
import {
  IDEMPOTENCY_KEY,
  type IdempotencyStore,
  type IdempotentRequest,
  LEASE_MARGIN_MS,
  type StoredAnswer,
  inProgressRetrySeconds,
  remembers,
} from '../core/idempotency';
import { log } from '../telemetry/log';
import { bodyOf, headerOf } from './event';
import type { Headers } from './respond';

/** The request header that names an attempt (draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The answer header of a replay: `true` on an answer the first request with the key gave. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * The headers of an answer that are kept and replayed with it: its type, and where a 202's job is read.
 * Never the request's own (`X-Request-Id`, rate limits, CORS): a replay carries the retry's.
 */
const KEPT_HEADERS = ['content-type', 'location'];

/**
 * A kept body, sealed: AES-256-GCM under a key derived (HKDF-SHA256, salted by the record's scope) from
 * `sealingSecretOf`. For an ordinary key that is its own bearer secret, which Drive keeps only as a hash: an
 * answer may hold a secret shown once (a new API key's, a share link's token) and always holds the caller's
 * paths, and a copy of the table reads none of it; only the same secret opens it. A minted key's records are
 * its job's (`scopeOf`), which later keys of the job must open though each has a secret of its own: see
 * `sealingSecretOf` for what that costs at rest.
 */
const SEALED = 'sealed1:';

function sealKey(secret: string, scope: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'drive idempotency answers', scope, 32));
}

function seal(body: string, secret: string, scope: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(secret, scope), iv);
  const sealed = Buffer.concat([cipher.update(gzipSync(body)), cipher.final()]);
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

/** The body `seal` sealed; undefined when `secret` does not open it (then the answer is not replayed). */
function unseal(kept: string, secret: string, scope: string): string | undefined {
  if (!kept.startsWith(SEALED)) return undefined;
  try {
    const raw = Buffer.from(kept.slice(SEALED.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', sealKey(secret, scope), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return gunzipSync(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()])).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The bearer secret of the request (the guard admitted it before any take). */
function secretOf(event: APIGatewayProxyEvent): string {
  return /^Bearer\s+(.+)$/i.exec(headerOf(event, 'Authorization') ?? '')?.[1]?.trim() ?? '';
}

/**
 * Whom a record belongs to: the API key's id, and what the key may reach (drive, role, prefix). A key whose
 * reach changes (the local host's DRIVE_API_KEYS can give one secret another drive or folder) never replays
 * an answer it got with its old reach.
 *
 * A key the token exchange minted is one of its job's keys: the job exchanges its token again when its key
 * nears its end, and each exchange mints a new key id. Its records are the job's, named by what stays the
 * same across the exchanges, the trust rule and the token's subject (as a large upload's session is carried
 * on, `sessionVisibleTo`), so a retry sent with the renewed key gets the first attempt's answer instead of
 * running again. Another subject, another rule, or an ordinary key never shares them. `job#` cannot be a key
 * id (key ids are hex).
 */
export function scopeOf(caller: Caller): string {
  const reach = createHash('sha256').update(JSON.stringify([caller.drive, caller.role, caller.prefix])).digest('hex').slice(0, 16);
  const job = jobOf(caller);
  if (job) return `job#${job.trustId}#${createHash('sha256').update(job.subject).digest('hex').slice(0, 32)}#${reach}`;
  return `${caller.keyId}#${reach}`;
}

/** The trust rule and subject of a minted key; undefined for an ordinary key. */
function jobOf(caller: Caller): { trustId: string; subject: string } | undefined {
  return caller.trustId !== undefined && caller.subject !== undefined ? { trustId: caller.trustId, subject: caller.subject } : undefined;
}

/**
 * What a record's answer is sealed under. An ordinary key's own bearer secret. A minted key's job (its rule
 * and subject, with its drive): every key of the job must open the answer, and no secret is common to them
 * (each exchange mints a random one, and the exchange sees none of the job's earlier keys), so the seal is
 * derived from what names the job. Against another caller that is as strong as the scope (a caller of
 * another rule or subject never reads the record, and the scope salts the key). At rest it is weaker than an
 * ordinary key's: the rule's id and the subject are in the table too, so whoever reads the table can open a
 * minted key's answers (a rule never grants admin, so they hold no new API key's secret; they may hold paths
 * and a share link's token). docs/design.md, "Idempotency keys", says so.
 */
function sealingSecretOf(caller: Caller, event: APIGatewayProxyEvent): string {
  const job = jobOf(caller);
  return job ? JSON.stringify(['minted key job', caller.drive, job.trustId, job.subject]) : secretOf(event);
}

/**
 * Times the answer of work done is written before it is given up: each a call the SDK itself retries (3
 * attempts), so a throttled or briefly unreachable table gets 9 tries over about a second, well inside the
 * lease's 10 s margin.
 */
export const ANSWER_WRITE_ATTEMPTS = 3;

/** The wait before attempt `attempt + 1`, as the SDK's standard retry strategy waits: full jitter below 100 ms × 2^(attempt-1), at most 20 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(20_000, 100 * 2 ** (attempt - 1)));
}

/** The 400 of a header that breaks the rule; the message names the header. */
const badKey = () => badRequest(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters`);

/**
 * The request's Idempotency-Key as sent, or undefined without the header. A header sent twice (joined with
 * ", ") is one value, as any other; `IdempotencySession.take` holds it to the rule.
 */
export function idempotencyKeyOf(event: APIGatewayProxyEvent): string | undefined {
  return headerOf(event, IDEMPOTENCY_KEY_HEADER);
}

/**
 * What makes two requests the same: the method, the path as called, the query (names and values sorted, each
 * value in order) and the SHA-256 of the body (`bodyDigestOf`). Headers are not in it: a retry may differ in
 * its key's rotation or tracing, never in what it asks.
 */
export function fingerprintOf(event: APIGatewayProxyEvent): string {
  const query = Object.entries(event.multiValueQueryStringParameters ?? Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).map(([k, v]) => [k, [v ?? '']])))
    .map(([name, values]) => [name, values ?? []] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify([event.httpMethod, event.path, query, bodyDigestOf(event)])).digest('hex');
}

/**
 * The SHA-256 of the body as sent; for a multipart body, of its parts without their boundary. A client picks
 * a boundary of its own for each body it builds (a browser's or undici's FormData a random one each time), so
 * a retry that builds its form again sends other bytes for the same parts, which would be another request
 * (`422 idempotency_key_reused`). The parts are what the body is cut into at each delimiter line (`--` and the
 * boundary, at the start of a line, as the upload's own count of parts finds them), hashed one by one with
 * their lengths, so two bodies are the same exactly when their parts are, byte for byte (each part's headers
 * and content, the preamble and the epilogue). One pass over the body, as the hash already makes.
 */
function bodyDigestOf(event: APIGatewayProxyEvent): string {
  const body = bodyOf(event);
  const delimiter = multipartDelimiter(headerOf(event, 'Content-Type'));
  const hash = createHash('sha256');
  if (!delimiter) return hash.update(body).digest('hex');
  hash.update('multipart parts\0');
  const part = (bytes: Buffer) => hash.update(`${bytes.length}:`).update(bytes);
  let from = 0;
  for (let at = body.indexOf(delimiter); at >= 0; at = body.indexOf(delimiter, at + delimiter.length)) {
    if (at !== 0 && !(body[at - 1] === 0x0a && body[at - 2] === 0x0d)) continue;
    part(body.subarray(from, at));
    from = at + delimiter.length;
  }
  part(body.subarray(from));
  return hash.digest('hex');
}

/** `--` and the boundary of a `multipart/*` Content-Type; undefined for any other body. */
function multipartDelimiter(contentType: string | undefined): Buffer | undefined {
  if (!contentType || !/^\s*multipart\//i.test(contentType)) return undefined;
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  const value = boundary?.[1] ?? boundary?.[2];
  return value ? Buffer.from(`--${value}`) : undefined;
}

/**
 * One request's use of its Idempotency-Key, for the HTTP layer that wraps a handler (api-handler.ts): `take`
 * beside the guard's rate-limit bucket, then either `replay` the first answer, or run the handler and `settle`
 * its answer (kept, or the key freed). A request without the header has no session and makes no call.
 */
export class IdempotencySession {
  private held?: { request: IdempotentRequest; owner: string; sealing: string };
  private found?: StoredAnswer;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly key: string,
    private readonly event: APIGatewayProxyEvent,
    /** How long the key is held: the function's remaining time, and a margin. */
    private readonly runMs: number,
    /** Waits between attempts at keeping an answer (tests wait for nothing). */
    private readonly wait: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /**
   * Takes the key for `caller` (a 400 for a header that breaks the rule): afterwards either the request holds
   * it, or `replayed` has the first answer; throws `409` (reason `idempotency_in_progress`, with `Retry-After`) while
   * the first request runs, and `422` (reason `idempotency_key_reused`) when the key was used for another request.
   */
  async take(caller: Caller): Promise<void> {
    // Checked once the key is known good: a request without a valid key is a 401 whatever its headers.
    if (!IDEMPOTENCY_KEY.test(this.key)) throw badKey();
    const request: IdempotentRequest = { scope: scopeOf(caller), key: this.key, fingerprint: fingerprintOf(this.event) };
    const sealing = sealingSecretOf(caller, this.event);
    const outcome = await this.store.take(request, this.runMs + LEASE_MARGIN_MS);
    switch (outcome.kind) {
      case 'taken':
        this.held = { request, owner: outcome.owner, sealing };
        return;
      case 'done': {
        const body = unseal(outcome.answer.body, sealing, request.scope);
        // Only the secret that sealed it opens it; a record that does not open is refused, never sent.
        if (body === undefined) throw new Error('an idempotency record did not open with its own key');
        this.found = { ...outcome.answer, body };
        return;
      }
      case 'running': {
        const wait = inProgressRetrySeconds(outcome.leaseUntil, outcome.now);
        throw new DriveError(
          'conflict',
          `a request with this ${IDEMPOTENCY_KEY_HEADER} is still running; retry in ${wait} second${wait === 1 ? '' : 's'} for its answer`,
          { 'Retry-After': String(wait) },
          'idempotency_in_progress',
        );
      }
      case 'mismatch':
        throw new DriveError(
          'validation_error',
          `this ${IDEMPOTENCY_KEY_HEADER} was used for another request (another method, path, query or body); send a new key for a new request`,
          {},
          'idempotency_key_reused',
        );
    }
  }

  /** Whether `take` has run (a guard that ignores what it is asked to run beside it leaves it to the caller). */
  get taken(): boolean {
    return this.held !== undefined || this.found !== undefined;
  }

  /** The first answer, to send instead of running the handler; undefined when this request runs it. */
  replayed(headers: Headers): APIGatewayProxyResult | undefined {
    if (!this.found) return undefined;
    return { statusCode: this.found.statusCode, headers: { ...headers, ...this.found.headers, [REPLAYED_HEADER]: 'true' }, body: this.found.body };
  }

  /**
   * Keeps `answer` as the key's, or frees the key for an answer not to remember (a 5xx, a "try again"). The
   * work is done, so keeping its answer is tried `ANSWER_WRITE_ATTEMPTS` times (each call with the SDK's own
   * retries too), waiting between them as the SDK does; a failure after that is logged, never sent: the
   * answer goes out either way, and a retry with the key after the lease runs the request anew
   * (docs/api.md, "Retries and Idempotency-Key", says when that is safe).
   */
  async settle(answer: APIGatewayProxyResult, reason?: string): Promise<void> {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    try {
      const all = answer.headers ?? {};
      if (!remembers({ statusCode: answer.statusCode, headers: all }, reason)) return await this.store.release(held.request, held.owner);
      const headers = Object.fromEntries(Object.entries(all).filter(([name]) => KEPT_HEADERS.includes(name.toLowerCase())).map(([name, value]) => [name, String(value)]));
      const kept = { statusCode: answer.statusCode, headers, body: seal(answer.body, held.sealing, held.request.scope) };
      for (let attempt = 1; ; attempt++) {
        try {
          if (!(await this.store.complete(held.request, held.owner, kept))) log('WARN', 'idempotency key lost before its answer was kept', { idempotency_scope: held.request.scope });
          return;
        } catch (error) {
          if (attempt >= ANSWER_WRITE_ATTEMPTS) throw error;
          log('WARN', 'idempotency record not written; trying again', { idempotency_scope: held.request.scope, attempt, error: String(error) });
          await this.wait(backoffMs(attempt));
        }
      }
    } catch (error) {
      log('ERROR', 'idempotency record not written', { idempotency_scope: held.request.scope, error: String(error) });
    }
  }

  /** Frees the key of a request refused before its handler ran (a 429 of the bucket taken beside it). */
  async abandon(): Promise<void> {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    await this.store.release(held.request, held.owner).catch((error: unknown) => log('ERROR', 'idempotency key not freed', { error: String(error) }));
  }
}

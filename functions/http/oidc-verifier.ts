import { type JSONWebKeySet, createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { DriveError, UnavailableError, unauthorized, unavailable } from '../core/errors';
import { type VerifiedClaims, isLoopbackOrigin } from '../core/trust';

/** Checks an identity token against its issuer's published keys and returns its claims; throws a 401 naming the failed check, or a 503 for an issuer that did not answer. */
export interface TokenVerifier {
  screen(token: string, trustedIssuers: ReadonlySet<string>): string;
  verify(token: string, trustedIssuers: ReadonlySet<string>, now: Date): Promise<VerifiedClaims>;
}

/** Only asymmetric signatures: a shared-secret (HS*) token could be forged by anyone who may verify it, and `none` is no signature. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Clock skew allowed between the issuer and this function, for `exp`, `nbf` and `iat`. */
export const SKEW_SECONDS = 60;
/** The most a discovery document or JWKS may be: real ones are a few KiB; more is an issuer to refuse, not to buffer. */
export const MAX_DOCUMENT_BYTES = 64 * 1024;
/** How long an issuer has to answer each fetch, body included. */
export const FETCH_TIMEOUT_MS = 3_000;
/** How long an issuer's keys are used before they are fetched again. */
const KEYS_FRESH_MS = 10 * 60_000;
/** A token signed by a key not in the cached set fetches the set again, at most this often: a burst of such tokens is not a burst of fetches. */
const REFETCH_GAP_MS = 30_000;
/** How long an issuer that failed to answer is answered 503 without asking it again. */
const FAILURE_KEPT_MS = 5_000;

/**
 * The one refusal for every check a forged token can fail before its signature is verified: an issuer no live
 * rule names, a key (`kid`) the issuer does not publish, a signature that does not verify, a signature part
 * jose cannot read. Told apart, they would let anyone without a key learn which issuers a drive trusts by
 * sending tokens that name them; alike, they still say which check failed. Past the signature (exp, nbf, iat,
 * aud, sub) the caller holds a genuine token of a trusted issuer and learns nothing new.
 */
export const NOT_TRUSTED = 'the token is not signed by a key of an issuer this drive trusts: its issuer (iss) is named by no live trust rule, or its key (kid) or signature does not verify against that issuer\'s published keys';

interface HeldKeys {
  keys: JSONWebKeySet;
  fetchedAt: number;
}

type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/**
 * Verifies identity tokens (JWTs) with jose against keys found by OpenID discovery: `<iss>/.well-known/
 * openid-configuration`, then its `jwks_uri`. Each answer is size-capped and time-limited; keys are cached per
 * issuer (one fetch at a time), refreshed when stale or when a token names a key the set lacks.
 */
export class OidcVerifier implements TokenVerifier {
  private readonly held = new Map<string, HeldKeys>();
  private readonly fetching = new Map<string, Promise<HeldKeys>>();
  private readonly failed = new Map<string, { error: DriveError; until: number }>();
  private readonly loopback: boolean;
  private readonly timeoutMs: number;
  private readonly clock: () => number;
  private readonly fetch: Fetch;

  constructor(options: { loopback: boolean; timeoutMs?: number; clock?: () => number; fetch?: Fetch }) {
    this.loopback = options.loopback;
    this.timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
    this.clock = options.clock ?? Date.now;
    this.fetch = options.fetch ?? ((url, init) => fetch(url, init));
  }

  /** The token's issuer, after the checks that ask no issuer anything: a JWT, an asymmetric alg, an iss in `trustedIssuers`; else the 401. */
  screen(token: string, trustedIssuers: ReadonlySet<string>): string {
    let alg: unknown;
    let issuer: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
      issuer = decodeJwt(token).iss;
    } catch {
      throw unauthorized('the token is not a JWT: three base64url parts (header, claims, signature) with JSON header and claims');
    }
    if (typeof alg !== 'string' || !ASYMMETRIC_ALGORITHMS.includes(alg)) {
      throw unauthorized(`the token's algorithm (alg) must be an asymmetric one (${ASYMMETRIC_ALGORITHMS.join(', ')}); never none or HS*`);
    }
    if (typeof issuer !== 'string' || !trustedIssuers.has(issuer)) throw unauthorized(NOT_TRUSTED);
    return issuer;
  }

  async verify(token: string, trustedIssuers: ReadonlySet<string>, now: Date): Promise<VerifiedClaims> {
    const issuer = this.screen(token, trustedIssuers);
    let held = await this.keysOf(issuer);
    try {
      return await this.check(token, issuer, held, now);
    } catch (error) {
      // A key the cached set lacks: the issuer may have rotated its keys since.
      if (!(error instanceof errors.JWKSNoMatchingKey) || this.clock() - held.fetchedAt < REFETCH_GAP_MS) throw refusal(error);
    }
    held = await this.keysOf(issuer, true);
    try {
      return await this.check(token, issuer, held, now);
    } catch (error) {
      throw refusal(error);
    }
  }

  private async check(token: string, issuer: string, held: HeldKeys, now: Date): Promise<VerifiedClaims> {
    const { payload } = await jwtVerify(token, createLocalJWKSet(held.keys), {
      issuer,
      algorithms: ASYMMETRIC_ALGORITHMS,
      clockTolerance: SKEW_SECONDS,
      currentDate: now,
      requiredClaims: ['exp', 'iat', 'sub', 'aud'],
    });
    // jose checks `iat` is a number; one in the future (beyond the skew) is a token not yet issued.
    if (typeof payload.iat === 'number' && payload.iat > now.getTime() / 1000 + SKEW_SECONDS) throw unauthorized('the token\'s issue time (iat) is in the future');
    if (typeof payload.sub !== 'string') throw unauthorized('the token\'s subject (sub) must be a string');
    // jose checks `aud`'s type only when told an audience to expect, and the rules name several: check it here.
    const audiences: unknown = typeof payload.aud === 'string' ? [payload.aud] : payload.aud;
    if (!Array.isArray(audiences) || !audiences.every((audience) => typeof audience === 'string')) throw unauthorized('the token\'s audience (aud) must be a string or an array of strings');
    return { issuer, audiences, subject: payload.sub, claims: payload };
  }

  /** The issuer's keys: cached while fresh (unless `again`), else fetched, one fetch at a time per issuer. */
  private async keysOf(issuer: string, again = false): Promise<HeldKeys> {
    const held = this.held.get(issuer);
    if (held && !again && this.clock() - held.fetchedAt < KEYS_FRESH_MS) return held;
    const failed = this.failed.get(issuer);
    if (failed && failed.until > this.clock()) throw failed.error;
    let pending = this.fetching.get(issuer);
    if (!pending) {
      pending = this.fetchKeys(issuer).finally(() => this.fetching.delete(issuer));
      this.fetching.set(issuer, pending);
    }
    try {
      const fetched = await pending;
      this.held.set(issuer, fetched);
      this.failed.delete(issuer);
      return fetched;
    } catch (error) {
      // An issuer that is down is not asked again by every request of a burst.
      if (error instanceof UnavailableError) this.failed.set(issuer, { error, until: this.clock() + FAILURE_KEPT_MS });
      throw error;
    }
  }

  private async fetchKeys(issuer: string): Promise<HeldKeys> {
    const discovery = await this.fetchJson(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, 'discovery document');
    if (typeof discovery !== 'object' || discovery === null || Array.isArray(discovery)) throw unauthorized('the issuer\'s discovery document is not a JSON object');
    const { issuer: named, jwks_uri: jwksUri } = discovery as Record<string, unknown>;
    if (named !== issuer) throw unauthorized('the issuer\'s discovery document names another issuer than the token\'s iss');
    if (typeof jwksUri !== 'string' || !this.allowedUrl(jwksUri)) throw unauthorized('the issuer\'s discovery document has no https jwks_uri');
    const keys = await this.fetchJson(jwksUri, 'JWKS');
    const list = (keys as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(list) || list.length > 100 || !list.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key) && typeof (key as { kty?: unknown }).kty === 'string')) {
      throw unauthorized('the issuer\'s JWKS is not a key set: {"keys": [JWK, …]} with at most 100 keys');
    }
    return { keys: { keys: list as JSONWebKeySet['keys'] }, fetchedAt: this.clock() };
  }

  private allowedUrl(text: string): boolean {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return false;
    }
    return url.protocol === 'https:' || (this.loopback && url.protocol === 'http:' && isLoopbackOrigin(url));
  }

  /** The JSON at `url`: 503 if the issuer does not answer in time or fails; 401 if what it answers is not usable (too large, not JSON, not found). */
  private async fetchJson(url: string, what: string): Promise<unknown> {
    const seconds = this.timeoutMs / 1000;
    const signal = AbortSignal.timeout(this.timeoutMs);
    const timedOut = () => unavailable(`the token's issuer did not answer: its ${what} took longer than ${seconds} s; retry later`);
    let response: Response;
    try {
      response = await this.fetch(url, { signal, redirect: 'error', headers: { accept: 'application/json' } });
    } catch {
      throw signal.aborted ? timedOut() : unavailable(`the token's issuer could not be reached for its ${what}; retry later`);
    }
    if (response.status >= 500 || response.status === 429) {
      await response.body?.cancel().catch(() => undefined);
      throw unavailable(`the token's issuer answered ${response.status} for its ${what}; retry later`);
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw unauthorized(`the token's issuer has no ${what} (it answered ${response.status})`);
    }
    const tooLarge = () => unauthorized(`the issuer's ${what} is larger than ${MAX_DOCUMENT_BYTES / 1024} KiB, the most Drive reads`);
    if (Number(response.headers.get('content-length') ?? 0) > MAX_DOCUMENT_BYTES) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body ?? []) {
        size += chunk.byteLength;
        if (size > MAX_DOCUMENT_BYTES) {
          await response.body?.cancel().catch(() => undefined);
          throw tooLarge();
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof DriveError) throw error;
      throw signal.aborted ? timedOut() : unavailable(`the token's issuer broke off its ${what}; retry later`);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw unauthorized(`the issuer's ${what} is not JSON`);
    }
  }
}

/**
 * The 401 (or the issuer's 503) for a token jose refused: which check failed, never the token. jose checks the
 * signature first and the claims after, so the claims' refusals (JWT*) reach only a caller holding a token its
 * issuer signed; every refusal before that (JWS*, JWKS*, a key jose cannot use) is NOT_TRUSTED.
 */
function refusal(error: unknown): DriveError {
  if (error instanceof DriveError) return error;
  if (error instanceof errors.JWTExpired) return unauthorized('the token has expired (exp)');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return unauthorized('the token is not valid yet (nbf)');
    if (error.claim === 'iat') return unauthorized('the token\'s issue time (iat) is not valid');
    if (error.claim === 'iss') return unauthorized('the token\'s issuer (iss) is not the one its keys were fetched from');
    return unauthorized(`the token's ${error.claim} claim is missing or not valid`);
  }
  if (error instanceof errors.JWTInvalid) return unauthorized('the token is not a well-formed JWT');
  return unauthorized(NOT_TRUSTED);
}

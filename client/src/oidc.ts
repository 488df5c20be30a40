import { readFile } from 'node:fs/promises';
import { DriveError, errorFromResponse } from './errors';
import { type Clock, systemClock } from './rate-limit-pacer';
import type { Call, CallResult } from './transport';

/**
 * Where the API key of a call comes from: a fixed key, or a `KeySource` that exchanges an OIDC token for a
 * short-lived key and exchanges again before it ends (issue 25).
 */
export interface KeySource {
  /** The key to send now: a live one, exchanged anew when it is near its end. */
  key(signal?: AbortSignal): Promise<string>;
  /** A call with `key` got `401`: forget it, so that the next `key()` exchanges again; true if that can help. */
  refused(key: string): boolean;
}

/** A JWT for the exchange, asked anew at each one (a token file may be rotated, a runner's token is single-use). */
export type TokenProvider = (signal?: AbortSignal) => Promise<string>;

export interface OidcOptions {
  /** The job's identity token, or where to get one at each exchange. */
  token: string | TokenProvider;
  /** The drive to exchange into. Default `default`. */
  drive?: string;
  /** The key's life asked for (60 or more; the trust rule caps it). Default: the rule's cap. */
  ttlSeconds?: number;
}

/** A key whose end is near by this much is exchanged again: 20 % of its life, and at least 60 s (but at most half its life). */
export function renewMarginMs(lifeMs: number): number {
  return Math.min(Math.max(lifeMs * 0.2, 60_000), lifeMs / 2);
}

/** An OIDC token file, read at each exchange (Kubernetes and others rotate it in place). */
export function tokenFile(path: string): TokenProvider {
  return async () => {
    const token = (await readFile(path, 'utf8')).trim();
    if (!token) throw new DriveError('local_file_error', `the OIDC token file ${path} is empty`, 0);
    return token;
  };
}

/**
 * A fresh token from the GitHub Actions runner at each exchange: `GET $ACTIONS_ID_TOKEN_REQUEST_URL&audience=…`
 * with `Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN`, answering `{"value": "<jwt>"}`. The workflow
 * needs `permissions: id-token: write` for the runner to set those variables.
 */
export function githubActionsToken(requestUrl: string, requestToken: string, audience: string | undefined, fetcher: typeof fetch = globalThis.fetch): TokenProvider {
  return async (signal) => {
    const url = audience ? `${requestUrl}&audience=${encodeURIComponent(audience)}` : requestUrl;
    let response: Response;
    try {
      response = await fetcher(url, { headers: { Authorization: `bearer ${requestToken}`, Accept: 'application/json' }, signal });
    } catch (error) {
      throw new DriveError('network_error', `the GitHub Actions runner's token request got no answer: ${(error as Error).message}`, 0, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) throw new DriveError('unauthorized', `the GitHub Actions runner refused an ID token (${response.status}); does the workflow have "permissions: id-token: write"?`, response.status);
    let value: unknown;
    try {
      value = (JSON.parse(text) as { value?: unknown }).value;
    } catch {
      value = undefined;
    }
    if (typeof value !== 'string' || !value) throw new DriveError('internal_error', "the GitHub Actions runner's token answer has no \"value\"", response.status);
    return value;
  };
}

interface Minted {
  key: string;
  /** When to exchange again, on the clock. */
  renewAt: number;
}

/**
 * Exchanges an OIDC token at `POST /drive/token` for a key, and again when the key is within
 * `renewMarginMs` of its end or was refused. One exchange at a time: calls that need a key meanwhile wait
 * for it. The key is never logged nor put in an error message.
 */
export class OidcKeySource implements KeySource {
  private current?: Minted;
  private pending?: Promise<Minted>;
  private readonly token: TokenProvider;

  /**
   * `send` is the client's transport (its pacing, and its retries of a `5xx`, a `429` or a lost answer: an
   * exchange is safe to repeat, each mints a key of its own and an unused one just ends); `url` is the
   * exchange's absolute URL.
   */
  constructor(
    private readonly url: string,
    private readonly options: OidcOptions,
    private readonly send: (call: Call) => Promise<CallResult>,
    private readonly clock: Clock = systemClock,
  ) {
    const { token } = options;
    this.token = typeof token === 'string' ? async () => token : token;
  }

  async key(signal?: AbortSignal): Promise<string> {
    const current = this.current;
    if (current && this.clock.now() < current.renewAt) return current.key;
    if (!this.pending) {
      this.pending = this.exchange(signal).finally(() => (this.pending = undefined));
    }
    const minted = await this.pending;
    return minted.key;
  }

  refused(key: string): boolean {
    if (this.current?.key === key) this.current = undefined;
    return true;
  }

  private async exchange(signal?: AbortSignal): Promise<Minted> {
    const token = await this.token(signal);
    const body = JSON.stringify({ drive: this.options.drive ?? 'default', token, ...(this.options.ttlSeconds === undefined ? {} : { ttl_seconds: this.options.ttlSeconds }) });
    const { response } = await this.send({ method: 'POST', url: this.url, bucket: 'token', headers: { 'Content-Type': 'application/json' }, body, signal });
    if (!response.ok) throw await errorFromResponse(response, 'POST /drive/token');
    const data = ((await response.json()) as { data?: { key?: unknown; expires_at?: unknown } }).data;
    const expiresAt = typeof data?.expires_at === 'string' ? Date.parse(data.expires_at) : Number.NaN;
    if (typeof data?.key !== 'string' || Number.isNaN(expiresAt)) throw new DriveError('internal_error', 'POST /drive/token answered without a key and its expires_at', response.status);
    const now = this.clock.now();
    // The server's clock says when the key ends; the life is measured on ours from the answer on.
    const lifeMs = Math.max(0, expiresAt - Date.now());
    this.current = { key: data.key, renewAt: now + lifeMs - renewMarginMs(lifeMs) };
    return this.current;
  }
}

/** A fixed key, as `apiKey` gives. */
export class StaticKey implements KeySource {
  constructor(private readonly apiKey: string) {}
  async key(): Promise<string> {
    return this.apiKey;
  }
  refused(): boolean {
    return false;
  }
}

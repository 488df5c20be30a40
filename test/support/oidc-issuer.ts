import { type IncomingMessage, type Server, type ServerResponse, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type CryptoKey, type JWK, type JWTPayload, SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { ErrorJson } from './api-client';

/** How a test issuer answers its discovery document and JWKS. */
export type IssuerBehaviour =
  | { kind: 'ok' }
  /** Accepts the connection and never answers. */
  | { kind: 'silent' }
  | { kind: 'status'; status: number }
  /** A JWKS of this many bytes (its keys padded with a long unknown member). */
  | { kind: 'huge-jwks'; bytes: number }
  /** A JWKS whose `keys` is not a list of JWKs. */
  | { kind: 'wrong-types' }
  /** A discovery document that names another issuer. */
  | { kind: 'other-issuer' };

/** A signing key of the issuer's: its private half, and the JWK it publishes. */
interface SigningKey {
  privateKey: CryptoKey;
  jwk: JWK;
}

/**
 * An OpenID issuer on loopback, as GitHub Actions' or GitLab's is on the internet: its own key pairs (RS256 and
 * ES256), a discovery document and a JWKS served by node:http, and a way to sign tokens. It counts the
 * requests it answers, so a test can tell a cached key set from a fetched one.
 */
export class TestIssuer {
  /** Requests for each path, in arrival order. */
  readonly requests: string[] = [];
  behaviour: IssuerBehaviour = { kind: 'ok' };
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly keys: Record<'RS256' | 'ES256', SigningKey>,
  ) {}

  /** Starts an issuer on 127.0.0.1 at an ephemeral port. */
  static async start(): Promise<TestIssuer> {
    const keys = { RS256: await signingKey('RS256', 'rsa-1'), ES256: await signingKey('ES256', 'ec-1') };
    let issuer: TestIssuer | undefined;
    const server = createServer((req, res) => issuer!.answer(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = new TestIssuer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys);
    server.on('connection', (socket) => {
      issuer!.sockets.add(socket);
      socket.on('close', () => issuer!.sockets.delete(socket));
    });
    return issuer;
  }

  /** A token signed with the issuer's key of `alg` (default RS256) carrying the usual claims, then `claims` over them (undefined deletes one). */
  async sign(claims: Record<string, unknown>, options: { alg?: 'RS256' | 'ES256'; kid?: string; key?: CryptoKey } = {}): Promise<string> {
    const alg = options.alg ?? 'RS256';
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = { iss: this.url, aud: 'drive', sub: 'repo:acme/etl:ref:refs/heads/main', iat: now, nbf: now, exp: now + 300, ...claims };
    for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
    return new SignJWT(payload).setProtectedHeader({ alg, kid: options.kid ?? this.keys[alg].jwk.kid }).sign(options.key ?? this.keys[alg].privateKey);
  }

  /** Replaces the RS256 key with a new one under `kid` (a rotation): tokens of the old key then name a kid the JWKS lacks. */
  async rotate(kid: string): Promise<void> {
    this.keys.RS256 = await signingKey('RS256', kid);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push(req.url ?? '');
    const behaviour = this.behaviour;
    if (behaviour.kind === 'silent') return;
    if (behaviour.kind === 'status') return void res.writeHead(behaviour.status).end('unavailable');
    if (req.url === '/.well-known/openid-configuration') {
      const issuer = behaviour.kind === 'other-issuer' ? 'https://elsewhere.example.com' : this.url;
      return send(res, { issuer, jwks_uri: `${this.url}/jwks`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] });
    }
    if (req.url === '/jwks') {
      if (behaviour.kind === 'wrong-types') return send(res, { keys: 'all of them' });
      const keys = [this.keys.RS256.jwk, this.keys.ES256.jwk];
      if (behaviour.kind === 'huge-jwks') return send(res, { keys: keys.map((key) => ({ ...key, x_padding: 'x'.repeat(behaviour.bytes) })) });
      return send(res, { keys });
    }
    res.writeHead(404).end();
  }
}

/** A new key pair for `alg`, published under `kid`. */
export async function signingKey(alg: 'RS256' | 'ES256', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

function send(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/** A token with `alg: none` (no signature), or any header and claims, put together by hand as an attacker would. */
export function unsignedToken(header: Record<string, unknown>, claims: Record<string, unknown>, signature = ''): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part(header)}.${part(claims)}.${signature}`;
}

/**
 * `POST /drive/token` on the host at `url` with `body` (JSON, or sent as given when a string) from the loopback
 * `address` (127.0.0.1, 127.0.0.2, …): the exchange's per-address bucket sees each address as a caller of its own.
 */
export function exchangeFrom(url: string, address: string, body: unknown): Promise<{ status: number; body: ErrorJson }> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
    const req = httpRequest(`${url}/drive/token`, { method: 'POST', localAddress: address, headers }, (res) => {
      let answer = '';
      res.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(answer) as ErrorJson }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

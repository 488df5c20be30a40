import { createServer } from 'node:net';
import { SignJWT } from 'jose';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { TestIssuer, exchangeFrom, signingKey, unsignedToken } from '../support/oidc-issuer';
import { type RunningHost, setKeyExpiry, startHost, stopHost } from '../support/local-host';

// Issue 25: trust rules and the token exchange, against real issuers on loopback (their own key pairs,
// discovery documents and JWKS), through a local host.

const ADMIN = 'fed-admin-Vq8WzN3kR5tYp2Lx7HcJ0mB4dF6g';
const WRITER = 'fed-writer-Hs3Kq9Wm2Zr7Tn5Bv1Xc8Pd4Lf6y';

interface TrustJson {
  id: string;
  issuer: string;
  audience: string;
  subject: string;
  claims: Record<string, string>;
  role: string;
  prefix: string;
  max_ttl_seconds: number;
  created_at: string;
  revoked_at: string | null;
}
interface MintedJson {
  key: string;
  expires_at: string;
  drive: string;
  role: string;
  prefix: string;
  trust_id: string;
}
interface KeyJson {
  id: string;
  role: string;
  prefix: string;
  revoked_at: string | null;
  trust_id?: string;
  subject?: string;
  expires_at?: string | null;
}

let host: RunningHost;
let issuer: TestIssuer;
const admin = () => new DriveClient(host.url, ADMIN);

function send(client: DriveClient, method: string, path: string, body?: unknown): Promise<Response> {
  return client.request(method, path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
}

/** POST /drive/token with no key, as a job would. */
function exchange(body: unknown): Promise<Response> {
  return fetch(`${host.url}/drive/token`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
}

async function addRule(rule: Record<string, unknown>, drive: DriveClient = admin()): Promise<TrustJson> {
  const made = await json<{ data: { trust: TrustJson } }>(send(drive, 'POST', '/drive/trust', rule));
  expect(made.status).toBe(200);
  return made.body.data.trust;
}

async function keysOfDrive(): Promise<KeyJson[]> {
  return (await json<{ data: { keys: KeyJson[] } }>(admin().request('GET', '/drive/keys'))).body.data.keys;
}

/** A port on loopback that nothing listens on: an issuer that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  issuer = await TestIssuer.start();
  host = await startHost({ DRIVE_RATE_LIMITS: 'off', DRIVE_API_KEYS: [`default:${ADMIN}:admin`, `default:${WRITER}:read-write`].join(',') });
});

afterAll(async () => {
  await issuer?.stop();
  if (host) await stopHost(host);
});

describe('POST/GET /drive/trust, DELETE /drive/trust/{id}', () => {
  it('makes a rule with the defaults the issue gives, lists it, and revokes it', async () => {
    const made = await addRule({ issuer: issuer.url, audience: 'crud', subject: 'repo:acme/*:ref:refs/heads/*', role: 'read-only' });
    expect(made).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      issuer: issuer.url,
      audience: 'crud',
      subject: 'repo:acme/*:ref:refs/heads/*',
      claims: {},
      role: 'read-only',
      prefix: '/',
      max_ttl_seconds: 3600,
      created_at: expect.any(String),
      revoked_at: null,
    });
    const listed = await json<{ data: { trust: TrustJson[] } }>(admin().request('GET', '/drive/trust'));
    expect(listed.status).toBe(200);
    expect(listed.body.data.trust).toContainEqual(made);

    const revoked = await json<{ data: { trust: TrustJson } }>(admin().request('DELETE', `/drive/trust/${made.id}`));
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.trust).toEqual({ ...made, revoked_at: expect.any(String) });
    expect(await json(admin().request('DELETE', '/drive/trust/0123456789abcdef'))).toEqual({ status: 404, body: { error: expect.objectContaining({ code: 'not_found' }) } });
  });

  it.each<[string, Record<string, unknown>, number, RegExp]>([
    ['grants admin', { role: 'admin' }, 422, /role must be one of upload-only, read-write, read-only; a trust rule never grants admin/],
    ['lives under a minute', { max_ttl_seconds: 59 }, 422, /max_ttl_seconds must be a whole number from 60 to 43200/],
    ['lives over 12 hours', { max_ttl_seconds: 43_201 }, 422, /max_ttl_seconds must be a whole number from 60 to 43200/],
    ['names a plain-http issuer off this machine', { issuer: 'http://issuer.example.com' }, 422, /issuer must be an https URL/],
    ['names no issuer URL', { issuer: 'github' }, 422, /issuer must be an https URL/],
    ['names an issuer with a space the URL parser would trim', { issuer: ' https://token.actions.githubusercontent.com' }, 422, /^issuer must be an https URL without whitespace or control characters$/],
    ['names an issuer with a control character inside', { issuer: 'https://token.actions.github\tusercontent.com' }, 422, /^issuer must be an https URL without whitespace or control characters$/],
    ['lacks an audience', { audience: undefined }, 400, /audience is required/],
    // The API's rule: the wrong JSON type is 400, a value of the right type breaking a rule 422 (docs/federation.md).
    ['gives an audience that is not a string', { audience: 5 }, 400, /^audience must be a string$/],
    ['gives claims that are not an object', { claims: ['repository_owner', 'acme'] }, 400, /^claims must be an object$/],
    ['gives an empty audience', { audience: '' }, 422, /audience/],
    ['asks for more than 20 claims', { claims: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`c${i}`, 'v'])) }, 422, /claims must be an object of at most 20 names/],
    ['carries a claim that is not a string', { claims: { run_attempt: 1 } }, 422, /claims must be an object of at most 20 names/],
    ['names a folder that is not a path', { prefix: 'ingest' }, 422, /prefix/],
  ])('refuses a rule that %s', async (_what, change, status, message) => {
    const rule: Record<string, unknown> = { issuer: issuer.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'upload-only', ...change };
    for (const [name, value] of Object.entries(rule)) if (value === undefined) delete rule[name];
    const refused = await json<ErrorJson>(send(admin(), 'POST', '/drive/trust', rule));
    expect(refused.status).toBe(status);
    expect(refused.body.error.message).toMatch(message);
  });

  it('is for admin keys only: another role gets 403', async () => {
    const writer = new DriveClient(host.url, WRITER);
    expect((await json<ErrorJson>(writer.request('GET', '/drive/trust'))).body.error).toEqual(expect.objectContaining({ code: 'forbidden', message: 'this key is read-write, which may not manage API keys' }));
    expect((await send(writer, 'POST', '/drive/trust', { issuer: issuer.url, audience: 'a', subject: 's', role: 'read-write' })).status).toBe(403);
  });
});

describe('POST /drive/token', () => {
  it('mints an upload-only key for repo:acme/etl:ref:refs/heads/main on /ingest: it uploads there, and gets 403 elsewhere and on download', async () => {
    const rule = await addRule({ issuer: issuer.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'upload-only', prefix: '/ingest' });
    const before = Date.now();
    const minted = await json<{ data: MintedJson }>(exchange({ drive: 'default', token: await issuer.sign({}) }));
    expect(minted.status).toBe(200);
    expect(minted.body.data).toEqual({ key: expect.stringMatching(/^drv_/), expires_at: expect.any(String), drive: 'default', role: 'upload-only', prefix: '/ingest', trust_id: rule.id });
    // The rule's cap (3600 s) when the job asks for no life of its own.
    const expires = Date.parse(minted.body.data.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3_600_000);

    const job = new DriveClient(host.url, minted.body.data.key);
    expect((await job.upload([{ data: 'a,b\n1,2\n', filename: 'day.csv' }], [{ folder: '/ingest' }])).status).toBe(200);
    expect((await json<ErrorJson>(job.upload([{ data: 'x', filename: 'x.csv' }], [{ folder: '/payroll' }]))).status).toBe(403);
    expect((await json<ErrorJson>(job.download({ path: '/ingest/day.csv' }))).body.error).toEqual(expect.objectContaining({ code: 'forbidden', message: 'this key is upload-only, which may not download files' }));
    expect((await json<{ data: unknown }>(job.request('GET', '/drive/whoami'))).body.data).toEqual(expect.objectContaining({ role: 'upload-only', prefix: '/ingest', drive: 'default' }));

    // An ordinary key of the drive, shown with its rule, subject and end; the request log names its rule.
    const listed = (await keysOfDrive()).find((key) => key.trust_id === rule.id)!;
    expect(listed).toEqual(expect.objectContaining({ role: 'upload-only', prefix: '/ingest', subject: 'repo:acme/etl:ref:refs/heads/main', expires_at: minted.body.data.expires_at, revoked_at: null }));
    expect(host.output()).toMatch(new RegExp(`"key_id":"${listed.id}","trust_id":"${rule.id}"`));
    expect(host.output()).not.toContain(minted.body.data.key);
  });

  it('takes the first live rule that matches, oldest first, with patterns within one segment and exact claims', async () => {
    const own = await TestIssuer.start();
    try {
      const wide = await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/*:ref:refs/heads/*', claims: { repository_owner: 'acme' }, role: 'read-only', prefix: '/reports' });
      const narrow = await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-write', prefix: '/etl' });
      const trade = async (claims: Record<string, unknown>) => json<{ data: MintedJson } & ErrorJson>(exchange({ drive: 'default', token: await own.sign(claims) }));
      // Both match: the older decides.
      expect((await trade({ repository_owner: 'acme' })).body.data).toEqual(expect.objectContaining({ trust_id: wide.id, role: 'read-only', prefix: '/reports' }));
      // The claim missing: only the narrow one matches.
      expect((await trade({})).body.data).toEqual(expect.objectContaining({ trust_id: narrow.id, role: 'read-write' }));
      expect((await trade({ sub: 'repo:acme/web:ref:refs/heads/dev', repository_owner: 'acme' })).body.data.trust_id).toBe(wide.id);
      // `*` never crosses a `:`.
      const crossing = await trade({ sub: 'repo:acme/etl:x:ref:refs/heads/main', repository_owner: 'acme' });
      expect(crossing).toEqual({ status: 401, body: { error: expect.objectContaining({ code: 'unauthorized', message: "the token's subject (sub) and claims match no trust rule of its issuer and audience" }) } });
      expect((await trade({ repository_owner: 'acme-evil', sub: 'repo:acme/web:ref:refs/heads/dev' })).status).toBe(401);
    } finally {
      await own.stop();
    }
  });

  it('refuses every bad token with a 401 that names the check and never echoes the token, and mints nothing', async () => {
    await addRule({ issuer: issuer.url, audience: 'bad-tokens', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-write' });
    const now = Math.floor(Date.now() / 1000);
    const stranger = await signingKey('RS256', 'rsa-1');
    const claims = { aud: 'bad-tokens' };
    const NOT_TRUSTED = /^the token is not signed by a key of an issuer this drive trusts: its issuer \(iss\) is named by no live trust rule, or its key \(kid\) or signature does not verify against that issuer's published keys$/;
    const cases: [string, string, RegExp][] = [
      ['malformed', 'not-a-jwt', /the token is not a JWT/],
      ['malformed in three parts', 'eyJ.eyJ.sig', /the token is not a JWT/],
      ['expired', await issuer.sign({ ...claims, iat: now - 900, nbf: now - 900, exp: now - 600 }), /the token has expired \(exp\)/],
      ['not yet valid', await issuer.sign({ ...claims, nbf: now + 600, exp: now + 900 }), /the token is not valid yet \(nbf\)/],
      ['issued in the future', await issuer.sign({ ...claims, iat: now + 600, exp: now + 900 }), /issue time \(iat\)/],
      ['without an expiry', await issuer.sign({ ...claims, exp: undefined }), /exp/],
      ['for another audience', await issuer.sign({ aud: 'someone-else' }), /the token's audience \(aud\) matches no trust rule of its issuer/],
      // Before the signature is verified, one answer: an untrusted issuer looks like a trusted one's forgery.
      ['signed by a key the issuer does not publish', await issuer.sign(claims, { kid: 'unknown-kid', key: stranger.privateKey }), NOT_TRUSTED],
      ['signed by another key under a published kid', await issuer.sign(claims, { key: stranger.privateKey }), NOT_TRUSTED],
      ['with alg none', unsignedToken({ alg: 'none' }, { iss: issuer.url, aud: 'bad-tokens', sub: 'repo:acme/etl:ref:refs/heads/main', iat: now, exp: now + 300 }), /algorithm \(alg\) must be an asymmetric one/],
      ['with HS256', await new SignJWT({ iss: issuer.url, aud: 'bad-tokens', sub: 'repo:acme/etl:ref:refs/heads/main', iat: now, exp: now + 300 }).setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' }).sign(new TextEncoder().encode('a shared secret anyone verifying holds')), /algorithm \(alg\) must be an asymmetric one/],
      ['from an issuer no rule names', await issuer.sign({ ...claims, iss: 'https://token.actions.githubusercontent.com' }), NOT_TRUSTED],
      ['for another subject', await issuer.sign({ ...claims, sub: 'repo:acme/etl:ref:refs/heads/dev' }), /subject \(sub\) and claims match no trust rule/],
    ];
    const keysBefore = (await keysOfDrive()).length;
    for (const [what, token, message] of cases) {
      const refused = await json<ErrorJson>(exchange({ drive: 'default', token }));
      expect({ what, status: refused.status, code: refused.body.error.code }).toEqual({ what, status: 401, code: 'unauthorized' });
      expect({ what, message: refused.body.error.message }).toEqual({ what, message: expect.stringMatching(message) });
      expect(refused.body.error.message).not.toContain(token);
    }
    expect((await keysOfDrive()).length).toBe(keysBefore);
    // A drive with no rules at all answers the same way as one whose rules name other issuers.
    expect((await json<ErrorJson>(exchange({ drive: 'nobody', token: await issuer.sign(claims) }))).body.error.message).toMatch(/issuer \(iss\) is named by no live trust rule/);
  });

  it('answers a malformed request 400 or 422, naming the field and never the token', async () => {
    expect((await json<ErrorJson>(exchange('{'))).status).toBe(400);
    expect((await json<ErrorJson>(exchange({ drive: 'default' }))).body.error).toEqual(expect.objectContaining({ code: 'bad_request', message: 'token is required in the body' }));
    const short = await json<ErrorJson>(exchange({ drive: 'default', token: await issuer.sign({}), ttl_seconds: 59 }));
    expect(short.status).toBe(422);
    expect(short.body.error.message).toMatch(/ttl_seconds must be a whole number of seconds, 60 or more/);
    expect((await json<ErrorJson>(exchange({ drive: '../etc', token: 'x.y.z' }))).body.error).toEqual(expect.objectContaining({ code: 'validation_error' }));
  });

  it('caps the key\'s life by the rule; the key dies at its expires_at and answers 401 as an expired key', async () => {
    const rule = await addRule({ issuer: issuer.url, audience: 'short', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-write', prefix: '/short', max_ttl_seconds: 300 });
    const before = Date.now();
    const asked = await json<{ data: MintedJson }>(exchange({ drive: 'default', token: await issuer.sign({ aud: 'short' }), ttl_seconds: 120 }));
    expect(Date.parse(asked.body.data.expires_at)).toBeGreaterThanOrEqual(before + 120_000);
    expect(Date.parse(asked.body.data.expires_at)).toBeLessThanOrEqual(Date.now() + 120_000);
    const capped = await json<{ data: MintedJson }>(exchange({ drive: 'default', token: await issuer.sign({ aud: 'short' }), ttl_seconds: 100_000 }));
    expect(Date.parse(capped.body.data.expires_at)).toBeLessThanOrEqual(Date.now() + 300_000);

    const job = new DriveClient(host.url, asked.body.data.key);
    expect((await job.createFolder({ path: '/short/a' })).status).toBe(200);
    const keyId = (await keysOfDrive()).find((key) => key.trust_id === rule.id && key.expires_at === asked.body.data.expires_at)!.id;
    // A second still to live: the key works.
    await setKeyExpiry(host.dataDir, keyId, new Date(Date.now() + 60_000));
    expect((await job.list({ folder: '/short' })).status).toBe(200);
    // Its end passed: 401, as a key no live record holds.
    await setKeyExpiry(host.dataDir, keyId, new Date(Date.now() - 1));
    expect(await json<ErrorJson>(job.list({ folder: '/short' }))).toEqual({ status: 401, body: { error: expect.objectContaining({ code: 'unauthorized', message: 'the API key is not valid' }) } });
    // The other key of the same rule lives on.
    expect((await new DriveClient(host.url, capped.body.data.key).list({ folder: '/short' })).status).toBe(200);
  });

  it('revoking the rule kills the keys minted under it and admits no more tokens', async () => {
    const own = await TestIssuer.start();
    try {
      const rule = await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-write', prefix: '/revoked' });
      const first = await json<{ data: MintedJson }>(exchange({ drive: 'default', token: await own.sign({}) }));
      const second = await json<{ data: MintedJson }>(exchange({ drive: 'default', token: await own.sign({}) }));
      for (const minted of [first, second]) expect((await new DriveClient(host.url, minted.body.data.key).createFolder({ path: '/revoked' })).status).toBe(200);

      expect((await admin().request('DELETE', `/drive/trust/${rule.id}`)).status).toBe(200);
      for (const minted of [first, second]) expect((await new DriveClient(host.url, minted.body.data.key).list({ folder: '/revoked' })).status).toBe(401);
      expect((await keysOfDrive()).filter((key) => key.trust_id === rule.id).map((key) => key.revoked_at)).toEqual([expect.any(String), expect.any(String)]);
      expect((await json<ErrorJson>(exchange({ drive: 'default', token: await own.sign({}) }))).body.error.message).toMatch(/issuer \(iss\) is named by no live trust rule/);
    } finally {
      await own.stop();
    }
  });

  it('lets a key minted anew under the same rule for the same subject finish a large upload; no other key sees the session', async () => {
    const own = await TestIssuer.start();
    try {
      // Prepare: two rules for one repository's branches, told apart by a claim; a session begun by one key.
      const rule = await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/*', claims: { workflow: 'etl' }, role: 'read-write', prefix: '/big' });
      await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/*', claims: { workflow: 'other' }, role: 'read-write', prefix: '/big' });
      const mint = async (claims: Record<string, unknown>) => {
        const minted = await json<{ data: MintedJson }>(exchange({ drive: 'default', token: await own.sign({ workflow: 'etl', ...claims }) }));
        expect(minted.status).toBe(200);
        return { client: new DriveClient(host.url, minted.body.data.key), trustId: minted.body.data.trust_id };
      };
      const first = await mint({});
      const started = await json<{ data: { upload_id: string; parts: { number: number; url: string }[] } }>(send(first.client, 'POST', '/drive/uploads', { folder: '/big', name: 'night.bin', size: 5 }));
      expect(started.status).toBe(200);
      const id = started.body.data.upload_id;
      const put = await fetch(started.body.data.parts[0].url, { method: 'PUT', body: Buffer.from('hello') });
      expect(put.status).toBe(200);
      const parts = [{ number: 1, etag: put.headers.get('etag') }];

      // Act: the job's key nears its end and it exchanges again (same rule, same subject); others try too.
      const renewed = await mint({});
      const otherBranch = await mint({ sub: 'repo:acme/etl:ref:refs/heads/dev' });
      const otherRule = await mint({ workflow: 'other' });
      expect([renewed.trustId, otherBranch.trustId, otherRule.trustId]).toEqual([rule.id, rule.id, expect.not.stringMatching(rule.id)]);

      // Assess: to every other key, even of the same rule or with the drive's whole reach, the session does not exist.
      for (const stranger of [otherBranch.client, otherRule.client, new DriveClient(host.url, WRITER)]) {
        expect((await stranger.request('GET', `/drive/uploads/${id}/parts`)).status).toBe(404);
        expect((await send(stranger, 'POST', `/drive/uploads/${id}/complete`, { parts })).status).toBe(404);
      }
      expect((await renewed.client.request('GET', `/drive/uploads/${id}/parts`)).status).toBe(200);
      expect((await send(renewed.client, 'POST', `/drive/uploads/${id}/complete`, { parts })).status).toBe(200);
      expect(await (await admin().download({ path: '/big/night.bin' })).text()).toBe('hello');
    } finally {
      await own.stop();
    }
  });

  it('replays a job\'s answer to its retry sent with a key minted anew (same rule, same subject); no other key gets it', async () => {
    const own = await TestIssuer.start();
    try {
      // Prepare: a rule for one repository's branches; the job uploads with an Idempotency-Key, and its reply is lost
      const rule = await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/*', role: 'read-write', prefix: '/nightly' });
      const mint = async (claims: Record<string, unknown> = {}) => {
        const minted = await json<{ data: MintedJson }>(exchange({ drive: 'default', token: await own.sign(claims) }));
        expect(minted.body.data.trust_id).toBe(rule.id);
        return new DriveClient(host.url, minted.body.data.key);
      };
      // The same bytes on every try, as a client's retry sends them (a fixed multipart boundary).
      const boundary = 'federation0idempotency0boundary';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="run.csv"\r\nContent-Type: text/csv\r\n\r\na,b\r\n--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n[{"folder":"/nightly"}]\r\n--${boundary}--\r\n`;
      const upload = async (client: DriveClient, key: string) => {
        const res = await client.request('POST', '/drive/upload', { body, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Idempotency-Key': key } });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
      };
      const idempotencyKey = 'nightly-2026-11-27-batch-1';
      const first = await upload(await mint(), idempotencyKey);

      // Act: the job's key nears its end; it exchanges again and retries; a job of another branch, and an
      // ordinary key of the drive, send the same Idempotency-Key
      const retry = await upload(await mint(), idempotencyKey);
      const otherBranch = await upload(await mint({ sub: 'repo:acme/etl:ref:refs/heads/dev' }), idempotencyKey);
      const ordinary = await upload(new DriveClient(host.url, WRITER), idempotencyKey);

      // Assess: the renewed key gets the first answer, replayed, and the upload ran once for the job
      expect(first.status).toBe(200);
      expect(retry).toEqual({ status: 200, replayed: 'true', text: first.text });
      expect([otherBranch.status, otherBranch.replayed, ordinary.status, ordinary.replayed]).toEqual([200, null, 200, null]);
      expect(otherBranch.text).not.toBe(first.text);
    } finally {
      await own.stop();
    }
  });

  it('fetches an issuer\'s keys once for a burst of exchanges, and uses them for each of its algorithms', async () => {
    const own = await TestIssuer.start();
    try {
      await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-only' });
      const tokens = await Promise.all(Array.from({ length: 8 }, () => own.sign({})));
      const answers = await Promise.all(tokens.map((token) => exchange({ drive: 'default', token })));
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
      expect(own.requests).toEqual(['/.well-known/openid-configuration', '/jwks']);
      // ES256 too, from the same cached set.
      expect((await exchange({ drive: 'default', token: await own.sign({}, { alg: 'ES256' }) })).status).toBe(200);
      expect(own.requests).toHaveLength(2);
    } finally {
      await own.stop();
    }
  });
});

describe('POST /drive/token against an issuer that is down, slow or hostile', () => {
  const rejected = async (behaviour: TestIssuer['behaviour']) => {
    const own = await TestIssuer.start();
    try {
      await addRule({ issuer: own.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-only' });
      own.behaviour = behaviour;
      return await json<ErrorJson>(exchange({ drive: 'default', token: await own.sign({}) }));
    } finally {
      await own.stop();
    }
  };

  it('answers 503 when the issuer cannot be reached', async () => {
    const port = await closedPort();
    const down = `http://127.0.0.1:${port}`;
    await addRule({ issuer: down, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-only' });
    const token = await issuer.sign({ iss: down });
    const answer = await json<ErrorJson>(exchange({ drive: 'default', token }));
    expect(answer.status).toBe(503);
    expect(answer.body.error).toEqual(expect.objectContaining({ code: 'internal_error', message: "the token's issuer could not be reached for its discovery document; retry later" }));
  });

  it('answers 503 when the issuer answers 5xx, or not at all within its 3 s', async () => {
    expect(await rejected({ kind: 'status', status: 502 })).toEqual({ status: 503, body: { error: expect.objectContaining({ message: "the token's issuer answered 502 for its discovery document; retry later" }) } });
    expect(await rejected({ kind: 'silent' })).toEqual({ status: 503, body: { error: expect.objectContaining({ message: "the token's issuer did not answer: its discovery document took longer than 3 s; retry later" }) } });
  });

  it('refuses a JWKS past the size cap, one of the wrong types, and a discovery document naming another issuer, with a 401', async () => {
    expect(await rejected({ kind: 'huge-jwks', bytes: 200_000 })).toEqual({ status: 401, body: { error: expect.objectContaining({ message: "the issuer's JWKS is larger than 64 KiB, the most Drive reads" }) } });
    expect(await rejected({ kind: 'wrong-types' })).toEqual({ status: 401, body: { error: expect.objectContaining({ message: expect.stringMatching(/the issuer's JWKS is not a key set/) }) } });
    expect(await rejected({ kind: 'other-issuer' })).toEqual({ status: 401, body: { error: expect.objectContaining({ message: expect.stringMatching(/names another issuer/) }) } });
    expect(await rejected({ kind: 'status', status: 404 })).toEqual({ status: 401, body: { error: expect.objectContaining({ message: "the token's issuer has no discovery document (it answered 404)" }) } });
  });
});

describe('POST /drive/token rate limits', () => {
  let limited: RunningHost;

  beforeAll(async () => {
    // Three a minute, on a stopped clock: the fourth is refused however slow the machine.
    limited = await startHost({ DRIVE_RATE_LIMITS: 'token=3', DRIVE_LOCAL_CLOCK: 'frozen', DRIVE_API_KEYS: `default:${ADMIN}:admin` });
  });

  afterAll(async () => {
    if (limited) await stopHost(limited);
  });

  /** An exchange of `token` (junk unless given) sent from `address` (on loopback) to `drive`. */
  const from = (address: string, drive: string, token = 'not-a-jwt') => exchangeFrom(limited.url, address, { drive, token });

  it('keeps a bucket per source address, taken before the token is looked at, and charges no drive for junk', async () => {
    for (let i = 0; i < 3; i++) expect((await from('127.0.0.1', 'a')).status).toBe(401);
    // Address 127.0.0.1's bucket is empty, whichever drive it asks for.
    const address = await from('127.0.0.1', 'b');
    expect(address.status).toBe(429);
    expect(address.body.error.message).toMatch(/for token exchanges from this address exceeded/);
    // Junk that is not a JWT cost drive a nothing: another address is still let through to the token check.
    expect((await from('127.0.0.2', 'a')).status).toBe(401);
  });

  it('keeps a bucket per drive, ten times the address\'s, taken only for a token naming an issuer of its rules', async () => {
    // Prepare: anyone can write a token naming a drive's (public) issuer; its signature fails only once the keys are fetched.
    await addRule({ issuer: issuer.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-only' }, new DriveClient(limited.url, ADMIN));
    const forged = unsignedToken({ alg: 'RS256', kid: 'forged' }, { iss: issuer.url, aud: 'drive', sub: 'repo:acme/etl:ref:refs/heads/main' }, 'AAAA');
    // Act: ten addresses spend their own 3 each: the drive's 30.
    for (let n = 10; n < 20; n++) {
      for (let i = 0; i < 3; i++) expect((await from(`127.0.0.${n}`, 'default', forged)).status).toBe(401);
    }
    const drive = await from('127.0.0.20', 'default', forged);
    // Assess
    expect(drive.status).toBe(429);
    expect(drive.body.error.message).toMatch(/^rate limit of 30 requests per minute for token exchanges to this drive exceeded/);
    // Junk is refused before the drive's bucket, as a 401 that names what is wrong with it.
    expect((await from('127.0.0.21', 'default')).body.error.message).toMatch(/the token is not a JWT/);
  });
});

import { NOT_TRUSTED, OidcVerifier } from '../../../functions/http/oidc-verifier';
import { DriveError } from '../../../functions/core/errors';
import { TestIssuer, signingKey } from '../../support/oidc-issuer';

// The verifier against an issuer on loopback, its clock driven by the test: a cache's age is never the machine's speed.

let issuer: TestIssuer;
let now: number;
let verifier: OidcVerifier;

beforeEach(async () => {
  issuer = await TestIssuer.start();
  now = Date.now();
  verifier = new OidcVerifier({ loopback: true, clock: () => now });
});

afterEach(async () => {
  await issuer.stop();
});

const trusted = () => new Set([issuer.url]);
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (failure: unknown) => failure);
  expect(error).toBeInstanceOf(DriveError);
  return { status: (error as DriveError).status, message: (error as DriveError).message };
};

describe('Class: OidcVerifier', () => {
  describe('Method: verify', () => {
    it('returns the claims of a token its issuer signed, from keys fetched once', async () => {
      const claims = await verifier.verify(await issuer.sign({ aud: ['drive', 'other'] }), trusted(), new Date());
      expect(claims).toEqual(expect.objectContaining({ issuer: issuer.url, audiences: ['drive', 'other'], subject: 'repo:acme/etl:ref:refs/heads/main' }));
      await verifier.verify(await issuer.sign({}, { alg: 'ES256' }), trusted(), new Date());
      expect(issuer.requests).toEqual(['/.well-known/openid-configuration', '/jwks']);
    });

    it('fetches the keys again for a kid it has not seen, but not more than once in 30 s of its clock', async () => {
      await verifier.verify(await issuer.sign({}), trusted(), new Date());
      await issuer.rotate('rsa-2');
      const rotated = await issuer.sign({});
      now += 10_000;
      expect(await refusal(verifier.verify(rotated, trusted(), new Date()))).toEqual({ status: 401, message: NOT_TRUSTED });
      expect(issuer.requests).toHaveLength(2);
      now += 20_000;
      await expect(verifier.verify(rotated, trusted(), new Date())).resolves.toEqual(expect.objectContaining({ issuer: issuer.url }));
      expect(issuer.requests).toHaveLength(4);
    });

    it('tells an untrusted issuer from a trusted one by nothing before the signature is verified', async () => {
      // Prepare: forged tokens anyone can make, naming a trusted issuer and an untrusted one.
      const stranger = await signingKey('RS256', 'rsa-1');
      const untrusted = await issuer.sign({ iss: 'https://token.actions.githubusercontent.com' }, { key: stranger.privateKey });
      const badSignature = await issuer.sign({}, { key: stranger.privateKey });
      const unknownKid = await issuer.sign({}, { key: stranger.privateKey, kid: 'unknown-kid' });
      const brokenSignature = `${(await issuer.sign({})).split('.').slice(0, 2).join('.')}.!!`;

      // Act
      const refusals = await Promise.all([untrusted, badSignature, unknownKid, brokenSignature].map((token) => refusal(verifier.verify(token, trusted(), new Date()))));

      // Assess: one answer for all four, and it still says which check failed.
      expect(refusals).toEqual(Array(4).fill({ status: 401, message: NOT_TRUSTED }));
      expect(NOT_TRUSTED).toMatch(/issuer \(iss\).*kid.*signature/);
    });

    it('fetches stale keys again after 10 minutes of its clock', async () => {
      await verifier.verify(await issuer.sign({}), trusted(), new Date());
      now += 9 * 60_000;
      await verifier.verify(await issuer.sign({}), trusted(), new Date());
      expect(issuer.requests).toHaveLength(2);
      now += 2 * 60_000;
      await verifier.verify(await issuer.sign({}), trusted(), new Date());
      expect(issuer.requests).toHaveLength(4);
    });

    it('answers 503 for an issuer that fails, and does not ask it again for 5 s of its clock', async () => {
      issuer.behaviour = { kind: 'status', status: 500 };
      const token = await issuer.sign({});
      expect(await refusal(verifier.verify(token, trusted(), new Date()))).toEqual({ status: 503, message: "the token's issuer answered 500 for its discovery document; retry later" });
      expect(await refusal(verifier.verify(token, trusted(), new Date()))).toEqual(expect.objectContaining({ status: 503 }));
      expect(issuer.requests).toHaveLength(1);
      issuer.behaviour = { kind: 'ok' };
      now += 5_000;
      await expect(verifier.verify(token, trusted(), new Date())).resolves.toEqual(expect.objectContaining({ issuer: issuer.url }));
    });

    it('times out an issuer that does not answer', async () => {
      issuer.behaviour = { kind: 'silent' };
      const quick = new OidcVerifier({ loopback: true, timeoutMs: 200, clock: () => now });
      expect(await refusal(quick.verify(await issuer.sign({}), trusted(), new Date()))).toEqual({ status: 503, message: "the token's issuer did not answer: its discovery document took longer than 0.2 s; retry later" });
    });

    it('refuses a plain-http jwks_uri where loopback issuers are not allowed (the stack)', async () => {
      const stack = new OidcVerifier({ loopback: false, clock: () => now });
      expect(await refusal(stack.verify(await issuer.sign({}), trusted(), new Date()))).toEqual({ status: 401, message: "the issuer's discovery document has no https jwks_uri" });
    });

    it('checks exp and nbf against the time it is given, with 60 s of skew', async () => {
      const token = await issuer.sign({ exp: Math.floor(now / 1000) + 300 });
      await expect(verifier.verify(token, trusted(), new Date(now + 330_000))).resolves.toBeDefined();
      expect(await refusal(verifier.verify(token, trusted(), new Date(now + 400_000)))).toEqual({ status: 401, message: 'the token has expired (exp)' });
    });
  });
});

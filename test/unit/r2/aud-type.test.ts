import { OidcVerifier } from '../../../functions/http/oidc-verifier';
import { exchangeToken } from '../../../functions/core/token-exchange';
import { DriveError } from '../../../functions/core/errors';
import type { TrustRule } from '../../../functions/core/trust';
import { TestIssuer } from '../../support/oidc-issuer';

// r2 finding: jose checks `aud`'s type only when given an `audience` option, which the verifier never passes.
// A signed token whose `aud` is a number or an object reaches `audiences.includes` and throws a TypeError (a 500),
// where the issue asks for a 401 ("hostile (huge, wrong types) ... never a 5xx crash").

let issuer: TestIssuer;
beforeEach(async () => { issuer = await TestIssuer.start(); });
afterEach(async () => { await issuer.stop(); });

const rule = (): TrustRule => ({ id: '0123456789abcdef', issuer: issuer.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', claims: {}, role: 'upload-only', prefix: '/ingest', maxTtlSeconds: 3600, createdAt: new Date().toISOString() });

it.each([[5], [{ drive: true }]])('refuses a token whose aud is %j with a 401, never a TypeError', async (aud) => {
  const verifier = new OidcVerifier({ loopback: true });
  const trust = { rules: async () => [rule()], mint: jest.fn(), revokeSecret: jest.fn() };
  const error = await exchangeToken({ trust, verifier }, { drive: 'default', token: await issuer.sign({ aud }) }, new Date()).then(() => undefined, (failure: unknown) => failure);
  expect(error).toBeInstanceOf(DriveError);
  expect((error as DriveError).status).toBe(401);
  expect(trust.mint).not.toHaveBeenCalled();
});

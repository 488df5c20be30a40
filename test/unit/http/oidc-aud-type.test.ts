import type { ApiKeyRecord } from '../../../functions/core/access';
import { OidcVerifier } from '../../../functions/http/oidc-verifier';
import { exchangeToken } from '../../../functions/core/token-exchange';
import { DriveError } from '../../../functions/core/errors';
import type { TrustRule } from '../../../functions/core/trust';
import { TestIssuer } from '../../support/oidc-issuer';

// Review r2: jose checks `aud`'s type only when given an `audience` option, which the verifier never passes. A
// signed token whose `aud` is a number or an object reached `audiences.includes` and threw a TypeError (a 500),
// where the issue asks for a 401 ("hostile (huge, wrong types) ... never a 5xx crash").

describe('OidcVerifier: a signed token whose aud is not a string or a list of strings', () => {
  let issuer: TestIssuer;
  beforeEach(async () => { issuer = await TestIssuer.start(); });
  afterEach(async () => { await issuer.stop(); });

  const rule = (): TrustRule => ({ id: '0123456789abcdef', issuer: issuer.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', claims: {}, role: 'upload-only', prefix: '/ingest', maxTtlSeconds: 3600, createdAt: new Date().toISOString() });

  it.each([[5], [{ drive: true }], [['drive', 5]], [[['drive']]], [null]])('is refused with a 401 naming the aud check when aud is %j, never a TypeError', async (aud) => {
    // Prepare
    const verifier = new OidcVerifier({ loopback: true });
    const trust = { rules: async () => [rule()], mint: jest.fn(), revokeSecret: jest.fn() };
    // Act
    const error = await exchangeToken({ trust, verifier }, { drive: 'default', token: await issuer.sign({ aud }) }, new Date()).then(() => undefined, (failure: unknown) => failure);
    // Assess
    expect(error).toBeInstanceOf(DriveError);
    expect((error as DriveError).status).toBe(401);
    expect((error as DriveError).message).toBe('the token\'s audience (aud) must be a string or an array of strings');
    expect(trust.mint).not.toHaveBeenCalled();
  });

  it('still admits an aud that is a list of strings holding the rule\'s audience', async () => {
    const verifier = new OidcVerifier({ loopback: true });
    const trust = { rules: async () => [rule()], mint: jest.fn(async () => ({ record: {} as ApiKeyRecord, secret: 's' })), revokeSecret: jest.fn() };
    await exchangeToken({ trust, verifier }, { drive: 'default', token: await issuer.sign({ aud: ['other', 'drive'] }) }, new Date());
    expect(trust.mint).toHaveBeenCalledTimes(1);
  });
});

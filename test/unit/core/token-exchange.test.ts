import type { ApiKeyRecord } from '../../../functions/core/access';
import { DriveError } from '../../../functions/core/errors';
import { type TrustStore, type Verifier, exchangeToken } from '../../../functions/core/token-exchange';
import type { TrustRule, VerifiedClaims } from '../../../functions/core/trust';

const ISSUER = 'https://token.actions.githubusercontent.com';
const rule = (id: string, changes: Partial<TrustRule> = {}): TrustRule => ({
  id,
  issuer: ISSUER,
  audience: 'drive',
  subject: 'repo:acme/etl:ref:refs/heads/*',
  claims: {},
  role: 'upload-only',
  prefix: '/ingest',
  maxTtlSeconds: 900,
  createdAt: '2026-03-02T09:30:00.000Z',
  ...changes,
});
const CLAIMS: VerifiedClaims = { issuer: ISSUER, audiences: ['drive'], subject: 'repo:acme/etl:ref:refs/heads/main', claims: {} };
const NOW = new Date('2026-03-02T10:00:00.000Z');

/** A drive's rules in memory; `afterMint` changes them the moment a key is stored (a revoke racing the exchange). */
class MemoryTrust implements TrustStore {
  readonly minted: { secret: string; record: ApiKeyRecord; revoked: boolean }[] = [];
  afterMint: () => void = () => undefined;
  constructor(public held: TrustRule[]) {}
  async rules(): Promise<TrustRule[]> {
    return this.held.map((held) => ({ ...held }));
  }
  async mint(minting: { drive: string; rule: TrustRule; subject: string; expiresAt: Date }) {
    const secret = `drv_${this.minted.length}`;
    const record: ApiKeyRecord = { keyId: `k${this.minted.length}`, drive: minting.drive, role: minting.rule.role, prefix: minting.rule.prefix, name: `trust ${minting.rule.id}`, createdAt: NOW.toISOString(), last4: secret.slice(-4), trustId: minting.rule.id, subject: minting.subject, expiresAt: minting.expiresAt.toISOString() };
    this.minted.push({ secret, record, revoked: false });
    this.afterMint();
    return { record, secret };
  }
  async revokeSecret(secret: string): Promise<void> {
    this.minted.find((key) => key.secret === secret)!.revoked = true;
  }
}

/** A verifier whose tokens all carry `claims`: screened by issuer alone, and `verify` counted (it is what asks the issuer). */
const verifier = (claims: VerifiedClaims = CLAIMS): Verifier & { verified: number } => {
  const screen = (_token: string, trusted: ReadonlySet<string>): string => {
    if (!trusted.has(claims.issuer)) throw new DriveError('unauthorized', 'untrusted issuer');
    return claims.issuer;
  };
  const fake = { verified: 0, screen, verify: async (token: string, trusted: ReadonlySet<string>) => {
    screen(token, trusted);
    fake.verified++;
    return claims;
  } };
  return fake;
};

describe('Function: exchangeToken', () => {
  it('mints under the oldest live rule that matches, for the rule\'s cap or less', async () => {
    const trust = new MemoryTrust([rule('a', { revokedAt: NOW.toISOString(), role: 'read-write' }), rule('b', { audience: 'other' }), rule('c'), rule('d', { role: 'read-only' })]);
    const minted = await exchangeToken({ trust, verifier: verifier() }, { drive: 'default', token: 't' }, NOW);
    expect(minted.rule.id).toBe('c');
    expect(minted.record).toEqual(expect.objectContaining({ role: 'upload-only', prefix: '/ingest', trustId: 'c', subject: CLAIMS.subject, expiresAt: '2026-03-02T10:15:00.000Z' }));
    const shorter = await exchangeToken({ trust, verifier: verifier() }, { drive: 'default', token: 't', ttlSeconds: 60 }, NOW);
    expect(shorter.record.expiresAt).toBe('2026-03-02T10:01:00.000Z');
  });

  it('takes back a key whose rule was revoked while it was minted, and answers 401', async () => {
    const trust = new MemoryTrust([rule('c')]);
    trust.afterMint = () => (trust.held = [rule('c', { revokedAt: NOW.toISOString() })]);
    await expect(exchangeToken({ trust, verifier: verifier() }, { drive: 'default', token: 't' }, NOW)).rejects.toEqual(
      expect.objectContaining({ code: 'unauthorized', message: 'the trust rule that matched the token was revoked meanwhile' }),
    );
    expect(trust.minted.map((key) => key.revoked)).toEqual([true]);
  });

  it('says whether the audience or the subject and claims failed, and mints nothing', async () => {
    const trust = new MemoryTrust([rule('c', { claims: { environment: 'prod' } })]);
    await expect(exchangeToken({ trust, verifier: verifier({ ...CLAIMS, audiences: ['other'] }) }, { drive: 'default', token: 't' }, NOW)).rejects.toEqual(
      expect.objectContaining({ message: "the token's audience (aud) matches no trust rule of its issuer" }),
    );
    await expect(exchangeToken({ trust, verifier: verifier() }, { drive: 'default', token: 't' }, NOW)).rejects.toEqual(
      expect.objectContaining({ message: "the token's subject (sub) and claims match no trust rule of its issuer and audience" }),
    );
    expect(trust.minted).toEqual([]);
  });

  it('charges the drive only for a token that passed the free checks, before its issuer is asked', async () => {
    // Prepare
    const charged: number[] = [];
    const screened = verifier();
    const chargeDrive = async () => { charged.push(screened.verified); };
    // Act: a token of an issuer no live rule names, then one of a rule's issuer.
    await expect(exchangeToken({ trust: new MemoryTrust([rule('c', { issuer: 'https://elsewhere.example' })]), verifier: screened, chargeDrive }, { drive: 'default', token: 't' }, NOW)).rejects.toEqual(
      expect.objectContaining({ code: 'unauthorized' }),
    );
    await exchangeToken({ trust: new MemoryTrust([rule('c')]), verifier: screened, chargeDrive }, { drive: 'default', token: 't' }, NOW);
    // Assess: one charge, taken while the issuer had not yet been asked.
    expect(charged).toEqual([0]);
    expect(screened.verified).toBe(1);
  });

  it('asks the issuer nothing when the drive\'s bucket refuses', async () => {
    const screened = verifier();
    const chargeDrive = async () => { throw new DriveError('rate_limited', 'rate limit of 600 requests per minute for token exchanges to this drive exceeded; retry in 1 second'); };
    await expect(exchangeToken({ trust: new MemoryTrust([rule('c')]), verifier: screened, chargeDrive }, { drive: 'default', token: 't' }, NOW)).rejects.toEqual(expect.objectContaining({ code: 'rate_limited' }));
    expect(screened.verified).toBe(0);
  });
});

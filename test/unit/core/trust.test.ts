import { issuerProblem, keyLifeSeconds, ruleAdmits, subjectMatches, type TrustRule } from '../../../functions/core/trust';

const RULE: TrustRule = {
  id: '0123456789abcdef',
  issuer: 'https://token.actions.githubusercontent.com',
  audience: 'drive',
  subject: 'repo:acme/etl:ref:refs/heads/main',
  claims: {},
  role: 'upload-only',
  prefix: '/ingest',
  maxTtlSeconds: 3600,
  createdAt: '2026-03-02T09:30:00.000Z',
};
const TOKEN = { issuer: RULE.issuer, audiences: ['drive'], subject: RULE.subject, claims: { repository_owner: 'acme', ref_protected: true, run_attempt: 2 } };

describe('Module: functions/core/trust', () => {
  describe('Function: subjectMatches', () => {
    it.each([
      ['repo:acme/etl:ref:refs/heads/main', 'repo:acme/etl:ref:refs/heads/main', true],
      ['repo:acme/etl:ref:refs/heads/main', 'repo:acme/etl:ref:refs/heads/mainx', false],
      ['repo:acme/etl:ref:refs/heads/*', 'repo:acme/etl:ref:refs/heads/feature/x', true],
      ['repo:acme/etl:ref:refs/heads/*', 'repo:acme/etl:ref:refs/heads/', true],
      ['repo:acme/*:ref:refs/heads/main', 'repo:acme/web:ref:refs/heads/main', true],
      // `*` never crosses a segment.
      ['repo:acme/*:ref:refs/heads/main', 'repo:acme/web:x:ref:refs/heads/main', false],
      ['repo:*', 'repo:acme/etl:ref:refs/heads/main', false],
      ['repo:acme/etl:*:*', 'repo:acme/etl:environment:prod', true],
      // Regular-expression characters stand for themselves.
      ['repo:acme/e.l:ref:refs/heads/main', 'repo:acme/etl:ref:refs/heads/main', false],
      ['system:serviceaccount:etl:(uploader)*', 'system:serviceaccount:etl:(uploader)-7', true],
    ])('%s against %s: %s', (pattern, subject, matches) => {
      expect(subjectMatches(pattern, subject)).toBe(matches);
    });
  });

  describe('Function: ruleAdmits', () => {
    it('admits a token whose issuer, audience (one of its list), subject and claims all match', () => {
      expect(ruleAdmits(RULE, TOKEN)).toBe(true);
      expect(ruleAdmits(RULE, { ...TOKEN, audiences: ['other', 'drive'] })).toBe(true);
      expect(ruleAdmits({ ...RULE, claims: { repository_owner: 'acme', ref_protected: 'true', run_attempt: '2' } }, TOKEN)).toBe(true);
    });

    it('refuses any one of them that differs, and a revoked rule', () => {
      expect(ruleAdmits(RULE, { ...TOKEN, issuer: 'https://gitlab.com' })).toBe(false);
      expect(ruleAdmits(RULE, { ...TOKEN, audiences: ['other'] })).toBe(false);
      expect(ruleAdmits(RULE, { ...TOKEN, subject: 'repo:acme/etl:ref:refs/heads/dev' })).toBe(false);
      expect(ruleAdmits({ ...RULE, claims: { repository_owner: 'evil' } }, TOKEN)).toBe(false);
      expect(ruleAdmits({ ...RULE, claims: { environment: 'prod' } }, TOKEN)).toBe(false);
      expect(ruleAdmits({ ...RULE, claims: { nested: '[object Object]' } }, { ...TOKEN, claims: { nested: {} } })).toBe(false);
      expect(ruleAdmits({ ...RULE, revokedAt: '2026-03-02T10:00:00.000Z' }, TOKEN)).toBe(false);
    });
  });

  describe('Function: keyLifeSeconds', () => {
    it('is what the job asks, capped by the rule, and the cap when it asks nothing', () => {
      expect(keyLifeSeconds(120, 300)).toBe(120);
      expect(keyLifeSeconds(43_200, 300)).toBe(300);
      expect(keyLifeSeconds(undefined, 900)).toBe(900);
    });
  });

  describe('Function: issuerProblem', () => {
    it('takes https issuers, and http loopback ones only where loopback is allowed (the local host)', () => {
      expect(issuerProblem('https://token.actions.githubusercontent.com', false)).toBeUndefined();
      expect(issuerProblem('https://oidc.eks.eu-west-1.amazonaws.com/id/ABC', false)).toBeUndefined();
      expect(issuerProblem('http://127.0.0.1:8080', true)).toBeUndefined();
      expect(issuerProblem('http://localhost:8080', true)).toBeUndefined();
      expect(issuerProblem('http://127.0.0.1:8080', false)).toMatch(/must be an https URL/);
      expect(issuerProblem('http://localhost', true)).toMatch(/must be an https URL/);
      expect(issuerProblem('http://10.0.0.1:8080', true)).toMatch(/must be an https URL/);
      expect(issuerProblem('https://issuer.example.com/?x=1', false)).toMatch(/without query/);
      expect(issuerProblem('not a url', false)).toMatch(/must be an https URL/);
    });

    it('refuses whitespace and control characters anywhere, which the URL parser would drop or trim unseen', () => {
      // Prepare: issuers `new URL` takes, but whose text no token's iss would ever equal.
      const sneaky = [' https://a.example', 'https://a.example ', 'https://a.exam\tple', 'https://a.example/\n', 'https://a.example/\u0000', 'https://a.example/\u0085', 'https://a.example/\u00a0x'];
      for (const issuer of sneaky) {
        // Act and assess
        expect({ issuer, problem: issuerProblem(issuer, true) }).toEqual({ issuer, problem: 'issuer must be an https URL without whitespace or control characters' });
      }
    });
  });
});

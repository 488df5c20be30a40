import { type ApiKey, type TrustRule, claimsFrom, fieldNamed, formatLife, liveKeysUnder, ruleFromForm, timeLeft } from '../../../dashboard/trust-rules.js';

const NOW = Date.parse('2026-03-02T09:30:00.000Z');

function rule(id: string, revoked_at: string | null = null): TrustRule {
  return {
    id,
    issuer: 'https://token.actions.githubusercontent.com',
    audience: 'drive',
    subject: 'repo:acme/etl:ref:refs/heads/*',
    claims: {},
    role: 'upload-only',
    prefix: '/ingest',
    max_ttl_seconds: 900,
    created_at: '2026-03-01T00:00:00.000Z',
    revoked_at,
  };
}

function key(id: string, fields: Partial<ApiKey> = {}): ApiKey {
  return { id, name: `trust ${fields.trust_id ?? ''}`, role: 'upload-only', prefix: '/ingest', created_at: '2026-03-02T09:00:00.000Z', last_used_at: null, last4: 'abcd', revoked_at: null, ...fields };
}

const form = (fields: Partial<Parameters<typeof ruleFromForm>[0]> = {}) => ({
  issuer: ' https://token.actions.githubusercontent.com ',
  audience: 'drive',
  subject: 'repo:acme/etl:ref:refs/heads/main',
  claims: '',
  role: 'upload-only',
  prefix: '',
  maxTtl: '',
  ...fields,
});

describe('Module: dashboard/trust-rules', () => {
  describe('Function: fieldNamed', () => {
    it('finds the field an API message starts with, as the create-trust route words them', () => {
      expect(fieldNamed('issuer must be an https URL, like "https://token.actions.githubusercontent.com"')).toBe('issuer');
      expect(fieldNamed('audience is required in the body')).toBe('audience');
      expect(fieldNamed('subject may hold "*" but not "**": one "*" already matches any run of characters within a segment')).toBe('subject');
      expect(fieldNamed('max_ttl_seconds must be a whole number from 60 to 43200 (12 hours)')).toBe('max_ttl_seconds');
      expect(fieldNamed('prefix must start with "/" (got "ingest")')).toBe('prefix');
      expect(fieldNamed('role must be one of upload-only, read-write, read-only; a trust rule never grants admin (got "admin")')).toBe('role');
    });

    it('takes a member of a field as the field (claims.x), but not a longer word that begins with one', () => {
      expect(fieldNamed('claims.repository_owner must be a string')).toBe('claims');
      expect(fieldNamed('claims[0] must be a string')).toBe('claims');
      expect(fieldNamed('issuers are compared exactly')).toBeUndefined();
    });

    it('names no field for a message about the drive or the body as a whole', () => {
      expect(fieldNamed('this drive has 100 live trust rules, its most; revoke one first')).toBeUndefined();
      expect(fieldNamed('body has unknown field scope; allowed: issuer, audience, subject, claims, role, prefix, max_ttl_seconds')).toBeUndefined();
      expect(fieldNamed('Drive could not be reached. Check your connection and try again.')).toBeUndefined();
    });
  });

  describe('Function: claimsFrom', () => {
    it('reads one name=value a line, skipping blank lines and the spaces around each side', () => {
      expect(claimsFrom('repository_owner = acme\n\n  ref_protected=true  \r\nenvironment=prod=blue')).toEqual({
        ok: true,
        claims: { repository_owner: 'acme', ref_protected: 'true', environment: 'prod=blue' },
      });
      expect(claimsFrom('   \n')).toEqual({ ok: true, claims: {} });
    });

    it('keeps an empty value, which a token may carry', () => {
      expect(claimsFrom('job_workflow_ref=')).toEqual({ ok: true, claims: { job_workflow_ref: '' } });
    });

    it('refuses a line without a name and a name given twice, saying which line, under claims', () => {
      const noEquals = claimsFrom('repository_owner=acme\nref_protected');
      const noName = claimsFrom('=acme');
      const twice = claimsFrom('a=1\na=2');

      expect(noEquals).toEqual({ ok: false, message: 'claims must be written one a line as name=value (line 2 is not)' });
      expect(noName).toEqual({ ok: false, message: 'claims must be written one a line as name=value (line 1 is not)' });
      expect(twice).toEqual({ ok: false, message: 'claims give "a" twice (line 2): a token carries one value of each claim' });
      for (const refused of [noEquals, noName, twice]) expect(!refused.ok && fieldNamed(refused.message)).toBe('claims');
    });
  });

  describe('Function: ruleFromForm', () => {
    it('sends the fields filled in, trimmed, and leaves the optional ones out for their defaults', () => {
      expect(ruleFromForm(form())).toEqual({
        ok: true,
        rule: { issuer: 'https://token.actions.githubusercontent.com', audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'upload-only' },
      });
    });

    it('sends claims, a folder and a life in seconds when given', () => {
      const built = ruleFromForm(form({ claims: 'repository_owner=acme', prefix: '/ingest', maxTtl: ' 900 ' }));

      expect(built).toEqual({ ok: true, rule: expect.objectContaining({ claims: { repository_owner: 'acme' }, prefix: '/ingest', max_ttl_seconds: 900 }) });
    });

    it('leaves an empty required field out, so that the API says it is required rather than the page', () => {
      const built = ruleFromForm(form({ issuer: '  ', subject: '' }));

      expect(built.ok && Object.keys(built.rule)).toEqual(['audience', 'role']);
    });

    it('sends a life that is not a whole number as typed, for the API to say what it must be', () => {
      expect(ruleFromForm(form({ maxTtl: '1.5h' }))).toEqual({ ok: true, rule: expect.objectContaining({ max_ttl_seconds: '1.5h' }) });
      expect(ruleFromForm(form({ maxTtl: '30' }))).toEqual({ ok: true, rule: expect.objectContaining({ max_ttl_seconds: 30 }) });
    });

    it('names the claims field for claims it cannot read, and sends nothing', () => {
      expect(ruleFromForm(form({ claims: 'repository_owner' }))).toEqual({ ok: false, field: 'claims', message: 'claims must be written one a line as name=value (line 1 is not)' });
    });
  });

  describe('Function: liveKeysUnder', () => {
    it('keeps the keys minted under the rule that are neither revoked nor expired, the latest to expire first', () => {
      // Prepare
      const keys = [
        key('a000000000000001', { trust_id: 'r1', subject: 's', expires_at: '2026-03-02T09:40:00.000Z' }),
        key('a000000000000002', { trust_id: 'r1', subject: 's', expires_at: '2026-03-02T09:45:00.000Z' }),
        key('a000000000000003', { trust_id: 'r1', subject: 's', expires_at: '2026-03-02T09:30:00.000Z' }),
        key('a000000000000004', { trust_id: 'r1', subject: 's', expires_at: '2026-03-02T09:50:00.000Z', revoked_at: '2026-03-02T09:20:00.000Z' }),
        key('a000000000000005', { trust_id: 'r2', subject: 's', expires_at: '2026-03-02T09:50:00.000Z' }),
        key('a000000000000006'),
      ];

      // Act
      const live = liveKeysUnder(rule('r1'), keys, NOW);

      // Assess: the one ending at NOW has ended (the API answers 401 from that instant).
      expect(live.map((minted) => minted.id)).toEqual(['a000000000000002', 'a000000000000001']);
    });

    it('finds none under a rule with no minted keys', () => {
      expect(liveKeysUnder(rule('r3'), [key('a000000000000006')], NOW)).toEqual([]);
    });
  });

  describe('Function: timeLeft', () => {
    it('counts down to the second', () => {
      expect(timeLeft('2026-03-02T09:44:05.000Z', NOW)).toBe('14 min 05 s left');
      expect(timeLeft('2026-03-02T11:30:09.000Z', NOW)).toBe('2 h 00 min 09 s left');
      expect(timeLeft('2026-03-02T09:30:45.000Z', NOW)).toBe('45 s left');
      expect(timeLeft('2026-03-02T09:30:00.200Z', NOW)).toBe('1 s left');
    });

    it('says expired from the instant the key ends', () => {
      expect(timeLeft('2026-03-02T09:30:00.000Z', NOW)).toBe('expired');
      expect(timeLeft('2026-03-02T09:29:00.000Z', NOW)).toBe('expired');
      expect(timeLeft('not a time', NOW)).toBe('expired');
    });
  });

  describe('Function: formatLife', () => {
    it('says a key life in the largest units that are not zero', () => {
      expect([60, 90, 900, 3600, 5400, 43_200].map(formatLife)).toEqual(['1 min', '1 min 30 s', '15 min', '1 h', '1 h 30 min', '12 h']);
    });
  });
});

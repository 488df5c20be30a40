import { DriveClient } from '../support/api-client';
import { TestIssuer, exchangeFrom, unsignedToken } from '../support/oidc-issuer';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// Review r2: the keyless exchange took the per-drive bucket first and it was as small as the per-address one, so
// one source address sending junk drained its target drive's bucket: every real job of that drive, from any
// address, got 429 for as long as the junk kept coming. Now the address's bucket comes first, the drive's is
// taken only for a token that names an issuer of the drive's rules, and it holds ten times the address's.
// Review c25: the address's bucket was taken only once the body had been read as a token request, so bodies
// refused before (not JSON, no token, a drive that is no drive id) came from one address unlimited.

const ADMIN = 'r2-admin-Vq8WzN3kR5tYp2Lx7HcJ0mB4dF6g';
let limited: RunningHost;
let issuer: TestIssuer;

beforeAll(async () => {
  issuer = await TestIssuer.start();
  // Three a minute, on a stopped clock: the buckets never refill during the test, however slow the machine.
  limited = await startHost({ DRIVE_RATE_LIMITS: 'token=3', DRIVE_LOCAL_CLOCK: 'frozen', DRIVE_API_KEYS: `default:${ADMIN}:admin` });
});

afterAll(async () => {
  await issuer?.stop();
  if (limited) await stopHost(limited);
});

/** An exchange of `token` sent from `address` (on loopback) to `drive`. */
const from = (address: string, drive: string, token: string) => exchangeFrom(limited.url, address, { drive, token });

describe('POST /drive/token: one address cannot lock a drive\'s jobs out', () => {
  it('lets another address through after junk from one address, more than its own bucket holds', async () => {
    // The attacker: one address, more junk than its own bucket holds.
    for (let i = 0; i < 6; i++) await from('127.0.0.1', 'other', 'not-a-jwt');
    // The drive's real job, from another address, is let through to the token check (401 for this junk, not 429).
    const job = await from('127.0.0.3', 'other', 'not-a-jwt');
    expect(job.status).toBe(401);
  });

  it('lets another address through after one address spent its bucket on tokens naming the drive\'s issuer', async () => {
    // Prepare: a rule of drive default trusts the issuer; anyone can write a token naming it (and fail its signature).
    const rule = await new DriveClient(limited.url, ADMIN).request('POST', '/drive/trust', { body: JSON.stringify({ issuer: issuer.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/main', role: 'read-only' }), headers: { 'Content-Type': 'application/json' } });
    expect(rule.status).toBe(200);
    const forged = unsignedToken({ alg: 'RS256', kid: 'forged' }, { iss: issuer.url, aud: 'drive', sub: 'repo:acme/etl:ref:refs/heads/main' }, 'AAAA');
    // Act: the attacker's address, twice what its bucket holds.
    const attacker = [];
    for (let i = 0; i < 6; i++) attacker.push((await from('127.0.0.4', 'default', forged)).status);
    // Assess: the attacker is refused after its own 3; the drive's real job, from another address, is not.
    expect(attacker).toEqual([401, 401, 401, 429, 429, 429]);
    const job = await from('127.0.0.5', 'default', await issuer.sign({}));
    expect(job.status).toBe(200);
  });

  it('charges the address for every attempt, one whose body it cannot read too, and no other address', async () => {
    // Prepare: a well-formed token of an issuer no rule names.
    const untrusted = unsignedToken({ alg: 'RS256', kid: 'k' }, { iss: 'https://issuer.example.com', aud: 'drive', sub: 'repo:acme/etl:ref:refs/heads/main' }, 'AAAA');
    // Act: three attempts refused before any token is looked at (its bucket holds 3), then the token.
    const refused = [];
    for (const body of ['{', { drive: 'default' }, { drive: '../etc', token: 'x.y.z' }]) refused.push((await exchangeFrom(limited.url, '127.0.0.6', body)).status);
    const limitedAnswer = await from('127.0.0.6', 'default', untrusted);
    // Assess: the fourth attempt of the address is refused by its bucket; another address's same token is not.
    expect(refused).toEqual([400, 400, 422]);
    expect(limitedAnswer.status).toBe(429);
    expect(limitedAnswer.body.error.message).toMatch(/^rate limit of 3 requests per minute for token exchanges from this address exceeded/);
    expect((await from('127.0.0.7', 'default', untrusted)).status).toBe(401);
  });
});

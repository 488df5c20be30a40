import type { ApiKeyRecord } from './access';
import { unauthorized } from './errors';
import { type TrustRule, type VerifiedClaims, keyLifeSeconds, ruleAdmits } from './trust';

/** A drive's trust rules and the keys minted under them (the access table in AWS and on the local host). */
export interface TrustStore {
  /** Every rule of `drive`, revoked ones included, oldest first (a consistent read). */
  rules(drive: string): Promise<TrustRule[]>;
  /** Stores a new key for the token `rule` admitted; it works until `expiresAt`. */
  mint(minting: { drive: string; rule: TrustRule; subject: string; expiresAt: Date }): Promise<{ record: ApiKeyRecord; secret: string }>;
  /** Revokes the key of `secret`. */
  revokeSecret(secret: string): Promise<void>;
}

/** Checks a token's signature and claims against its issuer's keys (functions/http/oidc-verifier.ts). */
export interface Verifier {
  /** The token's issuer, after the checks that cost nothing (a JWT, an allowed alg, an `iss` in `trustedIssuers`); throws their 401. */
  screen(token: string, trustedIssuers: ReadonlySet<string>): string;
  /** The token's claims, its signature checked against its issuer's keys (fetched if need be). */
  verify(token: string, trustedIssuers: ReadonlySet<string>, now: Date): Promise<VerifiedClaims>;
}

export interface Minted {
  secret: string;
  record: ApiKeyRecord;
  rule: TrustRule;
}

/**
 * How many times the per-address bucket the per-drive one holds: an address that spends its own bucket on tokens
 * that pass the free checks (anyone can write a JWT naming a public issuer) must not empty its drive's bucket too.
 */
export const PER_DRIVE_BUCKET_FACTOR = 10;

/**
 * Exchanges an identity token for a key of `drive`: the token verified against its issuer's keys, then the
 * first live rule (oldest first) whose issuer, audience, subject and claims all match decides the key's role,
 * prefix and longest life. Every refusal is a 401 that names the check that failed, never the token.
 * `chargeDrive` (the drive's rate limit) is taken only from a token that passed the checks that cost nothing.
 */
export async function exchangeToken(
  deps: { trust: TrustStore; verifier: Verifier; chargeDrive?: () => Promise<void> },
  request: { drive: string; token: string; ttlSeconds?: number },
  now: Date,
): Promise<Minted> {
  const live = (await deps.trust.rules(request.drive)).filter((rule) => rule.revokedAt === undefined);
  const issuers = new Set(live.map((rule) => rule.issuer));
  // Junk a parse refuses is not charged to the drive: one address's junk must not lock the drive's jobs out.
  deps.verifier.screen(request.token, issuers);
  await deps.chargeDrive?.();
  const claims = await deps.verifier.verify(request.token, issuers, now);
  const ofIssuer = live.filter((rule) => rule.issuer === claims.issuer);
  if (!ofIssuer.some((rule) => claims.audiences.includes(rule.audience))) throw unauthorized('the token\'s audience (aud) matches no trust rule of its issuer');
  const rule = ofIssuer.find((candidate) => ruleAdmits(candidate, claims));
  if (!rule) throw unauthorized('the token\'s subject (sub) and claims match no trust rule of its issuer and audience');
  const expiresAt = new Date(now.getTime() + keyLifeSeconds(request.ttlSeconds, rule.maxTtlSeconds) * 1000);
  const { record, secret } = await deps.trust.mint({ drive: request.drive, rule, subject: claims.subject, expiresAt });
  // A revoke of the rule between the read above and the mint may not have seen this key: read the rule again
  // (consistently) and take the key back if it is gone.
  const after = (await deps.trust.rules(request.drive)).find((held) => held.id === rule.id);
  if (after?.revokedAt !== undefined) {
    await deps.trust.revokeSecret(secret);
    throw unauthorized('the trust rule that matched the token was revoked meanwhile');
  }
  return { secret, record, rule };
}

import type { Role } from './access';

/**
 * Federation (issue 25): a trust rule lets a job that holds a signed identity token from `issuer` (GitHub
 * Actions, GitLab CI, Google Cloud, Kubernetes, Azure, AWS) exchange it for a short-lived key of `role` on
 * `prefix`, when the token's audience, subject and claims match the rule's.
 */

/** The roles a rule may grant: never `admin`, which could make itself wider keys. */
export const TRUST_ROLES = ['upload-only', 'read-write', 'read-only'] as const satisfies readonly Role[];
export type TrustRole = (typeof TRUST_ROLES)[number];

/** The life of a minted key, in seconds: a rule's cap lies in this range. */
export const MIN_TTL_SECONDS = 60;
export const MAX_TTL_SECONDS = 43_200;
export const DEFAULT_TTL_SECONDS = 3_600;

/** At most this many rules a drive: all of them are read by the exchange in one item. */
export const MAX_RULES_PER_DRIVE = 100;

/** A trust rule of one drive. */
export interface TrustRule {
  id: string;
  issuer: string;
  audience: string;
  /** Exact, or with `*` matching any run of characters within one `:`-separated segment. */
  subject: string;
  /** Claims the token must carry with exactly these (string) values. */
  claims: Readonly<Record<string, string>>;
  role: TrustRole;
  prefix: string;
  maxTtlSeconds: number;
  createdAt: string;
  revokedAt?: string;
}

/**
 * Whether `subject` matches `pattern`: segments split on `:`, and within one a `*` stands for any run of characters but `:`.
 * No RegExp: the subject is the token's, chosen by whoever runs the job, and a backtracking RegExp of several `*`
 * takes time exponential in their number. Each segment is matched by a greedy two-pointer glob, at most
 * (pattern length × segment length) steps. Self-contained (no module references), so a test can run it in a child.
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (!pattern.includes('*')) return pattern === subject;
  /** Whether `text` (code points) matches the glob `glob`: on a mismatch, the last `*` takes one more character. */
  const segmentMatches = (glob: readonly string[], text: readonly string[]): boolean => {
    let g = 0;
    let t = 0;
    let star = -1;
    let starText = 0;
    while (t < text.length) {
      if (g < glob.length && glob[g] === '*') {
        star = g++;
        starText = t;
      } else if (g < glob.length && glob[g] === text[t]) {
        g++;
        t++;
      } else if (star >= 0) {
        g = star + 1;
        t = ++starText;
      } else {
        return false;
      }
    }
    while (g < glob.length && glob[g] === '*') g++;
    return g === glob.length;
  };
  const globs = pattern.split(':');
  const segments = subject.split(':');
  // Code points, not UTF-16 units: a `*` never takes half of a character.
  return globs.length === segments.length && globs.every((glob, i) => segmentMatches(Array.from(glob), Array.from(segments[i] ?? '')));
}

/** The verified token's claims a rule looks at: `aud` as the list it may be, the rest as sent. */
export interface VerifiedClaims {
  issuer: string;
  audiences: readonly string[];
  subject: string;
  claims: Readonly<Record<string, unknown>>;
}

/** Whether `rule` (a live one) admits a token with these claims. */
export function ruleAdmits(rule: TrustRule, token: VerifiedClaims): boolean {
  if (rule.revokedAt !== undefined || rule.issuer !== token.issuer) return false;
  if (!token.audiences.includes(rule.audience)) return false;
  if (!subjectMatches(rule.subject, token.subject)) return false;
  // A claim compares as a string; a boolean or number claim (`"ref_protected": true`) matches "true".
  return Object.entries(rule.claims).every(([name, value]) => {
    const sent = token.claims[name];
    return (typeof sent === 'string' || typeof sent === 'number' || typeof sent === 'boolean') && String(sent) === value;
  });
}

/** The life of a key asked for `asked` seconds (or the cap) under a rule capped at `cap`. */
export function keyLifeSeconds(asked: number | undefined, cap: number): number {
  return Math.min(asked ?? cap, cap);
}

/** Why `issuer` cannot be a rule's issuer, or undefined: https, or on the local host an http loopback origin. */
export function issuerProblem(issuer: string, loopbackAllowed: boolean): string | undefined {
  // `new URL` trims leading and trailing spaces and drops tabs and newlines inside: the rule would keep a text
  // no token's `iss` equals, shown as if it were the URL.
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(issuer)) return 'issuer must be an https URL without whitespace or control characters';
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'issuer must be an https URL, like "https://token.actions.githubusercontent.com"';
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return 'issuer must be an https URL without query, fragment or credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && loopbackAllowed && isLoopbackOrigin(url)) return undefined;
  return loopbackAllowed
    ? 'issuer must be an https URL (or, on the local host, http://127.0.0.1:<port> or http://localhost:<port>)'
    : 'issuer must be an https URL, like "https://token.actions.githubusercontent.com"';
}

/** Whether `url` is on this machine's loopback by name: 127.0.0.1 or localhost, with a port. */
export function isLoopbackOrigin(url: URL): boolean {
  return (url.hostname === '127.0.0.1' || url.hostname === 'localhost') && url.port !== '';
}

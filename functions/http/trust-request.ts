import { invalid } from '../core/errors';
import { ROOT, parsePath } from '../core/paths';
import { DEFAULT_TTL_SECONDS, TRUST_ROLES, type TrustRule, issuerProblem } from '../core/trust';
import { CreateTrustRequest } from '../openapi/request-schemas';
import { type Messages, jsonInput } from './request-input';

const EXAMPLE = '{"issuer": "https://token.actions.githubusercontent.com", "audience": "drive", "subject": "repo:acme/etl:ref:refs/heads/main", "role": "upload-only", "prefix": "/ingest"}';
// C0 and C1 controls: rules are shown in tables and the dashboard.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const MAX_CLAIMS = 20;
const MESSAGES: Messages = {
  role: {
    value: ({ value }) => `role must be one of ${TRUST_ROLES.join(', ')}; a trust rule never grants admin (got ${JSON.stringify(String(value).slice(0, 40))})`,
  },
  max_ttl_seconds: { value: () => 'max_ttl_seconds must be a whole number from 60 to 43200 (12 hours)' },
};

/**
 * The rule a `POST /drive/trust` body asks for (without id and date), or the 400 / 422 naming what is wrong
 * with it: the one check of a new rule, for the route and for `npm run keys -- trust add`. `loopbackAllowed`
 * admits http issuers on this machine's loopback (the local host's data).
 */
export function trustRuleRequest(body: Buffer, loopbackAllowed: boolean): Omit<TrustRule, 'id' | 'createdAt'> {
  const request = jsonInput(body, CreateTrustRequest, EXAMPLE, MESSAGES);
  const problem = issuerProblem(request.issuer, loopbackAllowed);
  if (problem) throw invalid(problem);
  for (const [name, value] of [['audience', request.audience], ['subject', request.subject]] as const) {
    if (CONTROL.test(value) || value.trim() === '') throw invalid(`${name} must be 1 to 255 characters, without control characters`);
  }
  if (request.subject.split(':').some((segment) => /\*\*/.test(segment))) throw invalid('subject may hold "*" but not "**": one "*" already matches any run of characters within a segment');
  const claims = request.claims ?? {};
  const entries = Object.entries(claims);
  if (entries.length > MAX_CLAIMS || entries.some(([name, value]) => typeof value !== 'string' || name === '' || name.length > 100 || value.length > 255 || CONTROL.test(name) || CONTROL.test(value))) {
    throw invalid(`claims must be an object of at most ${MAX_CLAIMS} names (1 to 100 characters) each with a string value (at most 255 characters), like {"repository_owner": "acme"}`);
  }
  if (entries.some(([name]) => ['iss', 'aud', 'sub', 'exp', 'nbf', 'iat'].includes(name))) throw invalid('claims may not name iss, aud, sub, exp, nbf or iat: the rule\'s own fields and the token checks cover them');
  return {
    issuer: request.issuer,
    audience: request.audience,
    subject: request.subject,
    claims: claims as Record<string, string>,
    role: request.role,
    prefix: request.prefix == null ? ROOT : parsePath(request.prefix, 'prefix', { allowTrailingSlash: true }),
    maxTtlSeconds: request.max_ttl_seconds ?? DEFAULT_TTL_SECONDS,
  };
}

import { guard } from './wiring/guard';
import { loopbackIssuers, trust } from './wiring/trust';
import { conflict, invalid } from './core/errors';
import { ROOT, parsePath } from './core/paths';
import { DEFAULT_TTL_SECONDS, MAX_RULES_PER_DRIVE, TRUST_ROLES, issuerProblem } from './core/trust';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { type Messages, jsonInput } from './http/request-input';
import { trustView } from './http/views';
import { CreateTrustRequest } from './openapi/request-schemas';

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
 * POST /drive/trust (admin keys only) with `{ issuer, audience, subject, claims?, role, prefix?, max_ttl_seconds? }`
 * → the new trust rule of the caller's drive: tokens it admits exchange for keys of its role and prefix.
 */
export const handler = jsonHandler({ permission: 'keys', guard, stores: { trust } }, async (event, { drive, stores }) => {
  const body = jsonInput(bodyOf(event), CreateTrustRequest, EXAMPLE, MESSAGES);
  const problem = issuerProblem(body.issuer, loopbackIssuers);
  if (problem) throw invalid(problem);
  for (const [name, value] of [['audience', body.audience], ['subject', body.subject]] as const) {
    if (CONTROL.test(value) || value.trim() === '') throw invalid(`${name} must be 1 to 255 characters, without control characters`);
  }
  if (body.subject.split(':').some((segment) => /\*\*/.test(segment))) throw invalid('subject may hold "*" but not "**": one "*" already matches any run of characters within a segment');
  const claims = body.claims ?? {};
  const entries = Object.entries(claims);
  if (entries.length > MAX_CLAIMS || entries.some(([name, value]) => typeof value !== 'string' || name === '' || name.length > 100 || value.length > 255 || CONTROL.test(name) || CONTROL.test(value))) {
    throw invalid(`claims must be an object of at most ${MAX_CLAIMS} names (1 to 100 characters) each with a string value (at most 255 characters), like {"repository_owner": "acme"}`);
  }
  if (entries.some(([name]) => ['iss', 'aud', 'sub', 'exp', 'nbf', 'iat'].includes(name))) throw invalid('claims may not name iss, aud, sub, exp, nbf or iat: the rule\'s own fields and the token checks cover them');
  const prefix = body.prefix == null ? ROOT : parsePath(body.prefix, 'prefix', { allowTrailingSlash: true });
  const made = await stores.trust.add(drive, {
    issuer: body.issuer,
    audience: body.audience,
    subject: body.subject,
    claims: claims as Record<string, string>,
    role: body.role,
    prefix,
    maxTtlSeconds: body.max_ttl_seconds ?? DEFAULT_TTL_SECONDS,
  });
  if (made === 'full') throw conflict(`this drive has ${MAX_RULES_PER_DRIVE} live trust rules, its most; revoke one first`, []);
  return { trust: trustView(made) };
});

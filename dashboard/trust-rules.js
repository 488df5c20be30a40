// @ts-check
/**
 * Settings → Trust rules without the page: the body a rule's form sends, the field an API message names, the
 * keys live under a rule and how long they have left. Pure functions (no DOM), unit-tested in Node.
 */

/**
 * The wire types, from the OpenAPI document as api.js takes them (types only: nothing is loaded).
 * @typedef {import('../client/src/generated/drive-api').components['schemas']} Wire
 * @typedef {Wire['ApiKey']} ApiKey
 */

/**
 * A trust rule, and the body of `POST drive/trust`; `max_ttl_seconds` is sent as typed when it is not a whole
 * number, so that the API's own message says what it must be.
 * @typedef {Wire['TrustRule']} TrustRule
 * @typedef {Omit<Wire['CreateTrustRequest'], 'max_ttl_seconds'> & { max_ttl_seconds?: number | string }} NewTrustRule
 */

/** The fields of `POST drive/trust`, as the API names them in its messages. */
export const TRUST_FIELDS = /** @type {const} */ (['issuer', 'audience', 'subject', 'claims', 'role', 'prefix', 'max_ttl_seconds']);
/** @typedef {(typeof TRUST_FIELDS)[number]} TrustField */

/**
 * The field a message of the API is about: its messages start with the field they name (`issuer must be an
 * https URL…`, `max_ttl_seconds must be…`, `claims.x must be a string`); undefined for one about no field
 * (a drive with all the rules it may hold, a body of unknown fields).
 * @param {string} message
 * @returns {TrustField | undefined}
 */
export function fieldNamed(message) {
  return TRUST_FIELDS.find((field) => message === field || (message.startsWith(field) && /^[ .[]/.test(message.slice(field.length))));
}

/**
 * What the form's fields hold, as typed.
 * @typedef {{ issuer: string, audience: string, subject: string, claims: string, role: string, prefix: string, maxTtl: string }} TrustForm
 */

/**
 * The body of `POST drive/trust` for what the form holds, or the field whose text cannot become one. Only the
 * claims' lines are read here; every other check is the API's, whose message is then shown by its field: an
 * empty field is left out (the API says it is required, or takes its default), and a life that is not a whole
 * number is sent as typed.
 * @param {TrustForm} form
 * @returns {{ ok: true, rule: NewTrustRule } | { ok: false, field: TrustField, message: string }}
 */
export function ruleFromForm(form) {
  const claims = claimsFrom(form.claims);
  if (!claims.ok) return { ok: false, field: 'claims', message: claims.message };
  /** @type {Record<string, unknown>} */
  const rule = {};
  for (const [field, value] of /** @type {const} */ ([['issuer', form.issuer], ['audience', form.audience], ['subject', form.subject], ['role', form.role], ['prefix', form.prefix]])) {
    if (value.trim() !== '') rule[field] = value.trim();
  }
  if (Object.keys(claims.claims).length > 0) rule.claims = claims.claims;
  const ttl = form.maxTtl.trim();
  if (ttl !== '') rule.max_ttl_seconds = /^[0-9]{1,9}$/.test(ttl) ? Number(ttl) : ttl;
  return { ok: true, rule: /** @type {NewTrustRule} */ (rule) };
}

/**
 * Claims written one a line as `name=value` (blank lines skipped; spaces around the name and the value dropped).
 * @param {string} text
 * @returns {{ ok: true, claims: Record<string, string> } | { ok: false, message: string }}
 */
export function claimsFrom(text) {
  /** @type {Record<string, string>} */
  const claims = {};
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const equals = line.indexOf('=');
    const name = equals < 0 ? '' : line.slice(0, equals).trim();
    if (name === '') return { ok: false, message: `claims must be written one a line as name=value (line ${i + 1} is not)` };
    if (Object.hasOwn(claims, name)) return { ok: false, message: `claims give ${JSON.stringify(name)} twice (line ${i + 1}): a token carries one value of each claim` };
    claims[name] = line.slice(equals + 1).trim();
  }
  return { ok: true, claims };
}

/**
 * The keys minted under `rule` that still work at `now`: not revoked, not expired; the latest to expire first.
 * @param {TrustRule} rule
 * @param {readonly ApiKey[]} keys the drive's keys (`GET drive/keys`)
 * @param {number} now milliseconds since the epoch
 * @returns {(ApiKey & { expires_at: string })[]}
 */
export function liveKeysUnder(rule, keys, now) {
  return keys
    .filter(/** @returns {key is ApiKey & { expires_at: string }} */ (key) => key.trust_id === rule.id && !key.revoked_at && typeof key.expires_at === 'string' && Date.parse(key.expires_at) > now)
    .sort((a, b) => Date.parse(b.expires_at) - Date.parse(a.expires_at));
}

/**
 * How long a key has left at `now`, to the second: `14 min 05 s left`, `2 h 00 min 09 s left`, `45 s left`;
 * `expired` once its end has come (the API answers 401 from that instant).
 * @param {string} expiresAt an ISO timestamp
 * @param {number} now milliseconds since the epoch
 */
export function timeLeft(expiresAt, now) {
  const seconds = Math.ceil((Date.parse(expiresAt) - now) / 1000);
  if (!(seconds > 0)) return 'expired';
  return `${duration(seconds, true)} left`;
}

/**
 * A key life in seconds for people: `1 h`, `15 min`, `1 min 30 s`, `12 h`.
 * @param {number} seconds
 */
export function formatLife(seconds) {
  return duration(seconds, false);
}

/**
 * @param {number} seconds whole, positive
 * @param {boolean} all every unit below the largest, zero-padded (a countdown keeps its width), or only those not zero
 */
function duration(seconds, all) {
  /** @type {[number, string][]} */
  const parts = [[Math.floor(seconds / 3600), 'h'], [Math.floor(seconds / 60) % 60, 'min'], [seconds % 60, 's']];
  const first = parts.findIndex(([count]) => count > 0);
  return parts
    .slice(first < 0 ? parts.length - 1 : first)
    .filter(([count], i) => all || i === 0 || count > 0)
    .map(([count, unit], i) => `${all && i > 0 ? String(count).padStart(2, '0') : count} ${unit}`)
    .join(' ');
}

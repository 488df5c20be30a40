// @ts-check
/**
 * Settings → Trust rules (issue 25): the drive's trust rules, with the minted keys live under each (counting
 * down to their end), adding one (the API's message for a field shown under that field), and revoking one
 * after a confirmation. Admin keys only: app.js renders this view for nobody else.
 */
import { addTrust, listKeys, listTrust, revokeTrust } from './api.js';
import { fieldNamed, formatLife, liveKeysUnder, ruleFromForm, timeLeft } from './trust-rules.js';
import { announce, byId, confirmAction, find, fromTemplate, h, isAbort, messageOf, openDialog, setBusy, showFormError, timeElement } from './ui.js';

/** @typedef {import('./api.js').ApiKey} ApiKey */
/** @typedef {import('./api.js').TrustRule} TrustRule */
/** @typedef {import('./trust-rules.js').TrustField} TrustField */

/** The roles a rule may grant, in words (keys-view.js says the same of keys). */
const ROLE_LABELS = /** @type {const} */ ({ 'upload-only': 'Upload only', 'read-write': 'Read and write', 'read-only': 'Read only' });

/**
 * Shows the rules in `main` until `signal` aborts.
 * @param {HTMLElement} main
 * @param {AbortSignal} signal
 */
export async function renderTrust(main, signal) {
  main.replaceChildren(fromTemplate('trust-view'));
  document.title = 'Trust rules · Settings · Drive';
  const view = find(main, '.trust-view', HTMLElement);
  const showRevoked = find(view, '[data-input="show-revoked"]', HTMLInputElement);
  const addButton = find(view, '[data-action="add-rule"]', HTMLButtonElement);
  /** @type {TrustRule[]} */
  let rules = [];
  /** @type {ApiKey[]} */
  let keys = [];
  const draw = () => drawRules(view, rules, keys, showRevoked.checked, { revoke: (rule) => revoke(rule) });

  // Each reading replaces the one on its way, so an older answer arriving last is not drawn over a newer one.
  // Resolves true once this reading is drawn; false when it failed (the view shows why) or was replaced.
  let reading = new AbortController();
  const reload = async () => {
    reading.abort();
    reading = new AbortController();
    const current = AbortSignal.any([signal, reading.signal]);
    view.setAttribute('aria-busy', 'true');
    try {
      [rules, keys] = await Promise.all([listTrust({ signal: current }), listKeys({ signal: current })]);
      draw();
      return true;
    } catch (failure) {
      if (current.aborted) return false;
      find(view, '[data-loading]', HTMLElement).hidden = true;
      showFormError(find(view, '[data-error]', HTMLElement), failure);
      return false;
    } finally {
      if (!current.aborted) view.removeAttribute('aria-busy');
    }
  };

  /**
   * Moves focus to the heading of the rule `id`, if it is shown.
   * @param {string | undefined} id
   */
  const focusRule = (id) => {
    const heading = id === undefined ? null : view.querySelector(`[data-rule-id="${id}"] h2`);
    if (!(heading instanceof HTMLElement)) return false;
    heading.focus();
    return true;
  };

  /** @param {TrustRule} rule */
  const revoke = async (rule) => {
    const order = rules.filter((shown) => showRevoked.checked || !shown.revoked_at).map((shown) => shown.id);
    const revoked = await confirmRevoke(rule, keys);
    if (!revoked || signal.aborted) return;
    announce(`Revoked the trust rule for ${rule.subject}, and the keys minted under it.`);
    await reload();
    if (signal.aborted) return;
    // The same rule, still listed among the revoked; or the next one shown, or the one before it; or the Add button.
    const at = order.indexOf(rule.id);
    if (![rule.id, ...order.slice(at + 1), ...order.slice(0, at).reverse()].some(focusRule)) addButton.focus();
  };

  showRevoked.addEventListener('change', draw);
  find(view, '[data-action="refresh"]', HTMLButtonElement).addEventListener('click', async () => {
    if (await reload()) announce('Trust rules and their live keys read again.');
  });
  addButton.addEventListener('click', async () => {
    const added = await addRuleDialog();
    if (!added || signal.aborted) return;
    announce(`Added a trust rule: tokens of ${added.issuer} for ${added.subject} now exchange for ${ROLE_LABELS[added.role].toLowerCase()} keys.`);
    await reload();
    if (!signal.aborted) focusRule(added.id);
  });

  // The countdowns: each live key's time left, to the second, until the view goes.
  const ticker = window.setInterval(() => tick(view), 1000);
  signal.addEventListener('abort', () => clearInterval(ticker), { once: true });
  await reload();
}

/**
 * @param {HTMLElement} view
 * @param {TrustRule[]} rules
 * @param {ApiKey[]} keys
 * @param {boolean} showRevoked
 * @param {{ revoke: (rule: TrustRule) => void }} actions
 */
function drawRules(view, rules, keys, showRevoked, actions) {
  find(view, '[data-loading]', HTMLElement).hidden = true;
  showFormError(find(view, '[data-error]', HTMLElement));
  const shown = rules.filter((rule) => showRevoked || !rule.revoked_at);
  const now = Date.now();
  find(view, '[data-rules]', HTMLElement).replaceChildren(...shown.map((rule) => ruleCard(rule, liveKeysUnder(rule, keys, now), now, actions)));
  find(view, '[data-empty]', HTMLElement).hidden = shown.length !== 0;
}

/**
 * One rule: what a token must be, what its keys may do, and the keys live under it.
 * @param {TrustRule} rule
 * @param {(ApiKey & { expires_at: string })[]} live
 * @param {number} now
 * @param {{ revoke: (rule: TrustRule) => void }} actions
 */
function ruleCard(rule, live, now, actions) {
  const titleId = `trust-rule-${rule.id}`;
  const claims = Object.entries(rule.claims);
  /** @type {[string, Node | string][]} */
  const facts = [
    ['Issuer', h('code', {}, rule.issuer)],
    ['Audience', h('code', {}, rule.audience)],
    ['Subject', h('code', {}, rule.subject)],
    ['Claims', claims.length === 0 ? h('span', { class: 'muted' }, 'None') : h('ul', { class: 'claims' }, claims.map(([name, value]) => h('li', {}, h('code', {}, `${name}=${value}`))))],
    ['Role', h('span', { class: `role role-${rule.role}` }, ROLE_LABELS[rule.role])],
    ['Folder', rule.prefix === '/' ? h('span', { class: 'muted' }, 'Whole drive') : h('code', {}, rule.prefix)],
    ['Longest key life', `${formatLife(rule.max_ttl_seconds)} (${rule.max_ttl_seconds.toLocaleString('en')} s)`],
    ['Created', timeElement(rule.created_at)],
  ];
  if (rule.revoked_at) facts.push(['Revoked', timeElement(rule.revoked_at)]);
  return h('article', { class: `card trust-rule${rule.revoked_at ? ' revoked' : ''}`, 'data-rule-id': rule.id, 'aria-labelledby': titleId },
    h('div', { class: 'trust-rule-head' },
      h('h2', { id: titleId, tabindex: '-1' }, h('span', { class: 'visually-hidden' }, 'Rule for '), h('code', {}, rule.subject)),
      rule.revoked_at
        ? h('span', { class: 'muted' }, 'Revoked')
        : h('button', { type: 'button', class: 'danger-quiet small', 'aria-label': `Revoke the rule for ${rule.subject}`, onclick: () => actions.revoke(rule) }, 'Revoke…')),
    h('dl', { class: 'facts' }, facts.map(([term, detail]) => h('div', {}, h('dt', {}, term), h('dd', {}, detail)))),
    h('h3', { id: `${titleId}-keys` }, 'Live keys'),
    live.length === 0
      ? h('p', { class: 'muted' }, rule.revoked_at ? 'None: revoking the rule revoked its keys.' : 'None. A job that exchanges a token this rule admits gets one.')
      : h('div', { class: 'table-wrap' },
        h('table', { class: 'listing minted', 'aria-labelledby': `${titleId}-keys` },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Key id'), h('th', { scope: 'col' }, 'Subject'), h('th', { scope: 'col', class: 'when' }, 'Expires'), h('th', { scope: 'col' }, 'Left'))),
          h('tbody', {}, live.map((key) => h('tr', { 'data-key-id': key.id },
            h('th', { scope: 'row' }, h('code', {}, key.id)),
            h('td', {}, h('code', {}, key.subject ?? '')),
            h('td', { class: 'when' }, timeElement(key.expires_at)),
            h('td', { class: 'left' }, h('span', { 'data-expires-at': key.expires_at }, timeLeft(key.expires_at, now)))))))),
  );
}

/**
 * Moves every countdown of the view to now; a key whose end has come says `expired`.
 * @param {HTMLElement} view
 */
function tick(view) {
  const now = Date.now();
  for (const left of view.querySelectorAll('[data-expires-at]')) {
    const text = timeLeft(left.getAttribute('data-expires-at') ?? '', now);
    if (left.textContent !== text) left.textContent = text;
    left.closest('tr')?.classList.toggle('revoked', text === 'expired');
  }
}

/**
 * @param {TrustRule} rule
 * @param {ApiKey[]} keys
 * @returns {Promise<boolean>} whether it was revoked
 */
function confirmRevoke(rule, keys) {
  const live = liveKeysUnder(rule, keys, Date.now()).length;
  return confirmAction({
    title: `Revoke the trust rule for “${rule.subject}”?`,
    body: [
      h('p', {}, `Tokens of ${rule.issuer} for this subject no longer exchange for keys. ${live === 0 ? 'No key minted under it is live now.' : `The ${live === 1 ? 'key' : `${live} keys`} minted under it and still live ${live === 1 ? 'stops' : 'stop'} working too (401 Unauthorized).`}`),
      h('p', {}, 'This cannot be undone: to trust these tokens again, add a new rule.'),
    ],
    confirmLabel: 'Revoke rule',
    action: async () => {
      await revokeTrust(rule.id);
    },
  });
}

/** The form's controls, by the field of the API each one is for. */
const CONTROLS = /** @type {const} */ ({
  issuer: 'trust-issuer',
  audience: 'trust-audience',
  subject: 'trust-subject',
  claims: 'trust-claims',
  role: 'trust-role',
  prefix: 'trust-prefix',
  max_ttl_seconds: 'trust-max-ttl',
});

/**
 * The add dialog; resolves with the rule added, or undefined when it was closed without one.
 * @returns {Promise<TrustRule | undefined>}
 */
async function addRuleDialog() {
  const dialog = byId('trust-dialog', HTMLDialogElement);
  const form = find(dialog, 'form', HTMLFormElement);
  const formError = find(form, '.form-error', HTMLElement);
  /** @param {TrustField} field */
  const control = (field) => /** @type {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} */ (byId(CONTROLS[field], HTMLElement));
  /** Shows `message` under the field it names (focus goes there), or under the form when it names none. */
  const showError = (/** @type {TrustField | undefined} */ field, /** @type {string | undefined} */ message) => {
    for (const [name, id] of Object.entries(CONTROLS)) {
      const error = byId(`${id}-error`, HTMLElement);
      const mine = message !== undefined && name === field;
      error.textContent = mine ? message : '';
      error.hidden = !mine;
      if (mine) byId(id, HTMLElement).setAttribute('aria-invalid', 'true');
      else byId(id, HTMLElement).removeAttribute('aria-invalid');
    }
    showFormError(formError, field === undefined ? message : undefined);
    if (field !== undefined && message !== undefined) control(field).focus();
  };
  form.reset();
  showError(undefined, undefined);

  /** @type {TrustRule | undefined} */
  let added;
  /** The add on its way, if any: the dialog may be closed (Escape) before it answers, and the rule is added all the same. */
  let sending = Promise.resolve();
  const submit = (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    sending = send();
  };
  const send = async () => {
    const built = ruleFromForm({
      issuer: control('issuer').value,
      audience: control('audience').value,
      subject: control('subject').value,
      claims: control('claims').value,
      role: control('role').value,
      prefix: control('prefix').value,
      maxTtl: control('max_ttl_seconds').value,
    });
    if (!built.ok) return showError(built.field, built.message);
    setBusy(dialog, true);
    try {
      added = await addTrust(built.rule);
      dialog.close('added');
    } catch (failure) {
      // Stopped by a sign-out: nothing to say, to whoever signs in next least of all.
      if (isAbort(failure)) return;
      const message = messageOf(failure);
      showError(fieldNamed(message), message);
    } finally {
      setBusy(dialog, false);
    }
  };
  form.addEventListener('submit', submit);
  try {
    await openDialog(dialog);
    await sending;
    return added;
  } finally {
    form.removeEventListener('submit', submit);
  }
}

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { APIResponse, Browser, Locator, Page, Route } from 'playwright-core';
import { PAGE_TIMEOUT_MS, launchChromium } from '../support/browser';
import { TestIssuer } from '../support/oidc-issuer';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { midWordBreaks, recordPageMessages } from '../support/page-checks';

/**
 * The dashboard in a real browser: Chromium, driven by playwright-core, against a local host. The steps
 * share one page and run in order, as a person would use it: sign in, manage keys, upload, browse,
 * download, delete. Each view is photographed into test-results/screenshots/.
 */

// Callbacks given to page.evaluate run in the page: the few browser globals they touch, declared for this file
// alone (the project compiles for Node, without the DOM's types).
declare const document: {
  readonly activeElement: { readonly id: string; readonly textContent: string | null } | null;
  readonly cookie: string;
  readonly title: string;
  readonly documentElement: { readonly scrollWidth: number; readonly outerHTML: string };
  getElementById(id: string): { readonly value?: string; readonly hidden?: boolean; readonly textContent: string | null } | null;
  addEventListener(type: string, listener: () => void): void;
  querySelectorAll(selector: string): ArrayLike<{ readonly value?: string; readonly textContent: string | null }>;
};
declare const location: { readonly href: string };
/** What the page said in its status and alert regions, in order (recorded by the context's init script). */
declare const driveMessages: string[];
declare const innerWidth: number;
declare const sessionStorage: { readonly length: number; getItem(key: string): string | null };
declare const localStorage: { readonly length: number };
declare const navigator: { readonly clipboard: { readText(): Promise<string> } };
declare class DataTransfer {
  readonly items: { add(file: File): unknown };
}

const SCREENSHOTS = resolve(__dirname, '..', '..', 'test-results', 'screenshots');
const ADMIN = `drv_admin_${randomBytes(16).toString('hex')}`;
const READER = `drv_reader_${randomBytes(16).toString('hex')}`;
const UPLOADER = `drv_uploader_${randomBytes(16).toString('hex')}`;
/** An admin of another drive: nothing of the default drive is its to see. */
const ELSEWHERE = `drv_elsewhere_${randomBytes(16).toString('hex')}`;
const SMALL = Buffer.concat([Buffer.from('quarterly notes\n'), randomBytes(2048)]);
const SMALL_V2 = Buffer.concat([Buffer.from('quarterly notes, revised\n'), randomBytes(2040)]);
// Over the dashboard's 4 MiB threshold and the API's 8 MiB part size: two parts straight to S3.
const LARGE = randomBytes(9 * 1024 * 1024 + 12345);
/**
 * LARGE on disk, as big.bin and secret-archive.bin (with SMALL as notes.txt beside it): the page is given
 * large files by path. Given as a buffer, 9 MiB cross into the page as base64 within one step's time limit,
 * which a busy machine can miss.
 */
let largeFiles: string;

let host: RunningHost;
let s3Origin: string;
let browser: Browser;
let page: Page;
/** Every URL the page requested, to show that no key ever travels in one. */
const requested: string[] = [];
/** Errors the page logged or threw (a refused script or style, a Trusted Types violation, a bug). */
const pageErrors: string[] = [];
/** The secret of the key the UI creates; revoked in a later step. */
let createdSecret = '';
/** The secret of a second admin key, which another tab signs in with. */
let secondAdmin = '';
/** An OpenID issuer on loopback, whose tokens a trust rule added in the page admits. */
let issuer: TestIssuer;
/** The rule the page adds, as the API lists it, and the key minted under it. */
let trustRule: { id: string; subject: string };
let minted: { key: string; expires_at: string; trust_id: string };
const RULE_SUBJECT = 'repo:acme/etl:ref:refs/heads/*';

/** Calls the API from the test (Node's fetch), as an app using a key would. */
function api(path: string, key: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${host.url}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Form controls with no accessible name (a label, aria-label or aria-labelledby), and buttons without a name, in the page and its dialogs. */
async function unlabelledControls(): Promise<string[]> {
  const fields = await page.locator('input:not([type=hidden]), select, textarea').evaluateAll((elements) =>
    elements.filter((el) => !(el as { labels?: { length: number } }).labels?.length && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby')).map((el) => el.outerHTML.slice(0, 120)),
  );
  const buttons = await page.locator('button').evaluateAll((elements) =>
    elements.filter((el) => !el.textContent?.trim() && !el.getAttribute('aria-label')).map((el) => el.outerHTML.slice(0, 120)),
  );
  return [...fields, ...buttons];
}

/** Whether the dialog, once shown, is open as a modal (the rest of the page inert, Escape closes it). */
async function isModal(selector: string): Promise<boolean> {
  await page.locator(selector).waitFor({ state: 'visible' });
  return page.locator(selector).evaluate((dialog) => dialog.matches(':modal'));
}

/** Whether keyboard focus is inside the element. */
function hasFocusWithin(selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((el) => el.contains(document.activeElement));
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  largeFiles = await mkdtemp(join(tmpdir(), 'drive-browser-'));
  for (const name of ['big.bin', 'secret-archive.bin']) await writeFile(join(largeFiles, name), LARGE);
  await writeFile(join(largeFiles, 'notes.txt'), SMALL);
  // Every recursive delete of a tree is a job (no request budget), so the page follows one to its end.
  issuer = await TestIssuer.start();
  host = await startHost({ DRIVE_API_KEYS: `default:${ADMIN}:admin,default:${READER}:read-only,default:${UPLOADER}:upload-only,elsewhere:${ELSEWHERE}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_DELETE_BUDGET_MS: '0' });
  s3Origin = (JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as { s3: string }).s3;
  browser = await launchChromium();
  // Reduced motion: no transitions, so each screenshot shows a view as it settles.
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true, reducedMotion: 'reduce' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: host.url });
  // Each message the page shows in its status and alert regions is recorded as it appears: a step waits for a
  // message to have been said, not to be on screen still (a status message goes after 8 s, or when the next
  // one comes), which a busy machine may not reach in time.
  await recordPageMessages(context);
  page = watched(await context.newPage());
}, 10 * 60_000);

/**
 * `tab`, with its requests and errors recorded, and a step timeout just short of Jest's, so a stuck step says
 * where it stuck. Not shorter: a step waits for a state, and how long a busy machine takes to reach it is no
 * failure (at 15 s, a new tab's first listing missed it with the CPU slowed 8 times at load 19).
 */
function watched(tab: Page): Page {
  tab.setDefaultTimeout(PAGE_TIMEOUT_MS);
  // DRIVE_BROWSER_CPU_SLOWDOWN=8 runs the page's CPU eight times slower, as on a busy machine, to find a step that
  // races the page rather than waiting for it.
  const slowdown = Number(process.env.DRIVE_BROWSER_CPU_SLOWDOWN ?? 1);
  if (slowdown > 1) void tab.context().newCDPSession(tab).then((cdp) => cdp.send('Emulation.setCPUThrottlingRate', { rate: slowdown }));
  tab.on('request', (request) => requested.push(request.url()));
  tab.on('pageerror', (error) => pageErrors.push(error.message));
  tab.on('console', (message) => {
    // Chromium logs every 4xx as "Failed to load resource"; the steps below cause some on purpose.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
  });
  return tab;
}

afterAll(async () => {
  await browser?.close();
  if (host) await stopHost(host);
  await issuer?.stop();
  if (largeFiles) await rm(largeFiles, { recursive: true, force: true });
});

describe('the dashboard, in Chromium', () => {
  it('serves the page with a strict policy and its security headers, and asks to sign in', async () => {
    const response = await page.goto(`${host.url}/`);

    const headers = response!.headers();
    expect(headers['content-type']).toBe('text/html; charset=utf-8');
    expect(headers['content-security-policy']).toContain(`connect-src 'self' ${s3Origin};`);
    expect(headers['content-security-policy']).toContain("script-src 'self';");
    expect(headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' });
    await expect(page.getByRole('heading', { level: 1, name: 'Sign in to Drive' }).isVisible()).resolves.toBe(true);
    await expect(hasFocusWithin('#sign-in-form')).resolves.toBe(true);
    expect(await unlabelledControls()).toEqual([]);
    await screenshot('01-sign-in');
  });

  it('refuses a key that is not a key of this drive, saying so', async () => {
    await page.getByRole('textbox', { name: 'API key' }).fill('drv_not_a_key_of_this_drive');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Drive does not know this key').waitFor();
    await screenshot('02-sign-in-refused');

    await expect(page.evaluate(() => sessionStorage.length)).resolves.toBe(0);
  });

  it('signs in with an admin key, kept in session storage only', async () => {
    await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
    await expect(page.evaluate(() => ({ session: sessionStorage.getItem('drive.apiKey'), local: localStorage.length, cookie: document.cookie }))).resolves.toEqual({ session: ADMIN, local: 0, cookie: '' });
    await page.getByText('This folder is empty.').waitFor();
    await screenshot('03-files-empty');
  });

  it('creates a read-write key in Settings → API Keys and shows its secret once, which then works against the API', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
    await page.locator('tr', { hasText: 'DRIVE_API_KEYS' }).first().waitFor();
    expect(await page.locator('table.keys tbody tr').count()).toBe(3);
    await screenshot('04-api-keys');

    // Keyboard: the button opens a modal dialog with focus inside; Escape closes it and focus comes back.
    await page.getByRole('button', { name: 'Create API key' }).focus();
    await page.keyboard.press('Enter');
    await expect(isModal('#key-dialog')).resolves.toBe(true);
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('key-name');
    expect(await unlabelledControls()).toEqual([]);
    await page.keyboard.press('Escape');
    // Focus comes back in the dialog's close event, a task after the close: waited for, not read at once.
    await page.locator('#key-dialog:not([open])').waitFor({ state: 'attached' });
    await page.waitForFunction(() => document.activeElement?.textContent === 'Create API key');

    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.locator('#key-dialog').getByLabel('Name').fill('CI uploads');
    await page.locator('#key-dialog').getByLabel('Role').selectOption('read-write');
    // The API's own message, in the dialog, for a folder it refuses.
    await page.locator('#key-dialog').getByLabel('Folder').fill('uploads');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect(visibleText('#key-dialog .form-error')).resolves.toBe('prefix must start with "/" (got "uploads")');
    await page.locator('#key-dialog').getByLabel('Folder').fill('');
    await screenshot('05-create-key');
    await page.getByRole('button', { name: 'Create key' }).click();

    const secretField = page.locator('#key-secret');
    await secretField.waitFor();
    createdSecret = await secretField.inputValue();
    expect(createdSecret).toMatch(/^drv_[A-Za-z0-9_-]{43}$/);
    await expect(visibleText('#key-secret-warning')).resolves.toContain('This is the only time the key is shown.');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(createdSecret);
    await screenshot('06-key-secret');

    expect((await api('/drive/list', createdSecret)).status).toBe(200);

    await page.getByRole('button', { name: 'Done' }).click();
    // The secret leaves the page with the dialog.
    await page.waitForFunction(() => document.getElementById('key-secret')?.value === '');
    const row = page.locator('tr', { hasText: 'CI uploads' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(`…${createdSecret.slice(-4)}`);
    await expect(row.textContent()).resolves.toContain('Read and write');
  });

  it('revokes the key after a confirmation, and the API then answers 401', async () => {
    // Cancelling changes nothing.
    await page.getByRole('button', { name: 'Revoke CI uploads' }).click();
    await expect(isModal('#confirm-dialog')).resolves.toBe(true);
    await expect(visibleText('#confirm-title')).resolves.toBe('Revoke “CI uploads”?');
    await screenshot('07-revoke-key');
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await api('/drive/list', createdSecret)).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke CI uploads' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.locator('tr', { hasText: 'CI uploads' }).waitFor({ state: 'detached' });

    expect((await api('/drive/list', createdSecret)).status).toBe(401);
    await page.getByLabel('Show revoked keys').check();
    await expect(page.locator('tr.revoked', { hasText: 'CI uploads' }).textContent()).resolves.toContain('Revoked');
  });

  it("adds a trust rule in Settings → Trust rules by keyboard alone, showing the API's message under the field it names", async () => {
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Trust rules' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trust rules' }).waitFor();
    await page.getByText('No trust rules to show.').waitFor();
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).getAttribute('aria-current')).resolves.toBe('page');
    expect(await unlabelledControls()).toEqual([]);

    // Keyboard: the button opens a modal dialog with focus in its first field; Tab goes through the fields in order.
    await page.getByRole('button', { name: 'Add trust rule' }).focus();
    await page.keyboard.press('Enter');
    await expect(isModal('#trust-dialog')).resolves.toBe(true);
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('trust-issuer');
    expect(await unlabelledControls()).toEqual([]);
    for (const [text, field] of [[issuer.url, 'trust-audience'], ['drive', 'trust-subject'], [RULE_SUBJECT, 'trust-claims'], ['repository_owner=acme', 'trust-role'], [null, 'trust-prefix'], ['/ingest', 'trust-max-ttl']] as const) {
      if (text !== null) await page.keyboard.type(text);
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(field);
    }
    // A life the API refuses: its message shows under that field, which takes the focus; nothing is added.
    await page.keyboard.type('30');
    await page.keyboard.press('Enter');
    await expect(visibleText('#trust-max-ttl-error')).resolves.toBe('max_ttl_seconds must be a whole number from 60 to 43200 (12 hours)');
    await expect(page.locator('#trust-max-ttl').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('trust-max-ttl');
    await expect(page.locator('#trust-dialog .form-error').isVisible()).resolves.toBe(false);
    await screenshot('07a-add-trust-rule');
    const none = (await (await api('/drive/trust', ADMIN)).json()) as { data: { trust: unknown[] } };
    expect(none.data.trust).toEqual([]);

    await page.keyboard.press('Control+A');
    await page.keyboard.type('900');
    await page.keyboard.press('Enter');

    // Added: the dialog closes, the rule is listed, says so, and focus goes to it.
    await page.locator('#trust-dialog:not([open])').waitFor({ state: 'attached' });
    const listed = (await (await api('/drive/trust', ADMIN)).json()) as { data: { trust: { id: string; subject: string; claims: unknown; role: string; prefix: string; max_ttl_seconds: number }[] } };
    expect(listed.data.trust).toEqual([expect.objectContaining({ subject: RULE_SUBJECT, claims: { repository_owner: 'acme' }, role: 'upload-only', prefix: '/ingest', max_ttl_seconds: 900 })]);
    trustRule = listed.data.trust[0];
    await said(page, `Added a trust rule: tokens of ${issuer.url} for ${RULE_SUBJECT} now exchange for upload only keys.`);
    await page.waitForFunction((id) => document.activeElement?.id === `trust-rule-${id}`, trustRule.id);
    const card = page.locator(`[data-rule-id="${trustRule.id}"]`);
    const text = await card.textContent();
    for (const shown of [issuer.url, 'drive', RULE_SUBJECT, 'repository_owner=acme', 'Upload only', '/ingest', '15 min (900 s)', 'None. A job that exchanges']) expect(text).toContain(shown);
  });

  it('shows a key minted through POST /drive/token live under its rule, counting down to its end', async () => {
    const token = await issuer.sign({ sub: 'repo:acme/etl:ref:refs/heads/main', repository_owner: 'acme' });
    const exchanged = await fetch(`${host.url}/drive/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ drive: 'default', token, ttl_seconds: 600 }) });
    expect(exchanged.status).toBe(200);
    minted = ((await exchanged.json()) as { data: typeof minted }).data;
    expect(minted.trust_id).toBe(trustRule.id);
    expect((await api('/drive/whoami', minted.key)).status).toBe(200);
    const keys = (await (await api('/drive/keys', ADMIN)).json()) as { data: { keys: { id: string; trust_id?: string }[] } };
    const keyId = keys.data.keys.find((key) => key.trust_id === trustRule.id)!.id;

    await page.getByRole('button', { name: 'Refresh' }).click();
    await said(page, 'Trust rules and their live keys read again.');
    const row = page.locator(`[data-rule-id="${trustRule.id}"] tr[data-key-id="${keyId}"]`);
    await row.waitFor();
    await expect(row.locator('th').textContent()).resolves.toBe(keyId);
    await expect(row.textContent()).resolves.toContain('repo:acme/etl:ref:refs/heads/main');
    await expect(row.locator('time').getAttribute('datetime')).resolves.toBe(minted.expires_at);
    const left = row.locator('[data-expires-at]');
    const first = (await left.textContent()) ?? '';
    // At most the 600 s asked for, to the second, as minutes and seconds.
    const [, minutes, seconds] = /^(\d+) min (\d\d) s left$/.exec(first) ?? [];
    expect(Number(minutes) * 60 + Number(seconds)).toBeLessThanOrEqual(600);
    expect(Number(minutes) * 60 + Number(seconds)).toBeGreaterThan(0);
    // It counts down: waited for, whatever this machine's speed.
    await page.waitForFunction((before) => document.querySelectorAll('[data-expires-at]')[0]?.textContent !== before, first);
    await screenshot('07b-trust-rules');

    // Past its end, the key says so: in a context of its own, whose clock (each context has one) is moved on.
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' });
    try {
      const tab = watched(await context.newPage());
      await context.clock.install();
      await tab.goto(`${host.url}/#/settings/trust`);
      await signIn(tab, ADMIN);
      const later = tab.locator(`tr[data-key-id="${keyId}"] [data-expires-at]`);
      await later.filter({ hasText: 'left' }).waitFor();
      await tab.clock.fastForward(Date.parse(minted.expires_at) - Date.now() + 2000);
      await later.filter({ hasText: /^expired$/ }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('revokes the rule after a confirmation: its minted key then gets 401', async () => {
    const revoke = page.getByRole('button', { name: `Revoke the rule for ${RULE_SUBJECT}` });
    await revoke.click();
    await expect(isModal('#confirm-dialog')).resolves.toBe(true);
    await expect(visibleText('#confirm-title')).resolves.toBe(`Revoke the trust rule for “${RULE_SUBJECT}”?`);
    await expect(visibleText('#confirm-body')).resolves.toContain('The key minted under it and still live stops working too (401 Unauthorized).');
    await page.keyboard.press('Escape');
    await page.waitForFunction((name) => document.activeElement?.textContent === name, 'Revoke…');
    expect((await api('/drive/whoami', minted.key)).status).toBe(200);

    await revoke.click();
    await page.getByRole('button', { name: 'Revoke rule' }).click();
    await said(page, `Revoked the trust rule for ${RULE_SUBJECT}, and the keys minted under it.`);
    await page.locator(`[data-rule-id="${trustRule.id}"]`).waitFor({ state: 'detached' });
    // No rule left to go to: focus goes to the Add button.
    await page.waitForFunction(() => document.activeElement?.textContent === 'Add trust rule');
    await page.getByText('No trust rules to show.').waitFor();

    expect((await api('/drive/whoami', minted.key)).status).toBe(401);
    const listed = (await (await api('/drive/trust', ADMIN)).json()) as { data: { trust: { revoked_at: string | null }[] } };
    expect(listed.data.trust[0].revoked_at).not.toBeNull();
    await page.getByLabel('Show revoked rules').check();
    const card = page.locator(`[data-rule-id="${trustRule.id}"].revoked`);
    await expect(card.textContent()).resolves.toContain('None: revoking the rule revoked its keys.');
  });

  it('creates a folder, opens it, and uploads a small and a large file by the file picker, the large one in parts straight to S3', async () => {
    await page.getByRole('link', { name: 'Files' }).click();
    await page.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
    await page.getByRole('button', { name: 'New folder' }).click();
    await expect(isModal('#folder-dialog')).resolves.toBe(true);
    await page.locator('#folder-dialog').getByLabel('Name').fill('reports');
    await screenshot('08-new-folder');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('link', { name: 'reports' }).click();
    await page.getByRole('heading', { level: 1, name: 'reports' }).waitFor();
    expect(page.url()).toBe(`${host.url}/#/files/reports`);

    const firstUpload = requested.length;
    await page.locator('input[type=file]').setInputFiles([join(largeFiles, 'notes.txt'), join(largeFiles, 'big.bin')]);
    await page.locator('.upload[data-state="done"]').nth(1).waitFor();
    await page.locator('tr', { hasText: 'big.bin' }).waitFor();
    await screenshot('09-uploaded');

    const calls = requested.slice(firstUpload);
    expect(calls.filter((url) => url === `${host.url}/drive/upload`)).toHaveLength(1);
    expect(calls.filter((url) => url === `${host.url}/drive/uploads`)).toHaveLength(1);
    expect(calls.filter((url) => url.startsWith(`${s3Origin}/`) && url.includes('partNumber='))).toHaveLength(2);
    expect(calls.filter((url) => /\/drive\/uploads\/[^/]+\/complete$/.test(url))).toHaveLength(1);
    const listed = (await (await api('/drive/list?folder=/reports', ADMIN)).json()) as { data: { files: { name: string; size: number }[] } };
    expect(listed.data.files.map(({ name, size }) => ({ name, size }))).toEqual([
      { name: 'big.bin', size: LARGE.length },
      { name: 'notes.txt', size: SMALL.length },
    ]);
  });

  it('asks before an upload replaces a file of the same name, and uploads nothing if told not to', async () => {
    const picker = page.locator('input[type=file]');
    const revised = { name: 'notes.txt', mimeType: 'text/plain', buffer: SMALL_V2 };

    await picker.setInputFiles([revised]);
    await expect(isModal('#confirm-dialog')).resolves.toBe(true);
    await expect(visibleText('#confirm-title')).resolves.toBe('Replace “notes.txt”?');
    await screenshot('10-replace-file');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await said(page, 'Nothing uploaded.');
    expect(await page.locator('.upload').count()).toBe(2);

    await picker.setInputFiles([revised]);
    await page.getByRole('button', { name: 'Replace file' }).click();
    await page.locator('.upload[data-state="done"]').nth(2).waitFor();
    const listed = (await (await api('/drive/list?folder=/reports', ADMIN)).json()) as { data: { files: { name: string; size: number }[] } };
    expect(listed.data.files.find((file) => file.name === 'notes.txt')?.size).toBe(SMALL_V2.length);
  });

  it('browses back to the file through the breadcrumbs and a folder link, and downloads it byte for byte', async () => {
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'All files' }).click();
    await page.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
    await page.getByRole('link', { name: 'reports' }).click();
    await page.getByRole('heading', { level: 1, name: 'reports' }).waitFor();
    await screenshot('11-folder');

    for (const [name, bytes] of [['big.bin', LARGE], ['notes.txt', SMALL_V2]] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${name}` }).click()]);
      expect(download.suggestedFilename()).toBe(name);
      const saved = await readFile((await download.path())!);
      expect({ name, size: saved.length, same: saved.equals(bytes) }).toEqual({ name, size: bytes.length, same: true });
    }
  });

  it('deletes a folder after showing what goes with it', async () => {
    await page.getByRole('button', { name: 'New folder' }).click();
    await page.locator('#folder-dialog').getByLabel('Name').fill('2024/q1');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('link', { name: '2024' }).waitFor();
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'All files' }).click();

    await page.getByRole('button', { name: 'Delete folder reports' }).click();
    await expect(isModal('#confirm-dialog')).resolves.toBe(true);
    await expect(visibleText('#confirm-title')).resolves.toBe('Delete “reports” and everything in it?');
    const summary = await visibleText('#confirm-body [data-summary]');
    expect(summary).toBe('2 files (9.5 MB) and 2 folders will be deleted with it.');
    await expect(page.locator('#confirm-body .doomed li').allTextContents()).resolves.toEqual(['2024 folder', '2024/q1 folder', 'big.bin 9.4 MB', 'notes.txt 2.1 kB']);
    await expect(hasFocusWithin('#confirm-dialog')).resolves.toBe(true);
    await screenshot('12-delete-folder');
    await deletedByJob(page.getByRole('button', { name: 'Delete folder', exact: true }));

    await page.getByText('This folder is empty.').waitFor();
    await said(page, 'Deleted /reports and 2 files in it.');
    expect((await api('/drive/list?folder=/reports', ADMIN)).status).toBe(404);
  });

  it("waits out a 429 for the time Retry-After gives, showing the API's message, then carries on", async () => {
    let limited = false;
    await page.route('**/drive/list?*', async (route) => {
      if (limited) return route.continue();
      limited = true;
      await route.fulfill({ status: 429, headers: { 'Retry-After': '2', 'Content-Type': 'application/json' }, body: JSON.stringify({ error: { code: 'rate_limited', message: 'rate limit of 300 requests per minute for this endpoint exceeded; retry in 2 seconds' } }) });
    });
    const started = Date.now();
    await page.getByRole('button', { name: 'New folder' }).click();
    await page.locator('#folder-dialog').getByLabel('Name').fill('later');
    await page.getByRole('button', { name: 'Create folder' }).click();

    await said(page, 'rate limit of 300 requests per minute for this endpoint exceeded; retry in 2 seconds. Trying again in 2 s.');
    await page.getByRole('link', { name: 'later' }).waitFor();
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    await page.unroute('**/drive/list?*');
  });

  it('uploads files dropped on the folder', async () => {
    const dropped = Buffer.from('dropped by drag and drop\n');
    // What a drag from the desktop carries: a DataTransfer holding a File, made in the page.
    const transfer = await page.evaluateHandle((text) => {
      const data = new DataTransfer();
      data.items.add(new File([text], 'dropped.txt', { type: 'text/plain' }));
      return data;
    }, dropped.toString());
    await page.dispatchEvent('[data-zone]', 'dragenter', { dataTransfer: transfer });
    await page.locator('.drop-zone.dragging').waitFor();
    await screenshot('13-drag-over');
    await page.dispatchEvent('[data-zone]', 'drop', { dataTransfer: transfer });

    await page.locator('tr', { hasText: 'dropped.txt' }).waitFor();
    await expect(page.locator('.drop-zone.dragging').count()).resolves.toBe(0);
    const saved = await api('/drive/download?path=/dropped.txt', ADMIN);
    expect(Buffer.from(await saved.arrayBuffer()).equals(dropped)).toBe(true);
  });

  // The big folder's two steps are two tests: together, on a busy machine, they passed Jest's 60 s, and a test
  // cut off mid-step leaves the shared page to the next one.
  const lists: string[] = [];
  const onRequest = (request: { url(): string }) => (request.url().includes('/drive/list') ? lists.push(request.url()) : undefined);

  it('shows a big folder a page at a time', async () => {
    // 450 files: three pages of at most 200 rows.
    for (let start = 0; start < 450; start += 225) {
      const form = new FormData();
      for (let i = start; i < start + 225; i++) form.append('files', new Blob([`row ${i}`]), `row-${String(i).padStart(3, '0')}.txt`);
      form.append('metadata', JSON.stringify(Array.from({ length: 225 }, () => ({ folder: '/many' }))));
      expect((await api('/drive/upload', ADMIN, { method: 'POST', body: form })).status).toBe(200);
    }
    page.on('request', onRequest);
    await page.goto(`${host.url}/#/files/many`);

    await page.getByText('Items 1–200').waitFor();
    await expect(page.locator('.listing tbody tr').count()).resolves.toBe(200);
    await expect(page.locator('.listing tbody tr').first().textContent()).resolves.toContain('row-000.txt');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Items 201–400').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Items 401–450').waitFor();
    await expect(page.locator('.listing tbody tr').count()).resolves.toBe(50);
    await expect(page.getByRole('button', { name: 'Next' }).isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('Items 201–400').waitFor();
    await screenshot('13a-paged-folder');
    // Every listing asked for a page, never the whole folder.
    expect(lists.length).toBeGreaterThanOrEqual(4);
    for (const url of lists) expect(new URL(url).searchParams.get('limit')).not.toBeNull();
  });

  it('confirms the delete of a big folder from one small page of it', async () => {
    await page.getByRole('button', { name: 'Delete folder…' }).click();
    await expect(visibleText('#confirm-body [data-summary]')).resolves.toBe('More than 8 items (files and folders, at every depth) will be deleted with it.');
    await expect(page.locator('#confirm-body .doomed li').count()).resolves.toBe(8);
    // The confirmation read one page of 8 entries.
    expect(new URL(lists.at(-1)!).searchParams.get('limit')).toBe('8');
    await deletedByJob(page.getByRole('button', { name: 'Delete folder', exact: true }));
    await said(page, 'Deleted /many and 450 files in it.');
    page.off('request', onRequest);
    expect((await api('/drive/list?folder=/many', ADMIN)).status).toBe(404);
  });

  it('sorts the rows of a page by name in natural order (case ignored), by size and by date, folders first', async () => {
    await uploadTo('/sorting', [['file10.txt', 'x'.repeat(10)], ['file2.txt', 'x'.repeat(300)], ['File3.txt', 'x'.repeat(20)], ['file1.txt', 'x']]);
    expect((await api('/drive/folders', ADMIN, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path: '/sorting/zeta' }) })).status).toBe(200);
    await page.goto(`${host.url}/#/files/sorting`);
    await page.getByRole('heading', { level: 1, name: 'sorting' }).waitFor();
    await page.locator('tr', { hasText: 'file10.txt' }).waitFor();

    // The API's byte order would be File3, file1, file10, file2.
    await expect(rowNames()).resolves.toEqual(['zeta', 'file1.txt', 'file2.txt', 'File3.txt', 'file10.txt']);
    await expect(page.locator('th[data-sort="name"]').getAttribute('aria-sort')).resolves.toBe('ascending');
    await expect(page.getByRole('button', { name: 'Size' }).getAttribute('title')).resolves.toContain('Sorts the rows of this page');

    // Keyboard: the headers are buttons.
    await page.getByRole('button', { name: 'Size' }).focus();
    await page.keyboard.press('Enter');
    await expect(rowNames()).resolves.toEqual(['zeta', 'file2.txt', 'File3.txt', 'file10.txt', 'file1.txt']);
    await expect(page.locator('th[data-sort="size"]').getAttribute('aria-sort')).resolves.toBe('descending');
    await expect(page.locator('th[data-sort="name"]').getAttribute('aria-sort')).resolves.toBeNull();
    await page.getByRole('button', { name: 'Size' }).click();
    await expect(rowNames()).resolves.toEqual(['zeta', 'file1.txt', 'file10.txt', 'File3.txt', 'file2.txt']);
    await screenshot('13b-sorted-by-size');
    // Newest first: the upload went in the order given.
    await page.getByRole('button', { name: 'Modified' }).click();
    await expect(rowNames()).resolves.toEqual(['zeta', 'file1.txt', 'File3.txt', 'file2.txt', 'file10.txt']);
    await page.getByRole('button', { name: 'Name' }).click();
    await page.getByRole('button', { name: 'Name' }).click();
    await expect(rowNames()).resolves.toEqual(['zeta', 'file10.txt', 'File3.txt', 'file2.txt', 'file1.txt']);
    await page.getByRole('button', { name: 'Name' }).click();
  });

  it('deletes a file after a confirmation, and nothing when cancelled', async () => {
    await page.getByRole('button', { name: 'Delete file10.txt' }).click();
    await expect(isModal('#confirm-dialog')).resolves.toBe(true);
    await expect(visibleText('#confirm-title')).resolves.toBe('Delete “file10.txt”?');
    await expect(hasFocusWithin('#confirm-dialog')).resolves.toBe(true);
    await screenshot('13c-delete-file');
    await page.keyboard.press('Escape');
    expect((await api('/drive/download?path=/sorting/file10.txt', ADMIN, { method: 'HEAD' })).status).toBe(200);

    await page.getByRole('button', { name: 'Delete file10.txt' }).click();
    await page.getByRole('button', { name: 'Delete file', exact: true }).click();
    await said(page, 'Deleted /sorting/file10.txt.');
    await page.locator('tr', { hasText: 'file10.txt' }).waitFor({ state: 'detached' });
    expect((await api('/drive/download?path=/sorting/file10.txt', ADMIN, { method: 'HEAD' })).status).toBe(404);
  });

  test('renames a file in place: Enter saves, Escape puts the name back, and a taken name offers Replace', async () => {
    await page.goto(`${host.url}/#/files/sorting`);
    await page.locator('tr', { hasText: 'file1.txt' }).waitFor();
    await rowsSettled(page);
    await page.getByRole('button', { name: 'More actions for file1.txt' }).click();
    await page.getByRole('button', { name: 'Rename' }).click();
    const input = page.getByLabel('New name for file1.txt');
    // The name before its extension is selected, so typing keeps ".txt".
    await expect(input.evaluate((el) => [(el as unknown as { selectionStart: number }).selectionStart, (el as unknown as { selectionEnd: number }).selectionEnd])).resolves.toEqual([0, 5]);
    await page.keyboard.press('Escape');
    await expect(rowNames()).resolves.toContain('file1.txt');

    await page.getByRole('button', { name: 'More actions for file1.txt' }).click();
    await page.getByRole('button', { name: 'Rename' }).click();
    await input.fill('first.txt');
    await page.keyboard.press('Enter');
    await said(page, 'Renamed /sorting/file1.txt to /sorting/first.txt.');
    await page.locator('tr', { hasText: 'first.txt' }).waitFor();
    expect((await api('/drive/download?path=/sorting/first.txt', ADMIN, { method: 'HEAD' })).status).toBe(200);

    // A taken name: 409, then Replace overwrites.
    await page.getByRole('button', { name: 'More actions for first.txt' }).click();
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('New name for first.txt').fill('file2.txt');
    await page.keyboard.press('Enter');
    await page.getByText('/sorting/file2.txt exists already').waitFor();
    await screenshot('13d-rename-conflict');
    await page.getByRole('button', { name: 'Replace', exact: true }).click();
    await said(page, 'Renamed /sorting/first.txt to /sorting/file2.txt.');
    const listed = (await (await api('/drive/list?folder=/sorting', ADMIN)).json()) as { data: { files: { name: string; size: number }[] } };
    expect(listed.data.files.map(({ name, size }) => ({ name, size }))).toEqual([{ name: 'File3.txt', size: 20 }, { name: 'file2.txt', size: 1 }]);
  });

  test('moves and copies through the folder picker, and refuses a folder into itself', async () => {
    await page.goto(`${host.url}/#/files/sorting`);
    await page.locator('tr', { hasText: 'File3.txt' }).waitFor();
    await rowsSettled(page);

    await page.getByRole('button', { name: 'More actions for File3.txt' }).click();
    await page.getByRole('button', { name: 'Copy…' }).click();
    await expect(isModal('#transfer-dialog')).resolves.toBe(true);
    await expect(visibleText('#transfer-title')).resolves.toBe('Copy “File3.txt”');
    await page.locator('#transfer-dialog').getByRole('button', { name: 'zeta' }).click();
    await expect(visibleText('#transfer-target')).resolves.toBe('Copies it to /sorting/zeta/File3.txt');
    expect(await unlabelledControls()).toEqual([]);
    await screenshot('13e-copy-picker');
    await page.getByRole('button', { name: 'Copy here' }).click();
    await said(page, 'Copied /sorting/File3.txt to /sorting/zeta/File3.txt.');
    await rowsSettled(page);

    // The same again: the destination is taken, and Replace overwrites it.
    await page.getByRole('button', { name: 'More actions for File3.txt' }).click();
    await page.getByRole('button', { name: 'Move…' }).click();
    await page.locator('#transfer-dialog').getByRole('button', { name: 'zeta' }).click();
    await page.getByRole('button', { name: 'Move here' }).click();
    await page.locator('#transfer-dialog').getByText('/sorting/zeta/File3.txt exists already').waitFor();
    await page.locator('#transfer-dialog').getByRole('button', { name: 'Replace' }).click();
    await said(page, 'Moved /sorting/File3.txt to /sorting/zeta/File3.txt.');
    await page.locator('tr', { hasText: 'File3.txt' }).waitFor({ state: 'detached' });
    expect((await api('/drive/download?path=/sorting/zeta/File3.txt', ADMIN, { method: 'HEAD' })).status).toBe(200);

    // A folder cannot be picked as its own destination; going up to the root works.
    await page.getByRole('button', { name: 'More actions for zeta' }).click();
    await page.getByRole('button', { name: 'Move…' }).click();
    await expect(page.locator('#transfer-dialog').getByRole('button', { name: 'zeta' }).isDisabled()).resolves.toBe(true);
    await page.locator('#transfer-dialog').getByRole('button', { name: 'All files' }).click();
    await page.getByRole('button', { name: 'Move here' }).click();
    await said(page, 'Moved /sorting/zeta to /zeta.');
    expect((await api('/drive/list?folder=/zeta', ADMIN)).status).toBe(200);
  });

  test('copies a share link with the expiry chosen, lists it, and revokes it', async () => {
    await page.goto(`${host.url}/#/files/sorting`);
    await page.locator('tr', { hasText: 'file2.txt' }).waitFor();
    await rowsSettled(page);
    await page.getByRole('button', { name: 'More actions for file2.txt' }).click();
    await page.getByRole('button', { name: 'Share link…' }).click();
    await expect(isModal('#share-dialog')).resolves.toBe(true);
    await expect(page.locator('#share-expiry option').allTextContents()).resolves.toEqual(['1 hour', '1 day', '7 days', '30 days']);
    await page.getByLabel('Expires after').selectOption({ label: '7 days' });
    await page.getByRole('button', { name: 'Copy link' }).click();
    await said(page, 'The link is on the clipboard.');
    const url = await page.locator('#share-url').inputValue();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(url);
    // The link opens the file in a fresh browser context, with no key and no session: shown in the tab with
    // ?download=0 (plain text is a type a browser shows without running it).
    const stranger = await browser.newContext();
    try {
      const tab = await stranger.newPage();
      const shown = await tab.goto(`${url}?download=0`);
      expect(shown?.status()).toBe(200);
      await expect(tab.locator('body').innerText()).resolves.toBe(await (await api('/drive/download?path=/sorting/file2.txt', ADMIN)).text());
    } finally {
      await stranger.close();
    }
    await page.locator('#share-dialog [data-links] li').first().waitFor();
    await expect(page.locator('#share-dialog [data-links] li').count()).resolves.toBe(1);
    expect(await unlabelledControls()).toEqual([]);
    await screenshot('13f-share-link');

    await page.locator('#share-dialog [data-links] li').getByRole('button', { name: /^Revoke/ }).click();
    await said(page, 'Link revoked: it no longer opens the file.');
    await expect(page.locator('#share-dialog [data-links] li').count()).resolves.toBe(0);
    expect((await fetch(url)).status).toBe(404);
    await page.getByRole('button', { name: 'Done' }).click();
    // The link leaves the page with the dialog (once the dialog's close has been handled).
    await page.waitForFunction(() => document.getElementById('share-url')?.value === '');
  });

  it('signs in with a read-only key: it browses and downloads, with no write button and no Settings', async () => {
    const reader = watched(await page.context().newPage());
    try {
      await reader.goto(`${host.url}/#/files/sorting`);
      await reader.getByRole('textbox', { name: 'API key' }).fill(READER);
      await reader.getByRole('button', { name: 'Sign in' }).click();
      await reader.getByRole('heading', { level: 1, name: 'sorting' }).waitFor();
      await reader.locator('tr', { hasText: 'file2.txt' }).waitFor();

      await expect(reader.getByRole('button', { name: 'Download file2.txt' }).isVisible()).resolves.toBe(true);
      for (const name of ['New folder', 'Upload files', 'Delete folder…']) await expect(reader.getByRole('button', { name, exact: true }).isVisible()).resolves.toBe(false);
      await expect(reader.locator('.file-button').isVisible()).resolves.toBe(false);
      await expect(reader.locator('tbody button', { hasText: /Delete|More/ }).count()).resolves.toBe(0);
      await expect(reader.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).isVisible()).resolves.toBe(false);
      await expect(reader.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).isVisible()).resolves.toBe(true);
      await reader.screenshot({ path: join(SCREENSHOTS, '15-read-only.png'), fullPage: true });

      // Settings by its address: the files instead, saying why, and nothing of them asked of the API.
      const calls: string[] = [];
      reader.on('request', (request) => calls.push(request.url()));
      await reader.goto(`${host.url}/#/settings/api-keys`);
      await reader.getByText('Settings → API Keys needs an admin key').waitFor();
      await reader.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
      await reader.goto(`${host.url}/#/settings/trust`);
      await reader.getByText('Settings → Trust rules needs an admin key').waitFor();
      await reader.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
      await expect(reader.locator('.trust-view, .settings-nav').count()).resolves.toBe(0);
      expect(calls.filter((url) => /\/drive\/(trust|keys)/.test(url))).toEqual([]);

      const [download] = await Promise.all([reader.waitForEvent('download'), reader.goto(`${host.url}/#/files/sorting`).then(() => reader.getByRole('button', { name: 'Download file2.txt' }).click())]);
      expect(download.suggestedFilename()).toBe('file2.txt');
    } finally {
      await reader.close();
    }
  });

  it('signs in with an upload-only key: it uploads into the folder it names, and lists nothing', async () => {
    const uploader = watched(await page.context().newPage());
    try {
      await uploader.goto(`${host.url}/#/files/sorting`);
      await uploader.getByRole('textbox', { name: 'API key' }).fill(UPLOADER);
      await uploader.getByRole('button', { name: 'Sign in' }).click();
      await uploader.getByText('This key may upload here, but not list or download.').waitFor();
      await expect(uploader.locator('table.listing').isVisible()).resolves.toBe(false);
      await expect(uploader.getByRole('button', { name: 'New folder' }).isVisible()).resolves.toBe(true);
      await expect(uploader.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).isVisible()).resolves.toBe(false);
      await uploader.screenshot({ path: join(SCREENSHOTS, '16-upload-only.png'), fullPage: true });

      await uploader.locator('input[type=file]').setInputFiles([{ name: 'pushed.txt', mimeType: 'text/plain', buffer: Buffer.from('pushed\n') }]);
      await uploader.locator('.upload[data-state="done"]').first().waitFor();
      expect((await api('/drive/download?path=/sorting/pushed.txt', ADMIN, { method: 'HEAD' })).status).toBe(200);

      // It types a folder's path to go there, having no listing to click through.
      await uploader.getByLabel('Open folder').fill('/elsewhere/deeper');
      await uploader.getByRole('button', { name: 'Open', exact: true }).click();
      await uploader.getByRole('heading', { level: 1, name: 'deeper' }).waitFor();
    } finally {
      await uploader.close();
    }
  });

  it('signs a tab out, saying why, when its key is revoked elsewhere', async () => {
    const created = (await (await api('/drive/keys', ADMIN, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'second admin', role: 'admin' }) })).json()) as { data: { key: { id: string }; secret: string } };
    secondAdmin = created.data.secret;
    // Another tab: session storage is per tab, so it signs in on its own.
    const other = watched(await page.context().newPage());
    try {
      await other.goto(`${host.url}/`);
      await other.getByRole('textbox', { name: 'API key' }).fill(secondAdmin);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.getByRole('heading', { level: 1, name: 'All files' }).waitFor();

      expect((await api(`/drive/keys/${created.data.key.id}`, ADMIN, { method: 'DELETE' })).status).toBe(200);
      await other.getByRole('link', { name: 'Settings' }).click();

      await other.getByText('This tab was signed out: its key was revoked or is no longer valid.').waitFor();
      await expect(other.evaluate(() => sessionStorage.length)).resolves.toBe(0);
      await other.screenshot({ path: join(SCREENSHOTS, '14-signed-out-revoked.png'), fullPage: true });
    } finally {
      await other.close();
    }
    // This tab, signed in with another key, is still in.
    await expect(page.evaluate(() => sessionStorage.getItem('drive.apiKey'))).resolves.toBe(ADMIN);
  });

  it('draws the newest listing of a folder when an older one answers last', async () => {
    expect((await api('/drive/folders', ADMIN, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path: '/stale' }) })).status).toBe(200);
    const tab = watched(await page.context().newPage());
    try {
      await tab.goto(`${host.url}/#/files/stale`);
      await signIn(tab, ADMIN);
      await tab.getByText('This folder is empty.').waitFor();
      await rowsSettled(tab);
      // The listing after the first upload is read from the drive at once, but the page gets its answer only
      // once the listing after the second upload has been drawn: as a busy machine may order them.
      const held = new Promise<{ route: Route; response: APIResponse }>((resolve) => {
        void tab.route('**/drive/list?*', async (route) => resolve({ route, response: await route.fetch() }), { times: 1 });
      });
      const olderDropped = tab.waitForEvent('requestfailed', (request) => request.url().startsWith(`${host.url}/drive/list?`));
      await tab.locator('input[type=file]').setInputFiles([{ name: 'first.txt', mimeType: 'text/plain', buffer: Buffer.from('first\n') }]);
      const older = await held;
      await tab.locator('input[type=file]').setInputFiles([{ name: 'second.txt', mimeType: 'text/plain', buffer: Buffer.from('second\n') }]);
      await tab.locator('tr', { hasText: 'second.txt' }).waitFor();
      // The newer listing aborted the older call, whose late answer is then never drawn.
      await olderDropped;
      await older.route.fulfill({ response: older.response }).catch(() => undefined);
      await expect(tab.locator('.listing tbody th.name').allTextContents()).resolves.toEqual(['first.txt', 'second.txt']);
    } finally {
      await tab.close();
    }
  });

  it('signs out of the whole session: the next key on the tab sees no upload, name, message or dialog of the last', async () => {
    expect((await api('/drive/folders', ADMIN, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path: '/confidential-plans' }) })).status).toBe(200);
    const tab = watched(await page.context().newPage());
    /** The large upload's parts, held on their way to S3 so that it is still running when the tab signs out. */
    const held: Route[] = [];
    try {
      await tab.goto(`${host.url}/#/files/confidential-plans`);
      await signIn(tab, ADMIN);
      await tab.getByRole('heading', { level: 1, name: 'confidential-plans' }).waitFor();
      await tab.locator('input[type=file]').setInputFiles([{ name: 'secret-memo.txt', mimeType: 'text/plain', buffer: SMALL }]);
      await tab.locator('tr', { hasText: 'secret-memo.txt' }).waitFor();
      // A confirmation seen and cancelled (its dialog keeps the path), and the rows sorted by size.
      await tab.getByRole('button', { name: 'Delete secret-memo.txt' }).click();
      await tab.getByRole('button', { name: 'Cancel' }).click();
      await tab.locator('#confirm-dialog:not([open])').waitFor({ state: 'attached' });
      await tab.getByRole('button', { name: 'Size' }).click();
      await tab.route(`${s3Origin}/**`, (route) => void held.push(route));
      const partSent = tab.waitForRequest((request) => request.url().startsWith(`${s3Origin}/`));
      await tab.locator('input[type=file]').setInputFiles(join(largeFiles, 'secret-archive.bin'));
      await partSent;
      await expect(tab.locator('.upload[data-state="running"]').count()).resolves.toBe(1);

      const aborted = tab.waitForResponse((response) => response.request().method() === 'DELETE' && /\/drive\/uploads\/[^/?]+$/.test(response.url()));
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.getByRole('heading', { level: 1, name: 'Sign in to Drive' }).waitFor();
      const abortStatus = (await aborted).status();
      await expect(tracesIn(tab)).resolves.toEqual({ names: [], stored: 0, tray: { hidden: true, rows: 0 } });
      // The running upload's session was aborted with the key it started with, though the tab has forgotten it.
      expect(abortStatus).toBe(200);
      // Said last: nothing of the session (its uploads finishing) speaks after it.
      await said(tab, 'Signed out. The key is forgotten by this tab.');
      await tab.screenshot({ path: join(SCREENSHOTS, '17-signed-out.png'), fullPage: true });

      // The next key, of another drive, on the same tab.
      await signIn(tab, ELSEWHERE);
      await tab.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
      await tab.getByText('This folder is empty.').waitFor();
      await expect(tab.locator('th[data-sort="name"]').getAttribute('aria-sort')).resolves.toBe('ascending');
      await expect(tracesIn(tab)).resolves.toEqual({ names: [], stored: 2, tray: { hidden: true, rows: 0 } });
    } finally {
      for (const route of held) await route.abort().catch(() => undefined);
      await tab.close();
    }
  });

  it("fits a phone's width (390 and 320 px) and a tablet's: no sideways scroll, and long names wrap between their words; so do the trust rules", async () => {
    const folder = 'Quarterly statements and supporting_documents_for_the_general_meeting.2024';
    const file = 'board-minutes_final_signed_copy.version-two.pdf';
    // One part longer than any line: the only name broken inside a word, where the line ends.
    const unbroken = `${'x'.repeat(72)}.txt`;
    expect((await api('/drive/folders', ADMIN, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path: `/phone/${folder}` }) })).status).toBe(200);
    await uploadTo('/phone', [[file, 'minutes\n'], [unbroken, 'x\n']]);
    const tab = watched(await page.context().newPage());
    try {
      await tab.setViewportSize({ width: 390, height: 844 });
      await tab.goto(`${host.url}/#/files/phone`);
      await signIn(tab, ADMIN);
      await tab.locator('tr', { hasText: file }).waitFor();
      // A tablet's widths too: the full table, where a long part of a name must not widen it.
      for (const width of [1024, 768, 390, 320]) {
        await tab.setViewportSize({ width, height: 844 });
        await expect(tab.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }))).resolves.toEqual({ scrollWidth: width, innerWidth: width });
        for (const name of [folder, file]) await expect(midWordBreaks(tab.locator('tr', { hasText: name }).locator('th.name'))).resolves.toEqual([]);
        await tab.screenshot({ path: join(SCREENSHOTS, `18-files-${width}px.png`), fullPage: true });
      }
      // The folder itself: its name as the heading and in the breadcrumbs.
      await tab.getByRole('link', { name: folder }).click();
      await tab.getByRole('heading', { level: 1, name: folder }).waitFor();
      for (const width of [390, 320]) {
        await tab.setViewportSize({ width, height: 844 });
        await expect(tab.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }))).resolves.toEqual({ scrollWidth: width, innerWidth: width });
        await expect(midWordBreaks(tab.locator('h1'))).resolves.toEqual([]);
      }
      await tab.screenshot({ path: join(SCREENSHOTS, '19-phone-folder.png'), fullPage: true });

      // Settings → Trust rules: a rule with a long subject and a live key beside the revoked one.
      const subject = 'repo:acme/nightly-exports-of-the-warehouse:environment:production-eu-west-1';
      const rule = { issuer: issuer.url, audience: 'drive', subject, claims: { repository_owner: 'acme' }, role: 'read-write', prefix: '/phone' };
      expect((await api('/drive/trust', ADMIN, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(rule) })).status).toBe(200);
      const token = await issuer.sign({ sub: subject, repository_owner: 'acme' });
      expect((await fetch(`${host.url}/drive/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ drive: 'default', token }) })).status).toBe(200);
      await tab.goto(`${host.url}/#/settings/trust`);
      await tab.getByLabel('Show revoked rules').check();
      await tab.locator('.trust-rule.revoked').waitFor();
      await tab.locator('.trust-rule:not(.revoked) tr[data-key-id]').waitFor();
      for (const width of [390, 320]) {
        await tab.setViewportSize({ width, height: 844 });
        await expect(tab.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }))).resolves.toEqual({ scrollWidth: width, innerWidth: width });
      }
      await tab.screenshot({ path: join(SCREENSHOTS, '20-phone-trust-rules.png'), fullPage: true });
    } finally {
      await tab.close();
    }
  });

  it('signs out and forgets the key; no key ever went into a URL, and the page broke no rule of its policy', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in to Drive' }).waitFor();
    await expect(page.evaluate(() => sessionStorage.length)).resolves.toBe(0);

    expect(requested.length).toBeGreaterThan(10);
    for (const secret of [ADMIN, READER, UPLOADER, ELSEWHERE, createdSecret, secondAdmin, minted.key]) {
      expect(secret).not.toBe('');
      expect(requested.filter((url) => url.includes(secret) || decodeURIComponent(url).includes(secret))).toEqual([]);
      expect(page.url()).not.toContain(secret);
    }
    expect(pageErrors).toEqual([]);
  });
});

/** The names in the rows of the listing, top to bottom. */
function rowNames(): Promise<string[]> {
  return page.locator('.listing tbody th.name').allTextContents();
}

/** Uploads `files` (name, text) into `folder` through the API, one after the other, so newest first is their reverse. */
async function uploadTo(folder: string, files: [string, string][]): Promise<void> {
  for (const [name, text] of files) {
    const form = new FormData();
    form.append('files', new Blob([text]), name);
    form.append('metadata', JSON.stringify([{ folder }]));
    const answer = await api('/drive/upload', ADMIN, { method: 'POST', body: form });
    expect(answer.status).toBe(200);
    // The next one goes once the clock has passed this one's time (not after a fixed pause), so their times differ.
    const stored = Date.parse(((await answer.json()) as { data: { created_at: string }[] }).data[0].created_at);
    while (Date.now() <= stored) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Signs `tab` in with `key` from the sign-in form. */
async function signIn(tab: Page, key: string): Promise<void> {
  await tab.getByRole('textbox', { name: 'API key' }).fill(key);
  await tab.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * What `tab` holds of the sign-out test's first session: its names anywhere in the page (markup, field values,
 * address, title), the number of items in its storages, and the uploads tray.
 */
function tracesIn(tab: Page): Promise<{ names: string[]; stored: number; tray: { hidden: boolean; rows: number } }> {
  return tab.evaluate(() => {
    const values = Array.from(document.querySelectorAll('input, textarea, select'), (field) => field.value ?? '');
    const page = [document.documentElement.outerHTML, ...values, location.href, document.title].join('\n');
    return {
      names: ['confidential-plans', 'secret-memo', 'secret-archive'].filter((name) => page.includes(name)),
      stored: sessionStorage.length + localStorage.length,
      tray: { hidden: document.getElementById('uploads')?.hidden === true, rows: document.querySelectorAll('#uploads-list li').length },
    };
  });
}


/**
 * Clicks `button`, which deletes a folder by a job (the host has no budget for a request's deletes), and
 * waits through the API for the job to finish, however long this machine takes: the page, which reads the
 * job less and less often (at most every 5 s), then reports it within one more read.
 */
async function deletedByJob(button: Locator): Promise<void> {
  const [answer] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'DELETE' && response.url().startsWith(`${host.url}/drive/folders?`)), button.click()]);
  expect(answer.status()).toBe(202);
  const { id } = ((await answer.json()) as { data: { job: { id: string } } }).data.job;
  for (;;) {
    const read = (await (await api(`/drive/jobs/${encodeURIComponent(id)}`, ADMIN)).json()) as { data: { job: { status: string } } };
    if (read.data.job.status === 'done') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until the files view of `tab` has no listing on its way. An action reloads the rows after saying what
 * it did; a row's menu opened before they are redrawn goes with the old row.
 */
async function rowsSettled(tab: Page): Promise<void> {
  await tab.locator('.files-view[aria-busy]').waitFor({ state: 'detached' });
}

/** Waits until `tab` has said `message` (or a message containing it) in its status or alert region. */
async function said(tab: Page, message: string): Promise<void> {
  await tab.waitForFunction((text) => driveMessages.some((shown) => shown.includes(text)), message);
}

/** The text of the element once it is visible. */
async function visibleText(selector: string): Promise<string> {
  const element = page.locator(selector);
  await element.waitFor({ state: 'visible' });
  return (await element.textContent()) ?? '';
}

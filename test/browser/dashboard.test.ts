import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

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
  getElementById(id: string): { readonly value?: string } | null;
};
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
const SMALL = Buffer.concat([Buffer.from('quarterly notes\n'), randomBytes(2048)]);
const SMALL_V2 = Buffer.concat([Buffer.from('quarterly notes, revised\n'), randomBytes(2040)]);
// Over the dashboard's 4 MiB threshold and the API's 8 MiB part size: two parts straight to S3.
const LARGE = randomBytes(9 * 1024 * 1024 + 12345);

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
  // Every recursive delete of a tree is a job (no request budget), so the page follows one to its end.
  host = await startHost({ DRIVE_API_KEYS: `default:${ADMIN}:admin,default:${READER}:read-only,default:${UPLOADER}:upload-only`, DRIVE_RATE_LIMITS: 'off', DRIVE_DELETE_BUDGET_MS: '0' });
  s3Origin = (JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as { s3: string }).s3;
  browser = await launchChromium();
  // Reduced motion: no transitions, so each screenshot shows a view as it settles.
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true, reducedMotion: 'reduce' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: host.url });
  page = watched(await context.newPage());
}, 10 * 60_000);

/** `tab`, with its requests and errors recorded, and a step timeout shorter than jest's, so a stuck step says where it stuck. */
function watched(tab: Page): Page {
  tab.setDefaultTimeout(15_000);
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
    await expect(page.locator('#key-dialog').evaluate((dialog) => dialog.matches('[open]'))).resolves.toBe(false);
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Create API key');

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
    await page.locator('input[type=file]').setInputFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: SMALL },
      { name: 'big.bin', mimeType: 'application/octet-stream', buffer: LARGE },
    ]);
    await page.locator('.upload[data-state="done"]').nth(1).waitFor({ timeout: 60_000 });
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
    await page.getByText('Nothing uploaded.').waitFor();
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
    await page.getByRole('button', { name: 'Delete folder', exact: true }).click();

    await page.getByText('This folder is empty.').waitFor();
    await page.getByText('Deleted /reports and 2 files in it.').waitFor();
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

    await page.getByText('rate limit of 300 requests per minute for this endpoint exceeded; retry in 2 seconds. Trying again in 2 s.').waitFor();
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

  it('shows a big folder a page at a time, and confirms its delete from one small page of it', async () => {
    // 450 files: three pages of at most 200 rows.
    for (let start = 0; start < 450; start += 90) {
      const form = new FormData();
      for (let i = start; i < start + 90; i++) form.append('files', new Blob([`row ${i}`]), `row-${String(i).padStart(3, '0')}.txt`);
      form.append('metadata', JSON.stringify(Array.from({ length: 90 }, () => ({ folder: '/many' }))));
      expect((await api('/drive/upload', ADMIN, { method: 'POST', body: form })).status).toBe(200);
    }
    const lists: string[] = [];
    const onRequest = (request: { url(): string }) => (request.url().includes('/drive/list') ? lists.push(request.url()) : undefined);
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

    await page.getByRole('button', { name: 'Delete folder…' }).click();
    await expect(visibleText('#confirm-body [data-summary]')).resolves.toBe('More than 8 items (files and folders, at every depth) will be deleted with it.');
    await expect(page.locator('#confirm-body .doomed li').count()).resolves.toBe(8);
    // The confirmation read one page of 8 entries.
    expect(new URL(lists.at(-1)!).searchParams.get('limit')).toBe('8');
    await page.getByRole('button', { name: 'Delete folder', exact: true }).click();
    await page.getByText('Deleted /many and 450 files in it.').waitFor();
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
    await page.getByText('Deleted /sorting/file10.txt.').waitFor();
    await page.locator('tr', { hasText: 'file10.txt' }).waitFor({ state: 'detached' });
    expect((await api('/drive/download?path=/sorting/file10.txt', ADMIN, { method: 'HEAD' })).status).toBe(404);
  });

  test('renames a file in place: Enter saves, Escape puts the name back, and a taken name offers Replace', async () => {
    await page.goto(`${host.url}/#/files/sorting`);
    await page.locator('tr', { hasText: 'file1.txt' }).waitFor();
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
    await page.getByText('Renamed /sorting/file1.txt to /sorting/first.txt.').waitFor();
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
    await page.getByText('Renamed /sorting/first.txt to /sorting/file2.txt.').waitFor();
    const listed = (await (await api('/drive/list?folder=/sorting', ADMIN)).json()) as { data: { files: { name: string; size: number }[] } };
    expect(listed.data.files.map(({ name, size }) => ({ name, size }))).toEqual([{ name: 'File3.txt', size: 20 }, { name: 'file2.txt', size: 1 }]);
  });

  test('moves and copies through the folder picker, and refuses a folder into itself', async () => {
    await page.goto(`${host.url}/#/files/sorting`);
    await page.locator('tr', { hasText: 'File3.txt' }).waitFor();

    await page.getByRole('button', { name: 'More actions for File3.txt' }).click();
    await page.getByRole('button', { name: 'Copy…' }).click();
    await expect(isModal('#transfer-dialog')).resolves.toBe(true);
    await expect(visibleText('#transfer-title')).resolves.toBe('Copy “File3.txt”');
    await page.locator('#transfer-dialog').getByRole('button', { name: 'zeta' }).click();
    await expect(visibleText('#transfer-target')).resolves.toBe('Copies it to /sorting/zeta/File3.txt');
    expect(await unlabelledControls()).toEqual([]);
    await screenshot('13e-copy-picker');
    await page.getByRole('button', { name: 'Copy here' }).click();
    await page.getByText('Copied /sorting/File3.txt to /sorting/zeta/File3.txt.').waitFor();

    // The same again: the destination is taken, and Replace overwrites it.
    await page.getByRole('button', { name: 'More actions for File3.txt' }).click();
    await page.getByRole('button', { name: 'Move…' }).click();
    await page.locator('#transfer-dialog').getByRole('button', { name: 'zeta' }).click();
    await page.getByRole('button', { name: 'Move here' }).click();
    await page.locator('#transfer-dialog').getByText('/sorting/zeta/File3.txt exists already').waitFor();
    await page.locator('#transfer-dialog').getByRole('button', { name: 'Replace' }).click();
    await page.getByText('Moved /sorting/File3.txt to /sorting/zeta/File3.txt.').waitFor();
    await page.locator('tr', { hasText: 'File3.txt' }).waitFor({ state: 'detached' });
    expect((await api('/drive/download?path=/sorting/zeta/File3.txt', ADMIN, { method: 'HEAD' })).status).toBe(200);

    // A folder cannot be picked as its own destination; going up to the root works.
    await page.getByRole('button', { name: 'More actions for zeta' }).click();
    await page.getByRole('button', { name: 'Move…' }).click();
    await expect(page.locator('#transfer-dialog').getByRole('button', { name: 'zeta' }).isDisabled()).resolves.toBe(true);
    await page.locator('#transfer-dialog').getByRole('button', { name: 'All files' }).click();
    await page.getByRole('button', { name: 'Move here' }).click();
    await page.getByText('Moved /sorting/zeta to /zeta.').waitFor();
    expect((await api('/drive/list?folder=/zeta', ADMIN)).status).toBe(200);
  });

  test('copies a share link with the expiry chosen, lists it, and revokes it', async () => {
    await page.goto(`${host.url}/#/files/sorting`);
    await page.locator('tr', { hasText: 'file2.txt' }).waitFor();
    await page.getByRole('button', { name: 'More actions for file2.txt' }).click();
    await page.getByRole('button', { name: 'Share link…' }).click();
    await expect(isModal('#share-dialog')).resolves.toBe(true);
    await expect(page.locator('#share-expiry option').allTextContents()).resolves.toEqual(['1 hour', '1 day', '7 days', '30 days']);
    await page.getByLabel('Expires after').selectOption({ label: '7 days' });
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.getByText('The link is on the clipboard.').waitFor();
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
    await page.getByText('Link revoked: it no longer opens the file.').waitFor();
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

      // Settings by its address: the files instead, saying why.
      await reader.goto(`${host.url}/#/settings/api-keys`);
      await reader.getByText('Settings → API Keys needs an admin key').waitFor();
      await reader.getByRole('heading', { level: 1, name: 'All files' }).waitFor();

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

  it('signs out and forgets the key; no key ever went into a URL, and the page broke no rule of its policy', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in to Drive' }).waitFor();
    await expect(page.evaluate(() => sessionStorage.length)).resolves.toBe(0);

    expect(requested.length).toBeGreaterThan(10);
    for (const secret of [ADMIN, READER, UPLOADER, createdSecret, secondAdmin]) {
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
    expect((await api('/drive/upload', ADMIN, { method: 'POST', body: form })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The text of the element once it is visible. */
async function visibleText(selector: string): Promise<string> {
  const element = page.locator(selector);
  await element.waitFor({ state: 'visible' });
  return (await element.textContent()) ?? '';
}

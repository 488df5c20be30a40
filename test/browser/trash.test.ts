import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PAGE_TIMEOUT_MS, launchChromium } from '../support/browser';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { recordPageMessages } from '../support/page-checks';

/**
 * The dashboard's trash (issue 28), in Chromium against a local host with the trash on: a file deleted in the
 * files view comes back with the notice's Undo; a deleted folder is restored from the Trash view; an item is
 * purged there; the view shows what the trash holds; roles see what they may do; axe finds nothing on it.
 */

// The few browser globals the callbacks given to page.evaluate touch (the project compiles without the DOM's types).
interface PageElement {
  readonly tagName: string;
  getBoundingClientRect(): { readonly left: number; readonly top: number; readonly width: number; readonly height: number };
  contains(other: PageElement | null): boolean;
}
declare const document: {
  readonly activeElement: PageElement | null;
  readonly documentElement: { readonly scrollWidth: number };
  elementFromPoint(x: number, y: number): PageElement | null;
};
declare const innerWidth: number;
declare const driveMessages: string[];
declare const axe: { run(context: unknown, options: { resultTypes: string[] }): Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } | undefined;

const ADMIN = `drv_admin_${randomBytes(16).toString('hex')}`;
const READER = `drv_reader_${randomBytes(16).toString('hex')}`;
const UPLOADER = `drv_upload_${randomBytes(16).toString('hex')}`;

let host: RunningHost;
let browser: Browser;
let context: BrowserContext;
let tab: Page;

function api(path: string, init: RequestInit = {}, key = ADMIN): Promise<Response> {
  return fetch(`${host.url}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
}

async function uploadTo(folder: string, name: string, text: string): Promise<void> {
  const form = new FormData();
  form.append('files', new Blob([text]), name);
  form.append('metadata', JSON.stringify([{ folder }]));
  expect((await api('/drive/upload', { method: 'POST', body: form })).status).toBe(200);
}

async function said(message: string): Promise<void> {
  await tab.waitForFunction((text) => driveMessages.some((shown) => shown.includes(text)), message);
}

function focusOnBody(): Promise<boolean> {
  return tab.evaluate(() => document.activeElement === null || document.activeElement.tagName === 'BODY');
}

async function signIn(key: string, hash: string): Promise<void> {
  await tab.goto(`${host.url}/${hash}`);
  await tab.getByRole('textbox', { name: 'API key' }).fill(key);
  await tab.getByRole('button', { name: 'Sign in' }).click();
}

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `default:${ADMIN}:admin,default:${READER}:read-only,default:${UPLOADER}:upload-only`, DRIVE_RATE_LIMITS: 'off', DRIVE_TRASH_DAYS: '7' });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' });
  await recordPageMessages(context);
  tab = await context.newPage();
  tab.setDefaultTimeout(PAGE_TIMEOUT_MS);
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  if (host) await stopHost(host);
});

describe('the trash in the dashboard', () => {
  it('undoes a delete, restores a folder and purges an item from the Trash view, showing what it holds', async () => {
    await uploadTo('/t', 'a.txt', 'first file\n');
    await uploadTo('/t/keep', 'b.txt', 'kept file\n');
    await uploadTo('/t', 'gone.txt', 'purged file\n');
    await signIn(ADMIN, '#/files/t');

    // Delete a file, then Undo (by keyboard) brings it back.
    await tab.getByRole('button', { name: 'Delete a.txt' }).click();
    await tab.getByRole('button', { name: 'Delete file' }).click();
    await said('Deleted /t/a.txt.');
    const notice = tab.getByRole('region', { name: 'Undo delete' });
    // The notice shows once the trash has been asked for the item, a request after the delete's message.
    await notice.waitFor();
    await expect(notice.locator('[data-text]').textContent()).resolves.toBe('Deleted /t/a.txt');
    await notice.getByRole('button', { name: 'Undo' }).focus();
    await tab.keyboard.press('Enter');
    await said('Restored /t/a.txt.');
    await tab.getByRole('button', { name: 'Delete a.txt' }).waitFor();
    await notice.waitFor({ state: 'hidden' });
    await expect(focusOnBody()).resolves.toBe(false);
    expect(await (await api('/drive/download?path=/t/a.txt')).text()).toBe('first file\n');

    // Delete a folder and a file; the Trash view lists them newest first, with what the trash holds.
    await tab.getByRole('button', { name: 'Delete folder keep' }).click();
    await tab.getByRole('button', { name: 'Delete folder', exact: true }).click();
    await said('Deleted /t/keep and 1 file in it.');
    expect((await api('/drive/files?path=/t/gone.txt', { method: 'DELETE' })).status).toBe(200);
    await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
    const rows = tab.locator('.trash-view tbody tr');
    await rows.first().waitFor();
    await expect(rows.locator('th').allTextContents()).resolves.toEqual(['/t/gone.txt', '/t/keep']);
    await expect(tab.locator('[data-usage]').textContent()).resolves.toBe('The trash holds 2 items: 2 files, 22 B.');
    await expect(axeViolations()).resolves.toEqual([]);

    // Restore the folder from the view: it is back whole.
    await tab.getByRole('button', { name: 'Restore /t/keep' }).click();
    await said('Restored /t/keep.');
    // The view is drawn again after the message: its row goes once the redraw is done.
    await tab.locator('.trash-view tbody tr', { hasText: '/t/keep' }).waitFor({ state: 'detached' });
    await expect(rows.locator('th').allTextContents()).resolves.toEqual(['/t/gone.txt']);
    expect(await (await api('/drive/download?path=/t/keep/b.txt')).text()).toBe('kept file\n');
    await expect(focusOnBody()).resolves.toBe(false);

    // Purge the file, after confirming: it is gone from the trash.
    await tab.getByRole('button', { name: 'Purge /t/gone.txt' }).click();
    await tab.locator('#confirm-dialog').getByRole('button', { name: 'Purge' }).click();
    await said('Purged /t/gone.txt (12 B).');
    await tab.getByText('The trash is empty.').waitFor();
    await expect(tab.locator('[data-usage]').textContent()).resolves.toBe('The trash holds 0 items: 0 files, 0 B.');
    await expect(focusOnBody()).resolves.toBe(false);
    const listed = (await (await api('/drive/trash')).json()) as { data: { items: unknown[] } };
    expect(listed.data.items).toEqual([]);
  });

  it('ties the Undo to the delete it follows, never to an older delete of the same path', async () => {
    // An older delete of /u/z.txt is in the trash; a new file stands there.
    await uploadTo('/u', 'z.txt', 'old version\n');
    expect((await api('/drive/files?path=/u/z.txt', { method: 'DELETE' })).status).toBe(200);
    await uploadTo('/u', 'z.txt', 'new version\n');
    await tab.goto(`${host.url}/#/files/u`);
    await tab.getByRole('button', { name: 'Delete z.txt' }).waitFor();

    // The notice's read of the trash is held until this delete's own item has been purged by another request.
    let held: () => void = () => undefined;
    const release = new Promise<void>((resolve) => (held = resolve));
    let asked: () => void = () => undefined;
    const askedOnce = new Promise<void>((resolve) => (asked = resolve));
    await tab.route(
      (url) => url.pathname === '/drive/trash',
      async (route) => {
        asked();
        await release;
        await route.continue();
      },
      { times: 1 },
    );
    await tab.getByRole('button', { name: 'Delete z.txt' }).click();
    await tab.getByRole('button', { name: 'Delete file' }).click();
    await said('Deleted /u/z.txt.');
    await askedOnce;
    const listed = (await (await api('/drive/trash?path=/u/z.txt')).json()) as { data: { items: { id: string; deleted_at: string }[] } };
    expect(listed.data.items).toHaveLength(2);
    const [newest, older] = listed.data.items;
    expect(newest.deleted_at > older.deleted_at).toBe(true);
    expect((await api(`/drive/trash/${newest.id}`, { method: 'DELETE' })).status).toBe(200);
    const answered = tab.waitForResponse((response) => new URL(response.url()).pathname === '/drive/trash');
    held();
    await (await answered).finished();
    // The page has read the answer (a task after it): no notice, so no Undo of the older delete.
    await tab.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
    await tab.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
    await expect(tab.getByRole('region', { name: 'Undo delete' }).isVisible()).resolves.toBe(false);
    expect((await api('/drive/download?path=/u/z.txt')).status).toBe(404);

    // (A delete whose item is there gets its Undo: the first test.) The older item goes, for the tests after.
    expect((await api(`/drive/trash/${older.id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('shows a read-only key the trash without Restore or Purge, and an upload-only key no Trash at all', async () => {
    expect((await api('/drive/files?path=/t/a.txt', { method: 'DELETE' })).status).toBe(200);
    await tab.getByRole('button', { name: 'Sign out' }).click();
    await signIn(READER, '#/trash');
    await tab.locator('.trash-view tbody tr', { hasText: '/t/a.txt' }).waitFor();
    await expect(tab.getByRole('button', { name: /^(Restore|Purge) / }).count()).resolves.toBe(0);

    await tab.getByRole('button', { name: 'Sign out' }).click();
    await signIn(UPLOADER, '#/files/');
    await tab.getByRole('button', { name: 'Sign out' }).waitFor();
    await expect(tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).isVisible()).resolves.toBe(false);
  });

  it('on a 390 px phone, the Trash view is no wider than the screen and its buttons are uncovered', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, reducedMotion: 'reduce' });
    try {
      tab = await phone.newPage();
      tab.setDefaultTimeout(PAGE_TIMEOUT_MS);
      await signIn(ADMIN, '#/trash');
      const restore = tab.getByRole('button', { name: 'Restore /t/a.txt' });
      for (const button of [restore, tab.getByRole('button', { name: 'Purge /t/a.txt' })]) {
        await button.scrollIntoViewIfNeeded();
        await expect(button.evaluate((element: PageElement) => {
          const box = element.getBoundingClientRect();
          return element.contains(document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2));
        })).resolves.toBe(true);
      }
      await expect(tab.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).resolves.toBe(true);
    } finally {
      await phone.close();
    }
  });
});

async function axeViolations(): Promise<string[]> {
  if (await tab.evaluate(() => typeof axe === 'undefined')) await tab.evaluate(await readFile(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return tab.evaluate(async () => (await axe!.run(document, { resultTypes: ['violations'] })).violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`));
}

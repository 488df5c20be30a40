import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { PAGE_TIMEOUT_MS, launchChromium } from '../support/browser';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { midWordBreaks, recordPageMessages } from '../support/page-checks';

/**
 * The dashboard on a phone and at 200 % zoom (issue 29, items 4 and 5), in Chromium against a local host: at
 * each size, in light and dark mode, every Tab stop of a folder, of Settings → API Keys and of Settings →
 * Trust rules, with the Uploads tray open and an error message shown, is reached with its centre uncovered (the
 * tray and the messages are fixed at the bottom of the window); the page never scrolls sideways; long names
 * wrap between their words in a column at least 8 characters wide; the rename field takes most of its row; and
 * axe-core finds no violation.
 *
 * 200 % zoom is a 640×400 viewport, not a 1280×800 one with deviceScaleFactor 2: zooming a 1280×800 window to
 * 200 % halves its CSS pixels, so the page is laid out (media queries included) in 640×400 CSS pixels, each
 * drawn with 2×2 device pixels. deviceScaleFactor alone changes only the device pixels per CSS pixel, as a
 * sharper screen does, and lays the page out as at 100 %. Here the viewport is 640×400 with deviceScaleFactor 2:
 * the layout and the pixels of the zoomed window.
 */

// Callbacks given to page.evaluate run in the page: the few browser globals they touch, declared for this file
// alone (the project compiles for Node, without the DOM's types).
interface PageBox {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}
interface PageElement {
  readonly tagName: string;
  readonly id: string;
  readonly className: string;
  readonly textContent: string | null;
  readonly parentElement: PageElement | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): PageBox;
  closest(selector: string): PageElement | null;
  contains(other: PageElement | null): boolean;
}
declare const document: {
  readonly activeElement: PageElement | null;
  readonly body: PageElement;
  readonly documentElement: { readonly scrollWidth: number };
  getElementById(id: string): { readonly textContent: string | null } | null;
  addEventListener(type: string, listener: () => void): void;
  elementFromPoint(x: number, y: number): PageElement | null;
};
declare const innerWidth: number;
declare const innerHeight: number;
declare function scrollTo(x: number, y: number): void;
declare function requestAnimationFrame(callback: () => void): number;
/** The first Tab stop of a sweep, kept in the page to know when Tab has come round to it again. */
declare const layoutSweepStart: PageElement | null;
/** axe-core, once its script has been evaluated in the page. */
declare const axe: { run(context: unknown, options: { resultTypes: string[] }): Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } | undefined;
/** What the page said in its status and alert regions, in order (recorded by the context's init script). */
declare const driveMessages: string[];

const SCREENSHOTS = resolve(__dirname, '..', '..', 'test-results', 'screenshots');
const ADMIN = `drv_admin_${randomBytes(16).toString('hex')}`;
/** Long names, with parts that a squeezed column would break inside. */
const FOLDER = 'Quarterly statements and supporting_documents_for_the_general_meeting.2024';
const FILE = 'board-minutes_final_signed_copy.version-two.pdf';
/** A file that is deleted behind the page's back, so that downloading it shows an error message that stays. */
const GONE = 'withdrawn-notice.txt';
/** Enough rows that the folder is taller than the window at every size: its last controls start under the tray. */
const FILLERS = Array.from({ length: 10 }, (_, i) => `expenses-2024-${String(i + 1).padStart(2, '0')}.csv`);
/** Uploaded through the page's file picker, to open the tray: three rows in it. */
const PICKED = ['scan-front.jpg', 'scan-back.jpg', 'scan-receipt.jpg'];

const SIZES = [
  { name: 'a 390 px phone', viewport: { width: 390, height: 844 }, deviceScaleFactor: 3 },
  { name: 'a 320 px phone', viewport: { width: 320, height: 568 }, deviceScaleFactor: 2 },
  { name: '1280×800 at 200 % zoom (640×400)', viewport: { width: 640, height: 400 }, deviceScaleFactor: 2 },
] as const;
const SCHEMES = ['light', 'dark'] as const;

let host: RunningHost;
let browser: Browser;
let axeSource: string;

/** Calls the API from the test (Node's fetch), as an app using a key would. */
function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${host.url}${path}`, { ...init, headers: { Authorization: `Bearer ${ADMIN}`, ...init.headers } });
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  host = await startHost({ DRIVE_API_KEYS: `default:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'off' });
  browser = await launchChromium();
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  if (host) await stopHost(host);
});

describe.each(SIZES)('the dashboard on $name', (size) => {
  it.each(SCHEMES)('in %s mode: no focused control is covered, nothing is wider than the screen, names wrap between words, and axe finds nothing', async (scheme) => {
    const folder = `/layout-${size.viewport.width}-${scheme}`;
    expect((await api('/drive/folders', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path: `${folder}/${FOLDER}` }) })).status).toBe(200);
    await uploadTo(folder, [FILE, GONE, ...FILLERS]);
    const context = await browser.newContext({ viewport: size.viewport, deviceScaleFactor: size.deviceScaleFactor, colorScheme: scheme, reducedMotion: 'reduce', acceptDownloads: true });
    // Each message of the status and alert regions is recorded as it appears (as test/browser/dashboard.test.ts
    // does): a step waits for a message to have been said, not to be on screen still.
    await recordPageMessages(context);
    const tab = await context.newPage();
    tab.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const pageErrors: string[] = [];
    tab.on('pageerror', (error) => pageErrors.push(error.message));
    // At CSS pixels, not the device pixels (2 or 3 to one): a ninth of the pixels to draw and encode at 390 px.
    const shot = (name: string) => tab.screenshot({ path: join(SCREENSHOTS, `layout-${size.viewport.width}-${scheme}-${name}.png`), fullPage: true, scale: 'css' });
    try {
      await tab.goto(`${host.url}/#/files${folder}`);
      await tab.getByRole('textbox', { name: 'API key' }).fill(ADMIN);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.locator('tr', { hasText: FILE }).waitFor();
      await rowsSettled(tab);

      // The folder as it opens: its width, its long names, and axe.
      await expect(widths(tab)).resolves.toEqual({ scrollWidth: size.viewport.width, innerWidth: size.viewport.width });
      for (const name of [FOLDER, FILE]) {
        const cell = tab.locator('tr', { hasText: name }).locator('th.name');
        await expect(midWordBreaks(cell)).resolves.toEqual([]);
        await expect(nameWidthInCharacters(cell)).resolves.toBeGreaterThanOrEqual(8);
      }
      await expect(axeViolations(tab)).resolves.toEqual([]);

      // The tray opened by the file picker, and an error message that stays until dismissed.
      await tab.locator('input[type=file]').setInputFiles(PICKED.map((name) => ({ name, mimeType: 'image/jpeg', buffer: randomBytes(1024) })));
      await tab.locator('.upload[data-state="done"]').nth(PICKED.length - 1).waitFor();
      for (const name of PICKED) await tab.locator('tr', { hasText: name }).waitFor();
      await rowsSettled(tab);
      // The tray's header fits it: its Clear finished button is not cut off at its edge.
      await expect(tab.locator('#uploads').evaluate((tray) => tray.scrollWidth - tray.clientWidth)).resolves.toBe(0);
      expect((await api(`/drive/files?path=${encodeURIComponent(`${folder}/${GONE}`)}`, { method: 'DELETE' })).status).toBe(200);
      // By keyboard: on main's dashboard the tray lay over this last row, and a click could not reach it.
      await tab.getByRole('button', { name: `Download ${GONE}` }).focus();
      await tab.keyboard.press('Enter');
      await tab.locator('#alert', { hasText: `Could not download ${GONE}` }).waitFor();
      // The status message the download began with, shown a moment after it: from here on messages only go,
      // and what they cover only shrinks, while Tab goes round.
      await tab.waitForFunction((text) => driveMessages.some((said) => said.includes(text)), `Downloading ${GONE}`);
      await shot('files');

      const files = await tabThrough(tab);
      expect(files.covered).toEqual([]);
      // Every row's buttons, the tray's and the message's were reached, not a few stops before focus was lost.
      expect(files.stops).toEqual(expect.arrayContaining([`Download ${FILE}`, `More actions for ${FILLERS.at(-1)}`, 'Clear finished', 'Dismiss']));
      await expect(widths(tab)).resolves.toEqual({ scrollWidth: size.viewport.width, innerWidth: size.viewport.width });
      await expect(axeViolations(tab)).resolves.toEqual([]);

      // Rename in place: a field across most of the row, and its buttons uncovered.
      await rowsSettled(tab);
      await tab.getByRole('button', { name: `More actions for ${FILE}` }).click();
      await tab.getByRole('button', { name: 'Rename' }).click();
      const field = tab.getByLabel(`New name for ${FILE}`);
      await expect(shareOfRow(field)).resolves.toBeGreaterThanOrEqual(0.6);
      await expect(coverOfFocused(tab)).resolves.toBeNull();
      for (const button of ['Save', 'Cancel']) {
        await tab.keyboard.press('Tab');
        await expect(focusedName(tab)).resolves.toBe(button);
        await expect(coverOfFocused(tab)).resolves.toBeNull();
      }
      await expect(widths(tab)).resolves.toEqual({ scrollWidth: size.viewport.width, innerWidth: size.viewport.width });
      await shot('rename');
      await tab.keyboard.press('Enter');
      await field.waitFor({ state: 'detached' });

      // Settings: both pages, the tray and the message still shown.
      await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
      await tab.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
      await tab.locator('table.keys tbody tr').first().waitFor();
      const keys = await tabThrough(tab);
      expect(keys.covered).toEqual([]);
      expect(keys.stops).toEqual(expect.arrayContaining(['Create API key', 'Clear finished', 'Dismiss']));
      await expect(widths(tab)).resolves.toEqual({ scrollWidth: size.viewport.width, innerWidth: size.viewport.width });
      await expect(axeViolations(tab)).resolves.toEqual([]);
      await shot('api-keys');

      await tab.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Trust rules' }).click();
      await tab.getByRole('heading', { level: 1, name: 'Trust rules' }).waitFor();
      await tab.getByText('No trust rules to show.').waitFor();
      const trust = await tabThrough(tab);
      expect(trust.covered).toEqual([]);
      expect(trust.stops).toEqual(expect.arrayContaining(['Add trust rule', 'Clear finished', 'Dismiss']));
      await expect(widths(tab)).resolves.toEqual({ scrollWidth: size.viewport.width, innerWidth: size.viewport.width });
      await expect(axeViolations(tab)).resolves.toEqual([]);

      // The Trash (issue 28): the file deleted above, by its long path, with its Restore and Purge.
      await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
      await tab.getByRole('heading', { level: 1, name: 'Trash' }).waitFor();
      const gone = `${folder}/${GONE}`;
      await tab.getByRole('button', { name: `Restore ${gone}` }).waitFor();
      // The path has the row's width, not a column of a few letters, and the table does not scroll sideways.
      await expect(nameWidthInCharacters(tab.locator('tr', { hasText: gone }).locator('th.path'))).resolves.toBeGreaterThanOrEqual(20);
      await expect(tab.locator('.trash-view .table-wrap').evaluate((wrap) => wrap.scrollWidth - wrap.clientWidth)).resolves.toBe(0);
      const trash = await tabThrough(tab);
      expect(trash.covered).toEqual([]);
      expect(trash.stops).toEqual(expect.arrayContaining([`Restore ${gone}`, `Purge ${gone}`, 'Clear finished', 'Dismiss']));
      await expect(widths(tab)).resolves.toEqual({ scrollWidth: size.viewport.width, innerWidth: size.viewport.width });
      await expect(axeViolations(tab)).resolves.toEqual([]);
      await shot('trash');
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/** Uploads empty-ish files named `names` into `folder` through the API. */
async function uploadTo(folder: string, names: string[]): Promise<void> {
  const form = new FormData();
  for (const name of names) form.append('files', new Blob([`${name}\n`]), name);
  form.append('metadata', JSON.stringify(names.map(() => ({ folder }))));
  expect((await api('/drive/upload', { method: 'POST', body: form })).status).toBe(200);
}

/** Waits until the files view of `tab` has no listing on its way (an upload reloads the rows). */
async function rowsSettled(tab: Page): Promise<void> {
  await tab.locator('.files-view[aria-busy]').waitFor({ state: 'detached' });
}

/** How wide the page is, and the window. */
function widths(tab: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return tab.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));
}

/**
 * Tabs from the skip link, the first stop, until focus leaves the page or comes round to it again, and says of
 * each stop whether its centre is covered (after the page and the browser have scrolled it into view). Stops
 * are named by their accessible name as far as the page's controls give one (aria-label, else their text).
 */
async function tabThrough(tab: Page): Promise<{ stops: string[]; covered: string[] }> {
  await tab.evaluate(() => scrollTo(0, 0));
  await tab.locator('#skip-link').focus();
  await tab.evaluate(() => Object.assign(globalThis, { layoutSweepStart: document.activeElement }));
  const stops: string[] = [];
  const covered: string[] = [];
  // A page of this test has fewer than 150 stops; more means focus is going round without coming back.
  for (let i = 0; i < 150; i++) {
    // The stop's name, whether it is the first again, and what covers it: read in one call into the page, in that order.
    const { name, again, cover } = await readFocus(tab, { sweep: i > 0, cover: true });
    if (name === null || again) break;
    stops.push(name);
    if (cover !== null) covered.push(`${name}: ${cover}`);
    await tab.keyboard.press('Tab');
  }
  return { stops, covered };
}

/** The accessible name of the focused control, as far as the page gives one (null: focus is on the page itself). */
async function focusedName(tab: Page): Promise<string | null> {
  return (await readFocus(tab, { sweep: false, cover: false })).name;
}

/**
 * What covers the centre of the focused control once the page has had two frames to scroll it (null: nothing,
 * the point hits the control or what is inside it). A visually hidden control (the file picker's input) is seen
 * as its label.
 */
async function coverOfFocused(tab: Page): Promise<string | null> {
  return (await readFocus(tab, { sweep: false, cover: true })).cover;
}

/**
 * In one call into the page (a sweep reads each stop so, not in three): the focused control's name (focusedName);
 * with `sweep`, whether it is the sweep's first stop again; then, with `cover`, and only for a control that is not
 * the first stop again, what covers it (coverOfFocused).
 */
function readFocus(tab: Page, ask: { sweep: boolean; cover: boolean }): Promise<{ name: string | null; again: boolean; cover: string | null }> {
  return tab.evaluate(async ({ sweep, cover: withCover }) => {
    const focusedNow = document.activeElement;
    const name = !focusedNow || focusedNow === document.body ? null : (focusedNow.getAttribute('aria-label') ?? (focusedNow.closest('label') ?? focusedNow).textContent?.replace(/\s+/g, ' ').trim() ?? '');
    const again = sweep && name !== null && focusedNow === layoutSweepStart;
    if (!withCover || again || (sweep && name === null)) return { name, again, cover: null };
    const cover = await (async (): Promise<string | null> => {
      for (let frame = 0; frame < 2; frame++) await new Promise<void>((done) => requestAnimationFrame(done));
      const active = document.activeElement;
      if (!active || active === document.body) return 'focus is on the page, not a control';
      const own = active.getBoundingClientRect();
      const seen = own.width > 1 && own.height > 1 ? active : (active.closest('label') ?? active);
      const box = seen.getBoundingClientRect();
      const x = box.left + box.width / 2;
      const y = box.top + box.height / 2;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return `its centre (${Math.round(x)}, ${Math.round(y)}) is outside the window`;
      const hit = document.elementFromPoint(x, y);
      if (hit && seen.contains(hit)) return null;
      const coverer = hit?.closest('.uploads, .toast, header, dialog, [popover]') ?? hit;
      return `its centre (${Math.round(x)}, ${Math.round(y)}) is under ${coverer ? `${coverer.tagName.toLowerCase()}${coverer.id ? `#${coverer.id}` : ''}.${coverer.className}` : 'nothing'}`;
    })();
    return { name, again, cover };
  }, ask);
}

/** How many characters of the name's own font fit the width its text is given (the widest of "0" to "9", as `ch` measures). */
function nameWidthInCharacters(cell: Locator): Promise<number> {
  return cell.evaluate((root) => {
    const name = root.querySelector('.entry-name') ?? root;
    const probe = name.ownerDocument.createElement('span');
    probe.textContent = '0';
    probe.style.position = 'absolute';
    probe.style.visibility = 'hidden';
    name.append(probe);
    const character = probe.getBoundingClientRect().width;
    probe.remove();
    return Math.floor(name.getBoundingClientRect().width / character);
  });
}

/** The width of `field` as a share of its table row's. */
function shareOfRow(field: Locator): Promise<number> {
  return field.evaluate((input) => Math.round((input.getBoundingClientRect().width / input.closest('tr').getBoundingClientRect().width) * 100) / 100);
}

/** axe-core's violations in the page as it is now, each as its rule and the elements it found. */
async function axeViolations(tab: Page): Promise<string[]> {
  if (await tab.evaluate(() => typeof axe === 'undefined')) await tab.evaluate(axeSource);
  return tab.evaluate(async () => (await axe!.run(document, { resultTypes: ['violations'] })).violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`));
}


import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import { PROGRESS_EVERY_MS } from '../../dashboard/upload-progress.js';
import { MIN_PART_BYTES } from '../../functions/core/multipart-rules';
import { PAGE_TIMEOUT_MS, launchChromium } from '../support/browser';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { recordPageMessages } from '../support/page-checks';

/**
 * The dashboard by keyboard and screen reader (issue 29): where focus goes after each action, which messages
 * Chromium's accessibility tree holds (read through the DevTools protocol, as a screen reader gets them), the row
 * menu's keys, what a sign-out leaves, the contrast of the focus ring on the error toast, and axe-core's rules on
 * each view and dialog. The steps share one page and run in order.
 */

// Callbacks given to page.evaluate run in the page: the few browser globals they touch, declared for this file
// alone (the project compiles for Node, without the DOM's types).
interface PageElement {
  readonly id: string;
  readonly tagName: string;
  readonly textContent: string | null;
  readonly hidden: boolean;
  getAttribute(name: string): string | null;
  closest(selector: string): PageElement | null;
  matches(selector: string): boolean;
}
declare const document: {
  readonly activeElement: PageElement | null;
  readonly body: PageElement;
  getElementById(id: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement & { close?(): void; hidePopover?(): void }>;
  addEventListener(type: string, listener: () => void): void;
};
declare function getComputedStyle(element: PageElement): { readonly outlineColor: string; readonly outlineStyle: string; readonly outlineWidth: string; readonly backgroundColor: string };
/** What the page said in its status and alert regions, in order (recorded by the context's init script). */
declare const driveMessages: string[];
declare const axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; help: string; nodes: { target: unknown[] }[] }[] }> };

// A step waits for states, never for time: on a busy machine one may take minutes, as a whole step may.
jest.setTimeout(5 * 60_000);

const ADMIN = `drv_admin_${randomBytes(16).toString('hex')}`;
const READER = `drv_reader_${randomBytes(16).toString('hex')}`;
/** Over the dashboard's 4 MiB threshold: it goes in parts to S3, which a step holds on their way. */
const LARGE = randomBytes(5 * 1024 * 1024);
/** Four parts of the API's smallest part size: each part sent is a quarter of it, which a step lets go one by one. */
const QUARTERED_BYTES = 4 * MIN_PART_BYTES;
let largeFile: string;
let smallFile: string;
let quarteredFile: string;

let host: RunningHost;
let s3Origin: string;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
/** What axe-core found on each view and dialog, by where it looked. */
const axeFindings: string[] = [];

/** Calls the API from the test, as an app using a key would. */
function api(path: string, key: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${host.url}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
}

async function uploadTo(folder: string, names: string[]): Promise<void> {
  for (const name of names) {
    const form = new FormData();
    form.append('files', new Blob([`${name}\n`]), name);
    form.append('metadata', JSON.stringify([{ folder }]));
    expect((await api('/drive/upload', ADMIN, { method: 'POST', body: form })).status).toBe(200);
  }
}

beforeAll(async () => {
  largeFile = join(await mkdtemp(join(tmpdir(), 'drive-a11y-')), 'large.bin');
  await writeFile(largeFile, LARGE);
  smallFile = join(largeFile, '..', 'small.txt');
  await writeFile(smallFile, 'small\n');
  quarteredFile = join(largeFile, '..', 'quartered.bin');
  await writeFile(quarteredFile, Buffer.alloc(QUARTERED_BYTES, 'q'));
  host = await startHost({ DRIVE_API_KEYS: `default:${ADMIN}:admin,default:${READER}:read-only`, DRIVE_RATE_LIMITS: 'off' });
  s3Origin = (JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as { s3: string }).s3;
  expect((await api('/drive/folders', ADMIN, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path: '/focus/sub' }) })).status).toBe(200);
  await uploadTo('/focus', ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true, reducedMotion: 'reduce' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: host.url });
  // The page's clock runs as the real one, but a step can stop it, so that a message stays shown while it is read
  // (a status message goes after 8 s of the page's time, however long this machine takes to look).
  await context.clock.install();
  await recordPageMessages(context);
  page = await context.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  // DRIVE_BROWSER_CPU_SLOWDOWN=8, as in dashboard.test.ts: the page's CPU slowed, to find a step that races it.
  const slowdown = Number(process.env.DRIVE_BROWSER_CPU_SLOWDOWN ?? 1);
  if (slowdown > 1) await (await context.newCDPSession(page)).send('Emulation.setCPUThrottlingRate', { rate: slowdown });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
  });
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  if (host) await stopHost(host);
  if (largeFile) await rm(join(largeFile, '..'), { recursive: true, force: true });
});

/** What has the keyboard focus: "body", or the element's accessible name (its aria-label, else its text). */
function focused(tab: Page = page): Promise<string> {
  return tab.evaluate(() => {
    const element = document.activeElement;
    if (!element || element === document.body) return 'body';
    return element.getAttribute('aria-label') ?? element.textContent?.trim() ?? element.tagName;
  });
}

/** Waits until the files view has no listing on its way (an action reloads the rows after saying what it did). */
async function rowsSettled(): Promise<void> {
  await page.locator('.files-view[aria-busy]').waitFor({ state: 'detached' });
}

/** Waits until the page has said `message` (or one containing it) in its status or alert region. */
async function said(message: string): Promise<void> {
  await page.waitForFunction((text) => driveMessages.some((shown) => shown.includes(text)), message);
}

/** Stops the page's clock (a second on from now, the timers due by then run): its timers run only as a step moves it. */
async function stopClock(): Promise<void> {
  const now = await page.evaluate(() => Date.now());
  await page.clock.pauseAt(now + 1000);
}

/**
 * Moves the stopped clock on a little at a time until `message` (or one containing it) is said, as the `from`th
 * message or a later one (at most a minute of the page's time: a message that does not come fails the step,
 * saying what came instead); it stays shown until the clock moves on.
 */
async function runClockUntilSaid(message: string, from = 0): Promise<void> {
  for (let step = 0; !(await page.evaluate(([text, at]) => driveMessages.slice(at).some((shown) => shown.includes(text)), [message, from] as const)); step++) {
    if (step === 600) throw new Error(`the page did not say "${message}"; it said: ${JSON.stringify(await page.evaluate(() => driveMessages))}`);
    await page.clock.runFor(100);
  }
}

/**
 * Runs `action` with the page's clock stopped, and moves the clock on a little at a time until `message` is said;
 * the clock stays stopped (so the message stays shown) until `resume`.
 */
async function saidWhileStopped(action: () => Promise<void>, message: string): Promise<void> {
  await stopClock();
  await action();
  await runClockUntilSaid(message);
}

/**
 * Waits for what the page does in real time (its requests) while its clock is stopped: `check` is polled from
 * here, not in the page, whose timers stand. The deadline guards against a hang; it is no pace.
 */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + PAGE_TIMEOUT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${PAGE_TIMEOUT_MS} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether the tray shows the upload of `name` in `state`. */
async function uploadIs(name: string, state: string): Promise<boolean> {
  return (await page.locator(`.upload[data-state="${state}"]`, { hasText: name }).count()) === 1;
}

interface AXNode {
  nodeId: string;
  ignored: boolean;
  role?: { value: string };
  name?: { value: string };
  childIds?: string[];
}

/** The live regions (status, alert) in Chromium's accessibility tree, with the text a screen reader gets from them. */
function liveRegions(): Promise<{ role: string; text: string }[]> {
  return inTree(['status', 'alert']);
}

/** The nodes of `roles` in Chromium's accessibility tree (left out ones aside), with the text a screen reader reads in them. */
async function inTree(roles: string[]): Promise<{ role: string; text: string }[]> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: AXNode[] };
    const byId = new Map(nodes.map((node) => [node.nodeId, node]));
    // A text counts unless it is left out itself (aria-hidden, inert); a container left out (a plain <span>) passes its texts on.
    const textOf = (node: AXNode): string => {
      if (node.role?.value === 'StaticText') return node.ignored ? '' : (node.name?.value ?? '');
      return (node.childIds ?? []).map((id) => byId.get(id)).map((child) => (child ? textOf(child) : '')).join('');
    };
    return nodes.filter((node) => !node.ignored && roles.includes(node.role?.value ?? '')).map((node) => ({ role: node.role!.value, text: textOf(node).replace(/\s+/g, ' ').trim() }));
  } finally {
    await cdp.detach();
  }
}

/** Checks that `message` is in the status region as Chromium's accessibility tree has it. */
async function expectStatusInTree(message: string): Promise<void> {
  expect((await liveRegions()).filter((region) => region.role === 'status').map((region) => region.text)).toContainEqual(expect.stringContaining(message));
}

/**
 * With the clock stopped, moves it on until `message` is said (the `from`th message or a later one), and checks it
 * is then in the status region of the accessibility tree; returns the index just after it in `driveMessages`.
 */
async function heard(message: string, from: number): Promise<number> {
  await runClockUntilSaid(message, from);
  await expectStatusInTree(message);
  return from + (await page.evaluate(([text, at]) => driveMessages.slice(at).findIndex((shown) => shown.includes(text)), [message, from] as const)) + 1;
}

/** What the page said from `from` on (an index into `driveMessages`), starting at `first`. */
async function saidFrom(from: number, first: string): Promise<string[]> {
  const messages = await page.evaluate((at) => driveMessages.slice(at), from);
  return messages.slice(Math.max(0, messages.indexOf(first)));
}

/** Runs axe-core on the page as it is, and records what it finds under `where`. */
async function checkAxe(where: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) {
    // Through the DevTools protocol, as a script of the page's own would be refused by its policy.
    const cdp = await page.context().newCDPSession(page);
    try {
      const loaded = (await cdp.send('Runtime.evaluate', { expression: await readFile(require.resolve('axe-core/axe.min.js'), 'utf8') })) as { exceptionDetails?: unknown };
      expect(loaded.exceptionDetails).toBeUndefined();
    } finally {
      await cdp.detach();
    }
  }
  const violations = await page.evaluate(async () => (await axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((node) => JSON.stringify(node.target)).join(', ')})`));
  axeFindings.push(...violations.map((violation) => `${where}: ${violation}`));
}

/** Relative luminance of an `rgb()`/`rgba()` colour (WCAG 2). */
function luminance(color: string): number {
  const [r, g, b] = (/rgba?\(([^)]+)\)/.exec(color)?.[1] ?? '').split(/[ ,/]+/).map(Number);
  const channel = (value: number) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

/** Opens the More menu of the row named `name` by keyboard, and waits for focus to be on its first item. */
async function openMenu(name: string): Promise<void> {
  await page.getByRole('button', { name: `More actions for ${name}` }).focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement?.closest('[popover]') !== null);
}

/** Presses Tab until focus is on the element `selector` matches (at most `limit` times); says whether it got there. */
async function tabTo(selector: string, limit = 80): Promise<boolean> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) === true, selector)) return true;
  }
  return false;
}

describe('the dashboard by keyboard and screen reader, in Chromium', () => {
  // A step that fails leaves no dialog or menu open, nor the clock stopped, for the next one to trip on.
  afterEach(async () => {
    await page.clock.resume();
    await page.evaluate(() => {
      for (const open of Array.from(document.querySelectorAll('dialog[open]'))) open.close?.();
      for (const open of Array.from(document.querySelectorAll(':popover-open'))) open.hidePopover?.();
    });
  });

  it('signs in; the status and alert regions are in the accessibility tree while idle; axe finds nothing', async () => {
    await page.goto(`${host.url}/#/files/focus`);
    await checkAxe('sign-in');
    await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'focus' }).waitFor();
    await page.locator('tr', { hasText: 'e.txt' }).waitFor();
    await said('Signed in with an admin key.');
    // Past the 8 s a status message stays: the region is empty, and must still be there for the next message.
    await page.clock.fastForward(9000);
    await page.waitForFunction(() => document.getElementById('status')?.textContent === '');
    await expect(liveRegions()).resolves.toEqual(expect.arrayContaining([{ role: 'status', text: '' }, { role: 'alert', text: '' }]));
    await checkAxe('files');
  });

  it('keeps the row menu to itself: Home and End move within it, and Tab out closes it', async () => {
    await rowsSettled();
    await openMenu('a.txt');
    const menu = page.locator('.row-menu[aria-label="More actions for a.txt"]');
    await expect(focused()).resolves.toBe('Rename');
    await checkAxe('row menu');
    await page.keyboard.press('End');
    await expect(focused()).resolves.toBe('Share link…');
    await page.keyboard.press('Home');
    await expect(focused()).resolves.toBe('Rename');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    await expect(menu.evaluate((element) => element.matches(':popover-open'))).resolves.toBe(false);
    // And from its last item, Tab goes on to the next button, uncovered.
    await openMenu('a.txt');
    await page.keyboard.press('End');
    await page.keyboard.press('Tab');
    await expect(menu.evaluate((element) => element.matches(':popover-open'))).resolves.toBe(false);
    await expect(page.evaluate(() => document.activeElement?.closest('[popover]') === null)).resolves.toBe(true);
  });

  it('renames a file by keyboard: focus stays on the renamed row', async () => {
    await openMenu('b.txt');
    await page.keyboard.press('Enter');
    await page.keyboard.type('bee');
    await page.keyboard.press('Enter');
    await said('Renamed /focus/b.txt to /focus/bee.txt.');
    await rowsSettled();
    await page.locator('tr', { hasText: 'bee.txt' }).waitFor();
    await expect(focused()).resolves.toBe('More actions for bee.txt');
  });

  it('moves a file through the picker by keyboard: the crumbs keep focus, then it goes to the next row', async () => {
    await openMenu('c.txt');
    await page.keyboard.press('ArrowDown');
    await expect(focused()).resolves.toBe('Move…');
    await page.keyboard.press('Enter');
    const dialog = page.locator('#transfer-dialog');
    await dialog.getByRole('button', { name: 'sub' }).waitFor();
    await checkAxe('move dialog');
    // A crumb: the trail is drawn anew, and focus stays on the crumb of the folder picked.
    await dialog.getByRole('button', { name: 'All files' }).focus();
    await page.keyboard.press('Enter');
    await dialog.getByRole('button', { name: 'focus' }).waitFor();
    await expect(focused()).resolves.toBe('All files');
    // A folder: its crumb takes focus while its folders are read, then its first folder.
    await page.keyboard.press('Tab');
    await expect(focused()).resolves.toBe('focus');
    await page.keyboard.press('Enter');
    await dialog.getByRole('button', { name: 'sub' }).waitFor();
    await expect(focused()).resolves.toBe('sub');
    await page.keyboard.press('Enter');
    await dialog.locator('[data-picker-status]').filter({ hasText: 'No folders in /focus/sub.' }).waitFor();
    await expect(focused()).resolves.toBe('sub');
    await page.locator('#transfer-name').focus();
    await page.keyboard.press('Enter');
    await said('Moved /focus/c.txt to /focus/sub/c.txt.');
    await rowsSettled();
    await page.locator('tr', { hasText: 'c.txt' }).waitFor({ state: 'detached' });
    await expect(focused()).resolves.toBe('More actions for d.txt');
  });

  it('copies a file: focus goes back to the row it was copied from', async () => {
    await openMenu('a.txt');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await expect(focused()).resolves.toBe('Copy…');
    await page.keyboard.press('Enter');
    await page.locator('#transfer-dialog').getByRole('button', { name: 'sub' }).waitFor();
    await page.locator('#transfer-name').fill('a-copy.txt');
    await page.keyboard.press('Enter');
    await said('Copied /focus/a.txt to /focus/a-copy.txt.');
    await rowsSettled();
    await page.locator('tr', { hasText: 'a-copy.txt' }).waitFor();
    await expect(focused()).resolves.toBe('More actions for a.txt');
  });

  it('deletes a file by keyboard: focus goes to the next row, on its Delete', async () => {
    await page.getByRole('button', { name: 'Delete d.txt' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#confirm-dialog').waitFor();
    await checkAxe('confirm dialog');
    await page.keyboard.press('Tab');
    await expect(focused()).resolves.toBe('Delete file');
    await page.keyboard.press('Enter');
    await said('Deleted /focus/d.txt.');
    await rowsSettled();
    await page.locator('tr', { hasText: 'd.txt' }).waitFor({ state: 'detached' });
    await expect(focused()).resolves.toBe('Delete e.txt');
  });

  it('keeps focus on Download while it runs and after', async () => {
    await page.getByRole('button', { name: 'Download e.txt' }).focus();
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(download.suggestedFilename()).toBe('e.txt');
    await said('Downloaded e.txt');
    await expect(focused()).resolves.toBe('Download e.txt');
  });

  it('keeps focus on a row when an upload lands and the rows are drawn again', async () => {
    await page.getByRole('button', { name: 'Download a.txt' }).focus();
    await page.locator('input[type=file]').setInputFiles([{ name: 'landed.txt', mimeType: 'text/plain', buffer: Buffer.from('landed\n') }]);
    await page.locator('tr', { hasText: 'landed.txt' }).waitFor();
    await rowsSettled();
    await expect(focused()).resolves.toBe('Download a.txt');
  });

  it('copies a share link: focus stays on Copy link, and the message is in the accessibility tree inside the dialog', async () => {
    await openMenu('e.txt');
    // Up from the first item wraps round to the last, Share link….
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    const dialog = page.locator('#share-dialog');
    await dialog.locator('[data-links-status]').filter({ hasText: 'No live links.' }).waitFor();
    await checkAxe('share dialog');
    await dialog.getByRole('button', { name: 'Copy link' }).focus();
    await saidWhileStopped(() => page.keyboard.press('Enter'), 'The link is on the clipboard.');
    await expectStatusInTree('The link is on the clipboard.');
    await expect(focused()).resolves.toBe('Copy link');
    await page.clock.resume();
    await dialog.locator('[data-links] li').first().waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#share-dialog:not([open])').waitFor({ state: 'attached' });
  });

  it('revokes a share link: focus goes to Copy link when no other link is left', async () => {
    await openMenu('e.txt');
    // Up from the first item wraps round to the last, Share link….
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    const revoke = page.locator('#share-dialog [data-links] li button');
    await revoke.waitFor();
    await revoke.focus();
    await page.keyboard.press('Enter');
    await said('Link revoked: it no longer opens the file.');
    await page.locator('#share-dialog [data-links-status]').filter({ hasText: 'No live links.' }).waitFor();
    await expect(focused()).resolves.toBe('Copy link');
    await page.keyboard.press('Escape');
    await page.locator('#share-dialog:not([open])').waitFor({ state: 'attached' });
  });

  it('says each upload that lands while others run; "Go to uploads" is the next Tab stop; Cancel and Clear finished keep focus in the tray', async () => {
    /** The large upload's parts, held on their way to S3 so that it runs until cancelled. */
    const held: Route[] = [];
    await page.route(`${s3Origin}/**`, (route) => void held.push(route));
    try {
      const partSent = page.waitForRequest((request) => request.url().startsWith(`${s3Origin}/`));
      await page.locator('input[type=file]').setInputFiles([largeFile, smallFile]);
      await partSent;
      // Said while the large one still runs (its parts are held): the tray's count, after the file's name.
      await said('Uploaded small.txt: ');
      await expect(page.locator('.upload[data-state="running"]').count()).resolves.toBe(1);
      await checkAxe('uploads tray');

      await page.locator('input[type=file]').focus();
      await page.keyboard.press('Tab');
      await expect(focused()).resolves.toBe('Go to uploads');
      await page.keyboard.press('Enter');
      await expect(focused()).resolves.toBe('Uploads');
      await page.keyboard.press('Tab');
      await expect(focused()).resolves.toBe('Clear finished');

      await page.getByRole('button', { name: 'Cancel the upload of large.bin' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('.upload[data-state="cancelled"]').waitFor();
      await expect(focused()).resolves.toBe('Clear finished');
      await page.keyboard.press('Enter');
      await page.locator('#uploads').waitFor({ state: 'hidden' });
      await expect(page.evaluate(() => document.activeElement?.getAttribute('data-input'))).resolves.toBe('upload');
    } finally {
      await page.unroute(`${s3Origin}/**`);
      for (const route of held) await route.abort().catch(() => undefined);
    }
  });

  it('is busy from the moment an upload lands until the listing that shows it is drawn', async () => {
    await rowsSettled();
    // The clock stands: the listing waits for the burst of uploads to end, on a timer that only the clock moves.
    await stopClock();
    try {
      await page.locator('input[type=file]').setInputFiles([{ name: 'settling.txt', mimeType: 'text/plain', buffer: Buffer.from('settling\n') }]);
      await page.locator('.upload[data-state="done"]', { hasText: 'settling.txt' }).waitFor();
      // Its rows are about to be drawn again: a reader of them waits (rowsSettled), as a screen reader holds its
      // announcements, rather than act on a row that the listing then replaces.
      await expect(page.locator('.files-view[aria-busy]').count()).resolves.toBe(1);
      await expect(page.locator('tr', { hasText: 'settling.txt' }).count()).resolves.toBe(0);
      await page.clock.runFor(1000);
      await page.locator('tr', { hasText: 'settling.txt' }).waitFor();
      await rowsSettled();
    } finally {
      await page.clock.resume();
    }
    // The tray empty again, for the next tests' counts of uploads.
    await page.locator('#uploads-clear').click();
    await page.locator('#uploads').waitFor({ state: 'hidden' });
  });

  it('says two messages sent back to back both, in order, each in the accessibility tree as it is shown', async () => {
    /** The two uploads' requests, held, then let go one at a time. */
    const held: Route[] = [];
    await page.route('**/drive/upload', (route) => void held.push(route));
    try {
      const from = await page.evaluate(() => driveMessages.length);
      // The clock stands while both files land: their messages come within the same instant of the page's time.
      await stopClock();
      await page.locator('input[type=file]').setInputFiles([
        { name: 'first.txt', mimeType: 'text/plain', buffer: Buffer.from('first\n') },
        { name: 'second.txt', mimeType: 'text/plain', buffer: Buffer.from('second\n') },
      ]);
      await until(async () => held.length === 2, 'both uploads to be sent');
      const done = page.locator('.upload[data-state="done"]');
      await held[0].continue();
      await until(async () => (await done.count()) === 1, 'one upload to land');
      const firstName = await done.locator('.upload-name').textContent();
      await held[1].continue();
      await until(async () => (await done.count()) === 2, 'the other upload to land');

      const expected = ['Uploading 2 files to /focus.', `Uploaded ${firstName}: 1 of 2 done.`, 'Uploads finished: 2 files uploaded.'];
      // Each in turn, after the one before: a message of an earlier step still on its way comes first.
      let next = from;
      for (const message of expected) next = await heard(message, next);
      await expect(saidFrom(from, expected[0])).resolves.toEqual(expected);
    } finally {
      await page.unroute('**/drive/upload');
      for (const route of held) await route.abort().catch(() => undefined);
      await page.clock.resume();
    }
    await page.locator('#uploads-clear').click();
    await page.locator('#uploads').waitFor({ state: 'hidden' });
  });

  it('says a large upload\'s 25, 50 and 75 % as it passes them, in order, each in the accessibility tree', async () => {
    /** The file's four parts, held on their way to S3, then let go one at a time. */
    const held: Route[] = [];
    await page.route(`${s3Origin}/**`, (route) => (route.request().method() === 'PUT' ? void held.push(route) : route.continue()));
    try {
      const from = await page.evaluate(() => driveMessages.length);
      await stopClock();
      await page.locator('input[type=file]').setInputFiles([quarteredFile]);
      await until(async () => held.length === 4, 'the four parts to be sent');
      const bar = page.locator('.upload', { hasText: 'quartered.bin' }).locator('progress');
      let next = await heard('Uploading 1 file to /focus.', from);
      for (let part = 1; part <= 4; part++) {
        // The page's time an upload lets pass before it says its progress again (upload-progress.js), then a part.
        await page.clock.runFor(PROGRESS_EVERY_MS);
        await held[part - 1].continue();
        if (part === 4) break;
        await until(async () => (await bar.evaluate((element) => Number(element.getAttribute('value')))) >= part * MIN_PART_BYTES, `part ${part} to be sent`);
        next = await heard(`quartered.bin: ${part * 25} % uploaded.`, next);
      }
      await until(() => uploadIs('quartered.bin', 'done'), 'quartered.bin to land');
      await heard('Uploads finished: 1 file uploaded.', next);

      await expect(saidFrom(from, 'Uploading 1 file to /focus.')).resolves.toEqual([
        'Uploading 1 file to /focus.',
        'quartered.bin: 25 % uploaded.',
        'quartered.bin: 50 % uploaded.',
        'quartered.bin: 75 % uploaded.',
        'Uploads finished: 1 file uploaded.',
      ]);
    } finally {
      await page.unroute(`${s3Origin}/**`);
      for (const route of held) await route.abort().catch(() => undefined);
      await page.clock.resume();
    }
    await page.locator('#uploads-clear').click();
    await page.locator('#uploads').waitFor({ state: 'hidden' });
  });

  it('shows an error toast whose focus ring is 3:1 on it, light and dark; Dismiss sends focus back', async () => {
    await page.route('**/drive/upload', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { code: 'internal', message: 'Internal error' } }) }));
    try {
      await page.locator('input[type=file]').setInputFiles([{ name: 'refused.txt', mimeType: 'text/plain', buffer: Buffer.from('refused\n') }]);
      await said('Could not upload refused.txt');
    } finally {
      await page.unroute('**/drive/upload');
    }
    await checkAxe('error toast');
    await page.locator('h1').focus();
    expect(await tabTo('#alert button')).toBe(true);
    const before = await page.evaluate(() => document.getElementById('alert')?.matches(':focus-within'));
    expect(before).toBe(true);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const ring = await page.locator('#alert button').evaluate((button) => {
        const style = getComputedStyle(button);
        return { focusVisible: button.matches(':focus-visible'), outline: style.outlineColor, style: style.outlineStyle, behind: getComputedStyle(button.closest('.toast')).backgroundColor };
      });
      expect(ring).toMatchObject({ focusVisible: true, style: 'solid' });
      expect({ colorScheme, contrast: contrast(ring.outline, ring.behind) >= 3 }).toEqual({ colorScheme, contrast: true });
    }
    await page.emulateMedia({ colorScheme: null });
    // Dismiss: the toast goes, and focus goes back to where it was before it came to the toast.
    await page.keyboard.press('Shift+Tab');
    const previous = await focused();
    expect(previous).not.toBe('body');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('#alert button').waitFor({ state: 'detached' });
    await expect(focused()).resolves.toBe(previous);
  });

  it('revokes a key by keyboard: focus goes to the next key; both key-copy messages are in the tree inside the dialog', async () => {
    await page.goto(`${host.url}/#/settings/api-keys`);
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
    await page.locator('table.keys tbody tr').first().waitFor();
    await checkAxe('API keys');

    await page.getByRole('button', { name: 'Create API key' }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.type('temp one');
    await saidWhileStopped(() => page.keyboard.press('Enter'), 'Key created. Copy it now');
    await expectStatusInTree('Key created. Copy it now: it is shown only this once.');
    await page.clock.resume();
    await checkAxe('new key secret');
    await page.locator('#key-dialog').getByRole('button', { name: 'Copy' }).focus();
    await saidWhileStopped(() => page.keyboard.press('Enter'), 'The key is on the clipboard.');
    await expectStatusInTree('The key is on the clipboard.');
    await expect(focused()).resolves.toBe('Copied');
    const last4 = (await page.locator('#key-secret').inputValue()).slice(-4);
    await page.clock.resume();
    await page.keyboard.press('Escape');
    await page.locator('tr', { hasText: 'temp one' }).waitFor();
    // Its last four characters are read as text, "ending in …", not from an aria-label on <code> some readers skip.
    await expect(inTree(['cell'])).resolves.toContainEqual({ role: 'cell', text: `ending in ${last4}` });

    // The row after it, whose Revoke focus should go to.
    const labels = await page.locator('table.keys tbody tr').evaluateAll((rows) => rows.map((row) => row.querySelector('[data-control="revoke"]')?.getAttribute('aria-label') ?? null));
    const names = await page.locator('table.keys tbody tr th').allTextContents();
    const at = names.findIndex((name) => name.startsWith('temp one'));
    const expected = [...labels.slice(at + 1), ...labels.slice(0, at).reverse()].find((label) => label !== null);
    await page.getByRole('button', { name: 'Revoke temp one' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#confirm-dialog').getByRole('button', { name: 'Revoke key' }).focus();
    await page.keyboard.press('Enter');
    await said('Revoked temp one.');
    await page.locator('tr', { hasText: 'temp one' }).waitFor({ state: 'detached' });
    await expect(focused()).resolves.toBe(expected ?? 'Create API key');
    await page.goto(`${host.url}/#/settings/trust`);
    await page.getByText('No trust rules to show.').waitFor();
    await checkAxe('trust rules');
  });

  it('signs out from Settings: focus goes to the key field, and the next, read-only, key finds no trace of the session', async () => {
    await page.goto(`${host.url}/#/settings/api-keys`);
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Sign in to Drive' }).waitFor();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('sign-in-key');
    await page.keyboard.type(READER);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'All files' }).waitFor();
    await said('Signed in with a read-only key.');
    await expect(page.evaluate(() => ({
      alert: document.getElementById('alert')?.textContent,
      tray: document.getElementById('uploads')?.hidden,
      rows: document.querySelector('#uploads-list li') === null,
    }))).resolves.toEqual({ alert: '', tray: true, rows: true });
    await expect(page.evaluate(() => driveMessages.filter((message) => message.includes('needs an admin key')))).resolves.toEqual([]);
    await checkAxe('read-only files');
  });

  it("shows a change made just before in the folder's Recent activity, then one made while it is shown; Refresh keeps focus", async () => {
    // The change is in the feed's log before the folder is opened (the feed gives it): the panel's first read must show it.
    const latest = await api('/drive/changes/latest?path=/focus', ADMIN);
    let { data: { cursor } } = (await latest.json()) as { data: { cursor: string } };
    await uploadTo('/focus/sub', ['activity-note.txt']);
    const fed: string[] = [];
    for (let polls = 0; polls < 20 && !fed.includes('/focus/sub/activity-note.txt'); polls++) {
      const feed = (await (await api(`/drive/changes?${new URLSearchParams({ cursor, timeout: '25' })}`, ADMIN)).json()) as { data: { changes: { path: string }[]; next_cursor: string } };
      fed.push(...feed.data.changes.map((change) => change.path));
      cursor = feed.data.next_cursor;
    }
    expect(fed).toContain('/focus/sub/activity-note.txt');

    await page.goto(`${host.url}/#/files/focus`);
    await page.getByRole('heading', { level: 1, name: 'focus' }).waitFor();
    const panel = page.getByRole('region', { name: 'Recent activity' });
    const first = panel.getByRole('listitem').first();
    await expect(first.textContent()).resolves.toMatch(/^Added \/focus\/sub\/activity-note\.txt, /);
    // When, as text and as the instant in a <time>.
    await expect(first.locator('time').getAttribute('datetime')).resolves.toMatch(/^\d{4}-\d\d-\d\dT/);
    await checkAxe('files, recent activity');

    // A change made while the panel is shown comes to it through the feed, without a reload.
    await uploadTo('/focus', ['activity-live.txt']);
    await panel.getByRole('listitem').filter({ hasText: 'Added /focus/activity-live.txt' }).waitFor();
    await expect(panel.getByRole('listitem').first().textContent()).resolves.toMatch(/^Added \/focus\/activity-live\.txt, /);

    // By keyboard: Refresh reads the panel again and keeps the focus.
    await panel.getByRole('button', { name: 'Refresh' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('.activity[aria-busy]').waitFor({ state: 'detached' });
    await expect(panel.getByRole('listitem').first().textContent()).resolves.toMatch(/^Added \/focus\/activity-live\.txt, /);
    await expect(focused()).resolves.toBe('Refresh');
    await checkAxe('files, recent activity refreshed');
  });

  it('found no axe-core violation on any view or dialog, and the page logged no error', () => {
    expect(axeFindings).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

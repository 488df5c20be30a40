import type { BrowserContext, Locator } from 'playwright-core';

// What the browser tests read in the page, shared by test/browser/*.test.ts. The functions below run in the
// page: these declarations name the little of the DOM they use (the project's types have no DOM library).
declare const document: {
  getElementById(id: string): { readonly textContent: string | null } | null;
  addEventListener(type: string, listener: () => void): void;
  createRange(): { setStart(node: PageNode, offset: number): void; setEnd(node: PageNode, offset: number): void; getBoundingClientRect(): { readonly top: number } };
};
declare class MutationObserver {
  constructor(callback: () => void);
  observe(target: unknown, options: { childList: boolean; characterData: boolean; subtree: boolean }): void;
}
/** A node of the page, as far as the line-break check reads it (3: a text node). */
interface PageNode {
  readonly nodeType: number;
  readonly data?: string;
  readonly childNodes: ArrayLike<PageNode>;
}

/**
 * Makes every page of `context` record each message of its status and alert regions as it appears, in order,
 * in `driveMessages`: a step waits for a message to have been said, not to be on screen still (a status
 * message goes after 8 s of the page's time, or when the next one comes), which a busy machine may not reach in time.
 */
export async function recordPageMessages(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const messages: string[] = [];
    Object.assign(globalThis, { driveMessages: messages });
    document.addEventListener('DOMContentLoaded', () => {
      for (const id of ['status', 'alert']) {
        const region = document.getElementById(id);
        if (!region) continue;
        const record = () => {
          const text = region.textContent;
          if (text && messages.at(-1) !== text) messages.push(text);
        };
        new MutationObserver(record).observe(region, { childList: true, characterData: true, subtree: true });
      }
    });
  });
}

/**
 * Where the text of `element` goes onto a new line other than at a space or after `_`, `.` or `-`: each as
 * the text with `|` at the break.
 */
export function midWordBreaks(element: Locator): Promise<string[]> {
  return element.evaluate((root) => {
    const chars: { node: PageNode; offset: number; char: string }[] = [];
    const walk = (node: PageNode) => {
      if (node.nodeType === 3) for (let offset = 0; offset < (node.data ?? '').length; offset++) chars.push({ node, offset, char: node.data![offset] });
      else for (const child of Array.from(node.childNodes)) walk(child);
    };
    walk(root as PageNode);
    const top = (i: number) => {
      const range = document.createRange();
      range.setStart(chars[i].node, chars[i].offset);
      range.setEnd(chars[i].node, chars[i].offset + 1);
      return range.getBoundingClientRect().top;
    };
    const text = chars.map(({ char }) => char).join('');
    const breaks: string[] = [];
    let last = -1;
    for (let i = 0; i < chars.length; i++) {
      if (/\s/.test(chars[i].char)) continue;
      const wraps = last >= 0 && top(i) > top(last) + 1;
      if (wraps && i === last + 1 && !'_.-'.includes(chars[last].char)) breaks.push(`${text.slice(0, i)}|${text.slice(i)}`);
      last = i;
    }
    return breaks;
  });
}

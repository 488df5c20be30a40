// @ts-check
/**
 * What is fixed at the bottom of the window, the Uploads tray and the messages, never hides the control that
 * has the focus (WCAG 2.4.11), at any zoom and on a phone, where they take much of the window.
 *
 * Their height is kept on the root as two custom properties, which style.css reads:
 * - `--tray-cover`: how far up from the window's bottom edge the tray reaches (0 when it is hidden). On a
 *   window too narrow for the messages beside the tray, they stand above it rather than over it.
 * - `--covered-bottom`: how far up the tray and the messages reach together. The page keeps that much room
 *   under its content (the last control can always be scrolled clear of them), and it is the root's
 *   scroll-padding, so the browser scrolls a control focused by Tab above them rather than under them.
 * A focused control still under them after the browser's own scroll (a browser that ignores scroll-padding
 * for focus; Chromium honours it) is scrolled up here, in the next frame.
 */

const root = document.documentElement;
const tray = /** @type {HTMLElement} */ (document.getElementById('uploads'));
const toasts = /** @type {HTMLElement} */ (document.querySelector('.toasts'));

/**
 * How far up from the window's bottom edge `element` reaches (0 when it is not shown).
 * @param {Element} element
 */
function reach(element) {
  const box = element.getBoundingClientRect();
  return box.height === 0 ? 0 : Math.max(0, Math.ceil(innerHeight - box.top));
}

/** How far up the tray and the messages reach (the messages' own box is as tall as the tallest shown). */
function covered() {
  return Math.max(reach(tray), ...[...toasts.children].map(reach));
}

/** Writes both properties from what is shown now. */
function measure() {
  const trayCover = `${reach(tray)}px`;
  if (root.style.getPropertyValue('--tray-cover') !== trayCover) root.style.setProperty('--tray-cover', trayCover);
  const bottom = `${covered()}px`;
  if (root.style.getPropertyValue('--covered-bottom') !== bottom) root.style.setProperty('--covered-bottom', bottom);
}

/**
 * The box a person sees for `control`: a visually hidden control (the file picker's input) is seen as its label.
 * @param {HTMLElement} control
 */
function seenBox(control) {
  const box = control.getBoundingClientRect();
  if (box.width > 1 && box.height > 1) return box;
  return (control.closest('label') ?? control).getBoundingClientRect();
}

/**
 * Scrolls the window so that `control`, if it still has the focus, stands clear of the tray and the messages.
 * @param {HTMLElement} control
 */
function keepClear(control) {
  if (document.activeElement !== control) return;
  measure();
  const box = seenBox(control);
  const limit = innerHeight - covered();
  // A control taller than the room left keeps its top in view.
  if (box.bottom > limit) window.scrollBy(0, Math.min(box.bottom - limit + 8, Math.max(0, box.top - 8)));
}

new ResizeObserver(measure).observe(tray);
for (const toast of toasts.children) new ResizeObserver(measure).observe(toast);
window.addEventListener('resize', measure);
document.addEventListener('focusin', (event) => {
  const control = event.target;
  // The tray and the messages are what covers; dialogs and menus are in the top layer, over them.
  if (!(control instanceof HTMLElement) || tray.contains(control) || toasts.contains(control) || control.closest('dialog, [popover]')) return;
  requestAnimationFrame(() => keepClear(control));
});
measure();

// @ts-check
/**
 * When an upload's progress is said (a progress bar alone is silent): at the quarters it passes, but not more
 * often than every PROGRESS_EVERY_MS, whichever gives fewer messages. A file sent in a few seconds says only its
 * start and end; a long one at most "25 %", "50 %" and "75 %".
 */

/** The least time between an upload's start and its first progress message, and between two of them. */
export const PROGRESS_EVERY_MS = 5000;

/**
 * A tracker for one upload of `size` bytes started at `startedAt` (ms, the page's clock): given the bytes sent and
 * the time, the percentage to say now (25, 50 or 75: the furthest quarter passed), or undefined.
 * @param {number} size
 * @param {number} startedAt
 * @returns {(loaded: number, now: number) => number | undefined}
 */
export function quarterTracker(size, startedAt) {
  let saidQuarter = 0;
  let saidAt = startedAt;
  return (loaded, now) => {
    const quarter = Math.floor((loaded / Math.max(size, 1)) * 4);
    // All sent is not yet stored: the end is said when the API has the file.
    if (quarter <= saidQuarter || quarter >= 4 || now - saidAt < PROGRESS_EVERY_MS) return undefined;
    saidQuarter = quarter;
    saidAt = now;
    return quarter * 25;
  };
}

// @ts-check
/**
 * The order of the messages said in one live region. A screen reader reads a region's text when it changes: a
 * message replaced before it was written, or a moment after, is never heard. So each message waits its turn, and
 * stays at least MESSAGE_GAP_MS before the next is written in its place.
 */

/** Between a message written and the next one: time for it to be read (a short message takes a second or two). */
export const MESSAGE_GAP_MS = 1500;
/** The region is emptied this long before a message is written, so that the same message said twice is heard twice. */
export const MESSAGE_FILL_MS = 50;
/** A message with none after it stays this long, then the region is emptied. */
export const MESSAGE_SHOWN_MS = 8000;

/**
 * The timers the queue runs on: the page's (`window`), which a test's clock may drive.
 * @typedef {{ setTimeout(run: () => void, ms: number): number, clearTimeout(id: number | undefined): void }} Timers
 */

/**
 * A queue that writes each message said into a region through `write`, in order, each after the one before has
 * had its MESSAGE_GAP_MS; a message identical to the last one still waiting is not queued again. A message said
 * with a `topic` (an upload's progress) takes the place of one of the same topic still waiting, which would only
 * be stale by the time it was read: a batch of many files does not leave a minute of old counts to listen to.
 * @param {(text: string) => void} write puts `text` in the region ('' empties it)
 * @param {Timers} timers
 * @returns {{ say(message: string, topic?: string): void, clear(): void }}
 */
export function createMessageQueue(write, timers) {
  /** @type {{ text: string, topic: string | undefined }[]} messages waiting, the first of them being written while `filling` */
  const waiting = [];
  /** @type {'idle' | 'filling' | 'shown'} idle: the next message is written at once; shown: not before the gap ends */
  let phase = 'idle';
  /** @type {number | undefined} */
  let stepTimer;
  /** @type {number | undefined} */
  let emptyTimer;

  const next = () => {
    if (waiting.length === 0) {
      // The last message stays until its MESSAGE_SHOWN_MS run out.
      phase = 'idle';
      return;
    }
    timers.clearTimeout(emptyTimer);
    phase = 'filling';
    write('');
    stepTimer = timers.setTimeout(() => {
      write(waiting.shift()?.text ?? '');
      phase = 'shown';
      stepTimer = timers.setTimeout(next, MESSAGE_GAP_MS);
      emptyTimer = timers.setTimeout(() => write(''), MESSAGE_SHOWN_MS);
    }, MESSAGE_FILL_MS);
  };

  return {
    say(message, topic) {
      const stale = topic === undefined ? undefined : waiting.find((waits) => waits.topic === topic);
      if (stale) stale.text = message;
      else if (waiting.at(-1)?.text !== message) waiting.push({ text: message, topic });
      if (phase === 'idle') next();
    },
    clear() {
      timers.clearTimeout(stepTimer);
      timers.clearTimeout(emptyTimer);
      waiting.length = 0;
      phase = 'idle';
      write('');
    },
  };
}

import { MESSAGE_FILL_MS, MESSAGE_GAP_MS, MESSAGE_SHOWN_MS, createMessageQueue } from '../../../dashboard/message-queue.js';

/** Timers on a clock moved by hand: `advance` runs, in order of their time, the ones that come due. */
function manualTimers() {
  let now = 0;
  let nextId = 1;
  const due = new Map<number, { at: number; run: () => void }>();
  return {
    setTimeout(run: () => void, ms: number): number {
      due.set(nextId, { at: now + ms, run });
      return nextId++;
    },
    clearTimeout(id: number | undefined): void {
      if (id !== undefined) due.delete(id);
    },
    advance(ms: number): void {
      const end = now + ms;
      for (;;) {
        const [id, first] = [...due].sort(([, a], [, b]) => a.at - b.at)[0] ?? [];
        if (first === undefined || first.at > end) break;
        due.delete(id!);
        now = first.at;
        first.run();
      }
      now = end;
    },
  };
}

/** A region as a screen reader meets it: its text now, and each text it was given, empties left out. */
function recordingRegion() {
  const region = { text: '', heard: [] as string[] };
  const write = (text: string) => {
    region.text = text;
    if (text !== '') region.heard.push(text);
  };
  return { region, write };
}

describe('Module: dashboard/message-queue', () => {
  describe('Function: createMessageQueue', () => {
    it('writes a message a moment after it is said, into a region emptied first', () => {
      // Prepare
      const timers = manualTimers();
      const { region, write } = recordingRegion();
      const queue = createMessageQueue(write, timers);

      // Act
      queue.say('Renamed /a.txt to /b.txt.');

      // Assess
      expect(region.text).toBe('');
      timers.advance(MESSAGE_FILL_MS);
      expect(region.text).toBe('Renamed /a.txt to /b.txt.');
    });

    it('writes two messages said back to back both, in order, the second a gap after the first', () => {
      // Prepare
      const timers = manualTimers();
      const { region, write } = recordingRegion();
      const queue = createMessageQueue(write, timers);

      // Act
      queue.say('Uploaded a.txt: 1 of 2 done.');
      queue.say('Uploads finished: 2 files uploaded.');
      timers.advance(MESSAGE_FILL_MS);

      // Assess: the first is not replaced, and stays its gap before the second comes.
      expect(region.text).toBe('Uploaded a.txt: 1 of 2 done.');
      timers.advance(MESSAGE_GAP_MS - 1);
      expect(region.text).toBe('Uploaded a.txt: 1 of 2 done.');
      timers.advance(1 + MESSAGE_FILL_MS);
      expect(region.text).toBe('Uploads finished: 2 files uploaded.');
      expect(region.heard).toEqual(['Uploaded a.txt: 1 of 2 done.', 'Uploads finished: 2 files uploaded.']);
    });

    it('does not queue a message identical to the last one waiting', () => {
      // Prepare
      const timers = manualTimers();
      const { region, write } = recordingRegion();
      const queue = createMessageQueue(write, timers);

      // Act
      queue.say('The link is on the clipboard.');
      queue.say('The link is on the clipboard.');
      queue.say('Link revoked: it no longer opens the file.');
      queue.say('Link revoked: it no longer opens the file.');
      timers.advance(4 * (MESSAGE_GAP_MS + MESSAGE_FILL_MS));

      // Assess
      expect(region.heard).toEqual(['The link is on the clipboard.', 'Link revoked: it no longer opens the file.']);
    });

    it('says a message again once it has been written, emptying the region between', () => {
      // Prepare
      const timers = manualTimers();
      const { region, write } = recordingRegion();
      const queue = createMessageQueue(write, timers);
      queue.say('The link is on the clipboard.');
      timers.advance(MESSAGE_FILL_MS);

      // Act
      queue.say('The link is on the clipboard.');
      timers.advance(MESSAGE_GAP_MS);

      // Assess
      expect(region.text).toBe('');
      timers.advance(MESSAGE_FILL_MS);
      expect(region.heard).toEqual(['The link is on the clipboard.', 'The link is on the clipboard.']);
    });

    it('writes a message said after the gap at once, and empties the region when the last has been shown its time', () => {
      // Prepare
      const timers = manualTimers();
      const { region, write } = recordingRegion();
      const queue = createMessageQueue(write, timers);
      queue.say('Signed in with an admin key.');
      timers.advance(MESSAGE_FILL_MS + MESSAGE_GAP_MS + 100);

      // Act
      queue.say('Deleted /a.txt.');
      timers.advance(MESSAGE_FILL_MS);

      // Assess
      expect(region.text).toBe('Deleted /a.txt.');
      timers.advance(MESSAGE_SHOWN_MS - 1);
      expect(region.text).toBe('Deleted /a.txt.');
      timers.advance(1);
      expect(region.text).toBe('');
    });

    it('puts a message of a topic in the place of one of the same topic still waiting, never of one shown', () => {
      // Prepare
      const timers = manualTimers();
      const { region, write } = recordingRegion();
      const queue = createMessageQueue(write, timers);
      queue.say('Uploaded a.txt: 1 of 9 done.', 'uploads landed');
      timers.advance(MESSAGE_FILL_MS);

      // Act: while the first count shows, three more come; another message comes between them.
      queue.say('Uploaded b.txt: 2 of 9 done.', 'uploads landed');
      queue.say('big.bin: 25 % uploaded.', 'progress of /big.bin');
      queue.say('Uploaded c.txt: 3 of 9 done.', 'uploads landed');
      queue.say('Deleted /old.txt.');
      queue.say('Uploaded d.txt: 4 of 9 done.', 'uploads landed');
      timers.advance(10 * (MESSAGE_GAP_MS + MESSAGE_FILL_MS));

      // Assess: the count shown is kept; of those waiting, the newest count is said, where the first of them waited.
      expect(region.heard).toEqual(['Uploaded a.txt: 1 of 9 done.', 'Uploaded d.txt: 4 of 9 done.', 'big.bin: 25 % uploaded.', 'Deleted /old.txt.']);
    });

    it('forgets every message waiting on clear (signing out), and says the next one said', () => {
      // Prepare
      const timers = manualTimers();
      const { region, write } = recordingRegion();
      const queue = createMessageQueue(write, timers);
      queue.say('Uploaded a.txt: 1 of 2 done.');
      queue.say('Uploads finished: 2 files uploaded.');
      timers.advance(MESSAGE_FILL_MS);

      // Act
      queue.clear();
      timers.advance(MESSAGE_SHOWN_MS);
      queue.say('Signed in with a read-only key.');
      timers.advance(MESSAGE_FILL_MS);

      // Assess
      expect(region.heard).toEqual(['Uploaded a.txt: 1 of 2 done.', 'Signed in with a read-only key.']);
    });
  });
});

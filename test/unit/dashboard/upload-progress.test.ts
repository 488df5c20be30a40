import { PROGRESS_EVERY_MS, quarterTracker } from '../../../dashboard/upload-progress.js';

const MiB = 1024 * 1024;

describe('Module: dashboard/upload-progress', () => {
  describe('Function: quarterTracker', () => {
    it('says 25, 50 and 75 % as a slow upload passes them, each once', () => {
      // Prepare
      const toSay = quarterTracker(32 * MiB, 0);
      const said: (number | undefined)[] = [];

      // Act: a part of 8 MiB a minute, with progress on the way.
      for (let part = 1; part <= 4; part++) {
        said.push(toSay((part - 0.5) * 8 * MiB, (part - 0.5) * 60_000));
        said.push(toSay(part * 8 * MiB, part * 60_000));
      }

      // Assess
      expect(said.filter((percent) => percent !== undefined)).toEqual([25, 50, 75]);
    });

    it('says nothing of an upload done sooner than PROGRESS_EVERY_MS', () => {
      // Prepare
      const toSay = quarterTracker(20 * MiB, 1000);

      // Act
      const said = [1, 2, 3, 4].map((quarter) => toSay(quarter * 5 * MiB, 1000 + (quarter * (PROGRESS_EVERY_MS - 1)) / 4));

      // Assess
      expect(said).toEqual([undefined, undefined, undefined, undefined]);
    });

    it('says the furthest quarter passed, and none sooner than PROGRESS_EVERY_MS after the last', () => {
      // Prepare
      const toSay = quarterTracker(100, 0);

      // Act and assess: 30 % too soon; at 60 % the time has come, and 50 % is said, not 25 %.
      expect(toSay(30, PROGRESS_EVERY_MS - 1)).toBeUndefined();
      expect(toSay(60, PROGRESS_EVERY_MS)).toBe(50);
      expect(toSay(80, 2 * PROGRESS_EVERY_MS - 1)).toBeUndefined();
      expect(toSay(80, 2 * PROGRESS_EVERY_MS)).toBe(75);
    });

    it('does not say 100 %: a file all sent is said when it is stored', () => {
      // Prepare
      const toSay = quarterTracker(100, 0);

      // Act and assess
      expect(toSay(100, 10 * PROGRESS_EVERY_MS)).toBeUndefined();
    });

    it('does not go back when a part is sent again (its bytes counted from 0)', () => {
      // Prepare
      const toSay = quarterTracker(100, 0);
      expect(toSay(55, PROGRESS_EVERY_MS)).toBe(50);

      // Act and assess
      expect(toSay(30, 3 * PROGRESS_EVERY_MS)).toBeUndefined();
      expect(toSay(55, 4 * PROGRESS_EVERY_MS)).toBeUndefined();
    });

    it('takes an empty file without dividing by zero', () => {
      expect(quarterTracker(0, 0)(0, PROGRESS_EVERY_MS)).toBeUndefined();
    });
  });
});

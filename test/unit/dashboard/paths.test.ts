import { childPath, destinationOf, isWithin, nameOf, nameProblem, parentOf, stemRange } from '../../../dashboard/paths.js';

describe('Module: dashboard/paths', () => {
  describe('Functions: nameOf, parentOf, childPath', () => {
    it('splits and joins paths at the root and below it', () => {
      expect([nameOf('/a.txt'), parentOf('/a.txt'), childPath('/', 'a.txt')]).toEqual(['a.txt', '/', '/a.txt']);
      expect([nameOf('/a/b/c.txt'), parentOf('/a/b/c.txt'), childPath('/a/b', 'c.txt')]).toEqual(['c.txt', '/a/b', '/a/b/c.txt']);
      expect(parentOf('/')).toBe('/');
    });
  });

  describe('Function: isWithin', () => {
    it('holds for the folder itself and what lies below it, not for a sibling that shares its start', () => {
      expect(isWithin('/a', '/a')).toBe(true);
      expect(isWithin('/a/b/c', '/a')).toBe(true);
      expect(isWithin('/ab', '/a')).toBe(false);
      expect(isWithin('/anything', '/')).toBe(true);
    });
  });

  describe('Function: nameProblem', () => {
    it.each([
      ['', 'Give it a name.'],
      ['a/b', 'A name cannot contain “/”: use Move to put it in another folder.'],
      ['..', 'A name cannot be “.” or “..”.'],
      ['tab\there', 'A name cannot contain control characters.'],
      ['report.pdf ', 'A name cannot start or end with a space.'],
      [' report.pdf', 'A name cannot start or end with a space.'],
    ])('refuses %j', (name, problem) => {
      expect(nameProblem(name)).toBe(problem);
    });

    it('accepts any other name, spaces, dots and markup included', () => {
      expect(nameProblem('<img src=x onerror=alert(1)> .hidden ü.txt')).toBeUndefined();
    });
  });

  describe('Function: destinationOf', () => {
    it('puts a renamed file beside itself, and a moved one in the folder picked', () => {
      const entry = { path: '/reports/q1.pdf', kind: 'file' as const };

      expect(destinationOf(entry, '/reports', 'q1-final.pdf')).toEqual({ to: '/reports/q1-final.pdf' });
      expect(destinationOf(entry, '/', 'q1.pdf')).toEqual({ to: '/q1.pdf' });
      expect(destinationOf(entry, '/archive/2024', 'q1.pdf')).toEqual({ to: '/archive/2024/q1.pdf' });
    });

    it('stores names in NFC, as the API does', () => {
      expect(destinationOf({ path: '/a', kind: 'file' }, '/', 'cafe\u0301')).toEqual({ to: '/caf\u00e9' });
    });

    it('refuses a folder moved into itself or below itself, but not into a sibling that shares its start', () => {
      const entry = { path: '/a', kind: 'folder' as const };

      expect(destinationOf(entry, '/a', 'a')).toEqual({ problem: 'A folder cannot go inside itself: pick a folder outside /a.' });
      expect(destinationOf(entry, '/a/b', 'a')).toHaveProperty('problem');
      expect(destinationOf(entry, '/ab', 'a')).toEqual({ to: '/ab/a' });
    });

    it('refuses the place it already is, and a bad name', () => {
      expect(destinationOf({ path: '/x/a.txt', kind: 'file' }, '/x', 'a.txt')).toEqual({ problem: 'That is where it already is: pick another folder or name.' });
      expect(destinationOf({ path: '/x/a.txt', kind: 'file' }, '/x', 'a/b')).toHaveProperty('problem');
    });
  });

  describe('Function: stemRange', () => {
    it('selects the name before its extension, or all of a name without one', () => {
      expect(stemRange('report.final.pdf')).toEqual([0, 12]);
      expect(stemRange('README')).toEqual([0, 6]);
      expect(stemRange('.env')).toEqual([0, 4]);
    });
  });
});

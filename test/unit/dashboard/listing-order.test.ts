import { naturalCompare, nextOrder, sortRows } from '../../../dashboard/listing-order.js';

type Row = { kind: 'file' | 'folder'; name: string; path: string; size?: number; created_at?: string };

function file(name: string, size = 0, created_at = '2026-01-01T00:00:00.000Z'): Row {
  return { kind: 'file', name, path: `/${name}`, size, created_at };
}

function folder(name: string): Row {
  return { kind: 'folder', name, path: `/${name}` };
}

const names = (rows: Row[]) => rows.map((row) => row.name);

describe('Module: dashboard/listing-order', () => {
  describe('Function: naturalCompare', () => {
    it('orders numbers inside names by their value, not their digits', () => {
      // Prepare
      const listed = ['file10.txt', 'file2.txt', 'file1.txt', 'file100.txt'];

      // Act
      const sorted = [...listed].sort(naturalCompare);

      // Assess
      expect(sorted).toEqual(['file1.txt', 'file2.txt', 'file10.txt', 'file100.txt']);
    });

    it('ignores case, where byte order puts every capital first', () => {
      expect(['b.txt', 'Zeta.txt', 'a.txt'].sort(naturalCompare)).toEqual(['a.txt', 'b.txt', 'Zeta.txt']);
    });

    it('still tells apart names that differ only in case, the same way every time', () => {
      expect(['readme', 'README', 'Readme'].sort(naturalCompare)).toEqual(['README', 'Readme', 'readme']);
      expect(naturalCompare('a', 'a')).toBe(0);
    });
  });

  describe('Function: sortRows', () => {
    it('puts folders first, then files, each in natural name order', () => {
      // Prepare
      const rows = [file('img10.png'), folder('b10'), file('img9.png'), folder('B2')];

      // Act
      const sorted = sortRows(rows, { key: 'name', descending: false });

      // Assess
      expect(names(sorted)).toEqual(['B2', 'b10', 'img9.png', 'img10.png']);
    });

    it('reverses names, folders still first', () => {
      const sorted = sortRows([file('a'), file('c'), folder('x'), folder('y'), file('b')], { key: 'name', descending: true });

      expect(names(sorted)).toEqual(['y', 'x', 'c', 'b', 'a']);
    });

    it('sorts files by size, ties by name A to Z, and folders (which have no size) by name', () => {
      const rows = [file('big', 900), file('b-small', 10), file('a-small', 10), folder('z'), folder('a')];

      expect(names(sortRows(rows, { key: 'size', descending: true }))).toEqual(['a', 'z', 'big', 'a-small', 'b-small']);
      expect(names(sortRows(rows, { key: 'size', descending: false }))).toEqual(['a', 'z', 'a-small', 'b-small', 'big']);
    });

    it('sorts files by date', () => {
      const rows = [file('old', 0, '2024-01-01T00:00:00.000Z'), file('new', 0, '2026-05-01T00:00:00.000Z'), file('mid', 0, '2025-01-01T00:00:00.000Z')];

      expect(names(sortRows(rows, { key: 'modified', descending: true }))).toEqual(['new', 'mid', 'old']);
    });

    it('leaves the rows it was given as they were', () => {
      const rows = [file('b'), file('a')];

      sortRows(rows, { key: 'name', descending: false });

      expect(names(rows)).toEqual(['b', 'a']);
    });
  });

  describe('Function: nextOrder', () => {
    it('turns the current column the other way round', () => {
      expect(nextOrder({ key: 'size', descending: true }, 'size')).toEqual({ key: 'size', descending: false });
    });

    it('starts names A to Z, and sizes and dates largest and newest first', () => {
      expect(nextOrder({ key: 'size', descending: true }, 'name')).toEqual({ key: 'name', descending: false });
      expect(nextOrder({ key: 'name', descending: false }, 'size')).toEqual({ key: 'size', descending: true });
      expect(nextOrder({ key: 'name', descending: false }, 'modified')).toEqual({ key: 'modified', descending: true });
    });
  });
});

import { contentRange, rangeOf, unsatisfiedRange } from '../../../functions/http/ranges';

// A file of 1000 bytes unless a case says otherwise.
const SIZE = 1000;

describe('Function: rangeOf (RFC 9110 §14)', () => {
  it('sends the whole file when there is no Range header', () => {
    expect(rangeOf(undefined, SIZE)).toBeUndefined();
  });

  it.each([
    ['the first byte', 'bytes=0-0', { start: 0, end: 0 }],
    ['the last byte', 'bytes=999-999', { start: 999, end: 999 }],
    ['a middle part', 'bytes=100-199', { start: 100, end: 199 }],
    ['the whole file, explicitly', 'bytes=0-999', { start: 0, end: 999 }],
    ['an open range', 'bytes=990-', { start: 990, end: 999 }],
    ['an open range from 0', 'bytes=0-', { start: 0, end: 999 }],
    ['a suffix', 'bytes=-10', { start: 990, end: 999 }],
    ['a suffix of one byte', 'bytes=-1', { start: 999, end: 999 }],
    ['a last position past the end, clamped', 'bytes=500-5000', { start: 500, end: 999 }],
    ['a last position far past 2^53, clamped', 'bytes=500-99999999999999999999999', { start: 500, end: 999 }],
    ['a suffix longer than the file: all of it', 'bytes=-5000', { start: 0, end: 999 }],
    ['a suffix exactly the file', 'bytes=-1000', { start: 0, end: 999 }],
    ['leading zeros', 'bytes=007-010', { start: 7, end: 10 }],
    ['the unit in capitals (units are case-insensitive)', 'BYTES=0-9', { start: 0, end: 9 }],
    ['the unit in mixed case', 'Bytes=0-9', { start: 0, end: 9 }],
    ['whitespace around the field value', '  bytes=0-9  ', { start: 0, end: 9 }],
    ['whitespace around the one list element', 'bytes= 0-9 ', { start: 0, end: 9 }],
    ['empty list elements around one range', 'bytes=,0-9,', { start: 0, end: 9 }],
  ])('selects %s: %s', (_, header, range) => {
    expect(rangeOf(header, SIZE)).toEqual(range);
  });

  it.each([
    ['a first position at the size', 'bytes=1000-'],
    ['a first position past the size', 'bytes=1500-1600'],
    ['a first position far past 2^53', 'bytes=99999999999999999999-'],
    ['a suffix of zero bytes', 'bytes=-0'],
    ['a suffix of zero bytes, with leading zeros', 'bytes=-000'],
  ])('is unsatisfiable for %s: %s', (_, header) => {
    expect(rangeOf(header, SIZE)).toBe('unsatisfiable');
  });

  it.each(['bytes=0-0', 'bytes=0-', 'bytes=-1', 'bytes=-5000'])('finds nothing to send in an empty file: %s', (header) => {
    expect(rangeOf(header, 0)).toBe('unsatisfiable');
  });

  it('serves the one byte of a one-byte file by every form', () => {
    for (const header of ['bytes=0-0', 'bytes=0-', 'bytes=-1', 'bytes=-2', 'bytes=0-100']) expect(rangeOf(header, 1)).toEqual({ start: 0, end: 0 });
    expect(rangeOf('bytes=1-', 1)).toBe('unsatisfiable');
  });

  it.each([
    ['a first position after the last (invalid, not unsatisfiable)', 'bytes=5-1'],
    ['an invalid spec even past the end', 'bytes=2000-1500'],
    ['a unit other than bytes', 'items=0-9'],
    ['no unit', '=0-9'],
    ['no "="', 'bytes 0-9'],
    ['whitespace before "="', 'bytes =0-9'],
    ['whitespace inside a range', 'bytes=0 - 9'],
    ['letters', 'bytes=a-b'],
    ['a sign', 'bytes=+1-2'],
    ['a negative last position', 'bytes=1--2'],
    ['a decimal point', 'bytes=1.5-2'],
    ['a lone dash', 'bytes=-'],
    ['a lone number', 'bytes=5'],
    ['three parts', 'bytes=1-2-3'],
    ['no range at all', 'bytes='],
    ['only commas', 'bytes=,,'],
    ['an empty header', ''],
    ['two specifiers', 'bytes=0-1, bytes=2-3'],
  ])('ignores %s (the whole file is sent): %s', (_, header) => {
    expect(rangeOf(header, SIZE)).toBeUndefined();
  });

  it.each([
    ['two ranges', 'bytes=0-1,5-6'],
    ['two ranges with whitespace', 'bytes=0-1 , 5-6'],
    ['overlapping ranges', 'bytes=0-10,5-20'],
    ['a range and a suffix', 'bytes=0-1,-1'],
    ['two ranges past the end', 'bytes=2000-,3000-'],
  ])('serves several ranges as the whole file, as decided: %s', (_, header) => {
    expect(rangeOf(header, SIZE)).toBeUndefined();
  });
});

describe('Function: contentRange', () => {
  it('names the part and the whole size', () => {
    expect(contentRange({ start: 0, end: 99 }, 1000)).toBe('bytes 0-99/1000');
  });
});

describe('Function: unsatisfiedRange', () => {
  it('names only the size', () => {
    expect(unsatisfiedRange(1000)).toBe('bytes */1000');
    expect(unsatisfiedRange(0)).toBe('bytes */0');
  });
});

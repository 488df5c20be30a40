import { type UploadPart, resolveDestinations } from '../../../functions/core/upload';

const part = (filename: string): UploadPart => ({ filename, data: Buffer.from('x') });

describe('Function: resolveDestinations (spec 4.1)', () => {
  it('applies the first matching rule of five', () => {
    const parts = ['one', 'two', 'three', 'four', 'five'].map(part);
    const targets = [{ path: '/p/x', folder: '/f', name: 'n' }, { folder: '/f', name: 'n2' }, { folder: '/f/' }, { name: 'n4' }, {}];
    expect(resolveDestinations(parts, targets)).toEqual(['/p/x', '/f/n2', '/f/three', '/n4', '/five']);
  });

  it('puts every file at the root under its filename without metadata', () => {
    expect(resolveDestinations([part('a'), part('b')], undefined)).toEqual(['/a', '/b']);
  });

  it('needs one metadata entry per file', () => {
    expect(() => resolveDestinations([part('a')], [{}, {}])).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => resolveDestinations([part('a'), part('b')], [{}])).toThrow(/metadata has 1 entries for 2 files/);
  });

  it('needs at least one file', () => {
    expect(() => resolveDestinations([], undefined)).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringContaining('files') }));
  });

  it('rejects two files bound for one path, and a file where another needs a folder', () => {
    expect(() => resolveDestinations([part('a'), part('a')], undefined)).toThrow(/files\[0\] and files\[1\] have the same destination \/a/);
    expect(() => resolveDestinations([part('a'), part('b')], [{ path: '/d' }, { folder: '/d' }])).toThrow(/files\[0\] goes to \/d/);
  });

  it('uses the original filename only where a rule needs it', () => {
    expect(resolveDestinations([part('bad/name')], [{ path: '/fine' }])).toEqual(['/fine']);
    expect(() => resolveDestinations([part('bad/name')], [{ folder: '/f' }])).toThrow(/files\[0\] filename must not contain "\/"/);
    expect(() => resolveDestinations([part('')], undefined)).toThrow(/files\[0\] has no filename/);
  });
});

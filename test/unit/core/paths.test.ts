import { ancestorsOf, comparePaths, joinPath, nameOf, parentOf, parseName, parsePath } from '../../../functions/core/paths';

describe('Function: parsePath', () => {
  it.each([
    ['/', '/'],
    ['/a', '/a'],
    ['/a/b c/d.txt', '/a/b c/d.txt'],
    ['/Cafe\u0301', '/Caf\u00e9'],
  ])('accepts %j as %j', (input, expected) => {
    expect(parsePath(input, 'path')).toBe(expected);
  });

  it('drops one trailing slash from a folder parameter only', () => {
    expect(parsePath('/a/', 'folder', { allowTrailingSlash: true })).toBe('/a');
    expect(() => parsePath('/a/', 'path')).toThrow(/path must not contain empty segments/);
  });

  it.each([
    ['a/b', /must start with "\/"/],
    ['', /must start with "\/"/],
    ['/a//b', /empty segments/],
    ['/a/./b', /"\." or "\.\." segments/],
    ['/a/..', /"\." or "\.\." segments/],
    ['/a\u0000b', /control characters/],
    ['/a\u009fb', /control characters/],
    [`/${'x'.repeat(256)}`, /segment longer than 255 bytes/],
    [`/${'ab/'.repeat(341)}ab`, /longer than 1024 bytes/],
    [`/${'d/'.repeat(64)}x`, /more than 64 levels deep/],
  ])('rejects %j with a validation error naming the parameter', (input, message) => {
    expect(() => parsePath(input, 'path')).toThrow(expect.objectContaining({ code: 'validation_error', message: expect.stringMatching(message) }));
    expect(() => parsePath(input, 'path')).toThrow(/^path /);
  });

  it('accepts a path 64 levels deep', () => {
    expect(parsePath(`/${'d/'.repeat(63)}x`, 'path')).toBe(`/${'d/'.repeat(63)}x`);
  });

  it('counts length limits in UTF-8 bytes, not characters', () => {
    expect(() => parsePath(`/${'é'.repeat(127)}`, 'path')).not.toThrow();
    expect(() => parsePath(`/${'é'.repeat(128)}`, 'path')).toThrow(/255 bytes/);
  });
});

describe('Function: parseName', () => {
  it('rejects a slash and accepts other punctuation', () => {
    expect(() => parseName('a/b', 'name')).toThrow(/name must not contain "\/"/);
    expect(parseName('a b (1).tar.gz', 'name')).toBe('a b (1).tar.gz');
  });
});

describe('path helpers', () => {
  it('split and join canonical paths', () => {
    expect(joinPath('/', 'a')).toBe('/a');
    expect(joinPath('/a', 'b')).toBe('/a/b');
    expect(parentOf('/a/b/c')).toBe('/a/b');
    expect(parentOf('/a')).toBe('/');
    expect(nameOf('/a/b/c.txt')).toBe('c.txt');
    expect(ancestorsOf('/a/b/c')).toEqual(['/a', '/a/b']);
    expect(ancestorsOf('/a')).toEqual([]);
  });

  it('orders by UTF-8 bytes, as DynamoDB does', () => {
    const paths = ['/b', '/a', '/B', '/é', '/z', '/ä'];
    expect([...paths].sort(comparePaths)).toEqual(['/B', '/a', '/b', '/z', '/ä', '/é']);
  });

  it('orders code points past U+FFFF above U+E000–U+FFFF, as their UTF-8 bytes do', () => {
    // UTF-16 puts 😀 (U+1F600, surrogates D83D DE00) before U+FF21 'Ａ'; UTF-8 puts it after (F0… > EF…).
    const paths = ['/\u{1F600}', '/\uFF21', '/\uE000', '/a', '/\u{10000}x', '/\u{10000}', '/\uD7FF'];
    const bytes = [...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...paths].sort(comparePaths)).toEqual(bytes);
    expect(bytes).toEqual(['/a', '/\uD7FF', '/\uE000', '/\uFF21', '/\u{10000}', '/\u{10000}x', '/\u{1F600}']);
    expect(comparePaths('/a', '/a')).toBe(0);
    expect(Math.sign(comparePaths('/a', '/a/b'))).toBe(-1);
  });
});

describe('names that would look like another name', () => {
  it.each([
    ['a zero-width space', '/report\u200B.pdf', 'U+200B'],
    ['a byte order mark', '/\uFEFFreport.pdf', 'U+FEFF'],
    ['a no-break space', '/annual\u00A0report.pdf', 'U+00A0'],
    ['a right-to-left override', '/invoice\u202Efdp.exe', 'U+202E'],
    ['an isolate', '/a\u2066b', 'U+2066'],
    ['the replacement character of bytes that were not UTF-8', '/caf\uFFFD.txt', 'U+FFFD'],
  ])('refuses %s, naming it', (_, path, code) => {
    expect(() => parsePath(path, 'path')).toThrow(code);
    expect(() => parseName(path.slice(1), 'name')).toThrow(code);
  });

  it('accepts plain spaces and the letters of any script', () => {
    expect(parsePath('/annual report/日本語/café.pdf', 'path')).toBe('/annual report/日本語/café.pdf');
  });
});


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

  it.each([
    ['a combining grapheme joiner', '/re\u034Fport.pdf', 'U+034F'],
    ['a Hangul choseong filler', '/\u115F.pdf', 'U+115F'],
    ['a Hangul jungseong filler', '/a\u1160', 'U+1160'],
    ['a Hangul filler', '/\u3164', 'U+3164'],
    ['a halfwidth Hangul filler', '/x\uFFA0y', 'U+FFA0'],
    ['a Braille blank', '/\u2800', 'U+2800'],
    ['a musical null notehead', '/a\u{1D159}', 'U+1D159'],
    ['a variation selector after a letter', '/a\uFE0F.txt', 'U+FE0F'],
    ['a Mongolian free variation selector', '/a\u180B', 'U+180B'],
    ['a Khmer inherent vowel', '/a\u17B4', 'U+17B4'],
    ['a tag character', '/a\u{E0041}', 'U+E0041'],
    ['a line separator', '/a\u2028b', 'U+2028'],
    ['a paragraph separator', '/a\u2029b', 'U+2029'],
  ])('refuses %s, drawn as nothing, naming it', (_, path, code) => {
    expect(() => parsePath(path, 'path')).toThrow(expect.objectContaining({ code: 'validation_error', message: expect.stringContaining(code) }));
    expect(() => parseName(path.slice(1), 'name')).toThrow(code);
  });

  it('refuses every default-ignorable code point, whichever it is', () => {
    const accepted: string[] = [];
    for (let cp = 0xa0; cp <= 0xe0fff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      if (!/\p{Default_Ignorable_Code_Point}/u.test(ch)) continue;
      try {
        parsePath(`/a${ch}b`, 'path');
        accepted.push(`U+${cp.toString(16).toUpperCase()}`);
      } catch {
        // refused, as it should be
      }
    }
    expect(accepted).toEqual([]);
  });

  it.each([
    ['a leading space', '/ report.pdf', ' report.pdf'],
    ['a trailing space', '/report.pdf ', 'report.pdf '],
    ['a folder ending in a space', '/reports /q4.pdf', 'reports '],
    ['a name of spaces only', '/a/   ', '   '],
  ])('refuses %s, saying so', (_, path, name) => {
    expect(() => parsePath(path, 'path')).toThrow(expect.objectContaining({ code: 'validation_error', message: expect.stringMatching(/^path has a name that starts or ends with a space/) }));
    expect(() => parseName(name, 'name')).toThrow(/^name starts or ends with a space/);
  });

  it('accepts plain spaces and the letters of any script', () => {
    expect(parsePath('/annual report/日本語/café.pdf', 'path')).toBe('/annual report/日本語/café.pdf');
  });

  it('accepts an emoji typed in its emoji form (U+FE0F after a pictograph)', () => {
    expect(parsePath('/\u2764\uFE0F notes/\u2600\uFE0F.jpg', 'path')).toBe('/\u2764\uFE0F notes/\u2600\uFE0F.jpg');
  });

  it('looks up as it is a path stored before these rules, when the path names what exists', () => {
    for (const path of ['/old\u3164/a.txt', '/report.pdf ', '/ lead/x', '/twin\u200B.txt', '/caf\uFFFD.txt']) {
      expect(parsePath(path, 'path', { existing: true })).toBe(path);
      expect(parseName(path.slice(path.lastIndexOf('/') + 1), 'name', { existing: true })).toBe(path.slice(path.lastIndexOf('/') + 1));
      expect(() => parsePath(path, 'path')).toThrow(expect.objectContaining({ code: 'validation_error' }));
    }
  });

  it('keeps every other rule for a path that names what exists: no such path was ever stored', () => {
    expect(() => parsePath('/a\u0000b', 'path', { existing: true })).toThrow(/control characters/);
    expect(() => parsePath('/a/../b', 'path', { existing: true })).toThrow(/"\." or "\.\." segments/);
    expect(() => parsePath('/a\uD800', 'path', { existing: true })).toThrow(/lone surrogate/);
  });
});


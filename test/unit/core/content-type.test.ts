import { contentTypeFor } from '../../../functions/core/content-type';

describe('Function: contentTypeFor', () => {
  it('keeps a declared type', () => {
    expect(contentTypeFor('a.bin', 'image/webp')).toBe('image/webp');
  });

  it('takes the extension when the type is missing, generic, or a parser default', () => {
    expect(contentTypeFor('a.png', undefined)).toBe('image/png');
    expect(contentTypeFor('a.pdf', 'application/octet-stream')).toBe('application/pdf');
    expect(contentTypeFor('a.json', 'text/plain')).toBe('application/json');
  });

  it('falls back to what was declared, then to application/octet-stream', () => {
    expect(contentTypeFor('notes', 'text/plain')).toBe('text/plain');
    expect(contentTypeFor('blob', undefined)).toBe('application/octet-stream');
  });
});

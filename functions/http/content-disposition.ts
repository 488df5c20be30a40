/**
 * `attachment` with the filename as RFC 6266 asks: an ASCII `filename` for old clients beside the exact
 * UTF-8 `filename*`. Written here because the `content-disposition` package treats "\" as a path
 * separator and cuts the name at it, and names in Drive may hold "\".
 */
export function attachment(name: string): string {
  return disposition('attachment', name);
}

/** `inline` with the filename as `attachment` gives it: what a browser shows in the tab, and saves under that name. */
export function inline(name: string): string {
  return disposition('inline', name);
}

function disposition(type: 'attachment' | 'inline', name: string): string {
  return `${type}; filename="${asciiFallback(name)}"; filename*=UTF-8''${encodeRfc8187(name)}`;
}

/**
 * Accents dropped, anything else outside printable ASCII (and the quoted-string specials " and \, and the
 * path separator /, which NFKD can make of a fullwidth ／) as "_"; a result a client could take for a path
 * (".", "..", empty, or only dots) becomes "download".
 */
function asciiFallback(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\/]/g, '_');
  return /^\.*$/.test(ascii.trim()) ? 'download' : ascii;
}

// RFC 8187 value-chars: encodeURIComponent leaves ' ( ) * unescaped, which attr-char does not allow.
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const GENERIC = 'application/octet-stream';

type MimeTypes = typeof import('mime-types');
let mimeTypes: MimeTypes | undefined;

/**
 * The media type a file is served with: the one it was uploaded with, else one from its name's extension.
 * A multipart parser reports a part without a Content-Type as text/plain (RFC 7578), so text/plain also
 * yields to an extension that says otherwise.
 */
export function contentTypeFor(name: string, declared: string | undefined): string {
  const given = declared?.trim();
  const lower = given?.toLowerCase();
  if (given && lower !== GENERIC && lower !== 'text/plain') return given;
  // The extension table (mime-db, 150 KB) is loaded on first use, not on every cold start of the upload
  // function: most clients declare their types.
  mimeTypes ??= require('mime-types') as MimeTypes;
  const byName = mimeTypes.lookup(name) || undefined;
  return byName ?? given ?? GENERIC;
}

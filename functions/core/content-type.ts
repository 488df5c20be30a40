import { lookup } from 'mime-types';

const GENERIC = 'application/octet-stream';

/**
 * The media type a file is served with: the one it was uploaded with, else one from its name's extension.
 * A multipart parser reports a part without a Content-Type as text/plain (RFC 7578), so text/plain also
 * yields to an extension that says otherwise.
 */
export function contentTypeFor(name: string, declared: string | undefined): string {
  const given = declared?.trim();
  const byName = lookup(name) || undefined;
  const generic = !given || given.toLowerCase() === GENERIC || (given.toLowerCase() === 'text/plain' && byName !== undefined);
  if (!generic) return given;
  return byName ?? given ?? GENERIC;
}

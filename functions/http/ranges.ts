import type { ByteRange } from '../core/ports';

// ranges-specifier = range-unit "=" range-set, the unit a token (RFC 9110 §14.1).
const SPECIFIER = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+)=(.*)$/s;
const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/**
 * What a `Range` header asks of a file of `size` bytes (RFC 9110 §14): one byte range, `'unsatisfiable'`
 * (416), or undefined when the whole file is to be sent: no header, a unit other than bytes, a header that
 * is not valid, or several ranges (Drive serves one range per request; S3 too reads one per GetObject).
 * Hand-written because the `range-parser` package answers an invalid spec (`5-1`, `a-b`) as unsatisfiable,
 * where RFC 9110 says to ignore the header.
 */
export function rangeOf(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const specifier = SPECIFIER.exec(header.trim());
  // Range units are case-insensitive (RFC 9110 §14.1).
  if (!specifier || specifier[1].toLowerCase() !== 'bytes') return undefined;
  // range-set is a #list: elements separated by commas and optional whitespace, empty elements not counted.
  const specs = specifier[2]
    .split(',')
    .map((spec) => spec.trim())
    .filter((spec) => spec !== '');
  if (specs.length !== 1) return undefined;
  return satisfy(specs[0], size);
}

/** One range-spec against the file's size (RFC 9110 §14.1.1-14.1.3); undefined if it is not valid. */
function satisfy(spec: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  // BigInt, so that digits past 2^53 still compare exactly; they never lie within a file.
  const length = BigInt(size);
  const suffix = SUFFIX_RANGE.exec(spec);
  if (suffix) {
    const last = BigInt(suffix[1]);
    // An empty file has no byte to send, and a suffix of 0 bytes selects none.
    if (last === 0n || length === 0n) return 'unsatisfiable';
    return { start: Number(last >= length ? 0n : length - last), end: size - 1 };
  }
  const int = INT_RANGE.exec(spec);
  if (!int) return undefined;
  const first = BigInt(int[1]);
  const last = int[2] === '' ? undefined : BigInt(int[2]);
  if (last !== undefined && last < first) return undefined;
  if (first >= length) return 'unsatisfiable';
  // A last position past the end means "to the end".
  return { start: Number(first), end: last === undefined || last >= length ? size - 1 : Number(last) };
}

/** The `Content-Range` of a 206 carrying `range` of a file of `size` bytes. */
export function contentRange(range: ByteRange, size: number): string {
  return `bytes ${range.start}-${range.end}/${size}`;
}

/** The `Content-Range` of a 416: the file's size, so the client can ask again (RFC 9110 §15.5.17). */
export function unsatisfiedRange(size: number): string {
  return `bytes */${size}`;
}

import { invalid } from './errors';

export const ROOT = '/';
export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENT_BYTES = 255;
/** Folders below the root a path may have: each level is a write when made and a query when walked. */
export const MAX_PATH_DEPTH = 64;

// C0 controls, DEL and C1 controls: invisible in listings and unsafe in headers.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * Characters that make two different names look alike: format characters (zero-width, BOM, bidi controls:
 * Unicode's Cf), spaces other than U+0020 (NBSP and the rest of Zs) and the line and paragraph separators,
 * every code point Unicode says to draw as nothing (Default_Ignorable_Code_Point: the combining grapheme
 * joiner, the Hangul fillers, variation selectors, tags), the blanks that are drawn as nothing although
 * Unicode does not say so (the Braille blank U+2800, the null notehead U+1D159), and U+FFFD, which stands
 * where a name's bytes were not valid UTF-8 (two different names would alias as one).
 */
const LOOKALIKE = /[\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u{2800}\u{1D159}\u{FFFD}]/u;
// U+FE0F after a pictograph is how ❤️ or ☀️ is typed (the emoji rather than the text form): it changes how
// the name looks, so it is allowed there; after a letter it changes nothing and would make a twin.
const EMOJI_PRESENTATION = '\uFE0F';
const PICTOGRAPH = /\p{Extended_Pictographic}/u;

/** How a path parameter is read. */
export interface PathOptions {
  /** A folder parameter: one trailing slash is dropped. */
  allowTrailingSlash?: boolean;
  /**
   * The path names what may already be stored (a read, a delete, the source of a move or a link): a name
   * refused only since it was stored (an invisible character, a space at either end) is looked up as it
   * is, so that it can still be listed, downloaded, moved to a valid name and deleted. A path that names
   * something to create is always checked in full.
   */
  existing?: boolean;
}

/**
 * Parses a client-supplied path into its canonical form (NFC, no trailing slash), or throws a
 * validation error that names `param`.
 */
export function parsePath(value: string, param: string, options: PathOptions = {}): string {
  checkUnicode(value, param, options);
  let path = value.normalize('NFC');
  if (!path.startsWith('/')) throw invalid(`${param} must start with "/" (got ${quote(value)})`);
  if (options.allowTrailingSlash && path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (path === ROOT) return ROOT;
  if (CONTROL.test(path)) throw invalid(`${param} must not contain control characters`);
  checkLength(path, param);
  for (const segment of path.slice(1).split('/')) checkSegment(segment, param, value, options);
  return path;
}

/** Checks one path segment (a file or folder name) and returns it NFC-normalised. */
export function parseName(value: string, param: string, options: Pick<PathOptions, 'existing'> = {}): string {
  checkUnicode(value, param, options);
  const name = value.normalize('NFC');
  if (name.includes('/')) throw invalid(`${param} must not contain "/" (got ${quote(value)})`);
  if (CONTROL.test(name)) throw invalid(`${param} must not contain control characters`);
  checkSegment(name, param, value, options);
  return name;
}

function checkSegment(segment: string, param: string, original: string, options: PathOptions): void {
  if (segment === '') throw invalid(`${param} must not contain empty segments (got ${quote(original)})`);
  if (segment === '.' || segment === '..') {
    throw invalid(`${param} must not contain "." or ".." segments (got ${quote(original)})`);
  }
  if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) {
    throw invalid(`${param} has a segment longer than ${MAX_SEGMENT_BYTES} bytes (UTF-8)`);
  }
  // "report.pdf " and "report.pdf" look the same in a listing. Every other space is refused anywhere.
  if (!options.existing && (segment.startsWith(' ') || segment.endsWith(' '))) {
    const what = original.includes('/') ? `${param} has a name that starts or ends` : `${param} starts or ends`;
    throw invalid(`${what} with a space (got ${quote(original)}); names must not`);
  }
}

/** Joins a canonical folder path and a name. */
export function joinPath(folder: string, name: string): string {
  return folder === ROOT ? `/${name}` : `${folder}/${name}`;
}

/** Joins a parsed folder and name from two parameters, checking the length of the whole. */
export function childPath(folder: string, name: string, params: string): string {
  const path = joinPath(folder, name);
  checkLength(path, params);
  return path;
}

function checkLength(path: string, param: string): void {
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw invalid(`${param} is longer than ${MAX_PATH_BYTES} bytes (UTF-8)`);
  if (path.split('/').length - 1 > MAX_PATH_DEPTH) throw invalid(`${param} is more than ${MAX_PATH_DEPTH} levels deep`);
}

// A lone surrogate cannot be encoded as UTF-8, so no URL or header could name the file.
function checkUnicode(value: string, param: string, options: Pick<PathOptions, 'existing'> = {}): void {
  if (!value.isWellFormed()) throw invalid(`${param} is not valid Unicode (it has a lone surrogate)`);
  if (options.existing) return;
  const chars = [...value];
  const lookalike = chars.find((ch, i) => ch !== ' ' && LOOKALIKE.test(ch) && !(ch === EMOJI_PRESENTATION && i > 0 && PICTOGRAPH.test(chars[i - 1])));
  if (lookalike) {
    const what = lookalike === '\uFFFD' ? 'U+FFFD, where bytes that are not valid UTF-8 were' : `U+${lookalike.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, an invisible or look-alike character`;
    throw invalid(`${param} contains ${what}; names must not`);
  }
}

/** Throws a validation error naming `param` if `value` holds a character that would make it look like another name. */
export function checkVisible(value: string, param: string): void {
  checkUnicode(value, param);
}

/** The folder that holds `path` (the root holds itself). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? ROOT : path.slice(0, i);
}

/** The last segment of `path`. */
export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Every folder above `path`, shallowest first, without the root: `/a/b/c` gives `/a`, `/a/b`. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}

/**
 * Orders paths by their UTF-8 bytes, the order DynamoDB sorts keys in, without encoding them: UTF-8 byte
 * order is code point order, which is UTF-16 code unit order except that surrogates (U+D800–U+DFFF, the
 * halves of code points past U+FFFF) sort above U+E000–U+FFFF. A sort calls this n·log n times, so it
 * allocates nothing.
 */
export function comparePaths(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** A UTF-16 code unit moved so that surrogates rank above every other unit from U+E000 up. */
function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

function quote(value: string): string {
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return JSON.stringify(shown);
}

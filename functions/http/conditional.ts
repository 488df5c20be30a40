import { DriveError } from '../core/errors';
import type { ByteRange, FileNode } from '../core/ports';
import { rangeOf, unsatisfiedRange } from './ranges';

/** What a download's conditional and range headers are compared with: the file's validators and size. */
export interface Representation {
  /** A strong entity tag, quotes included. */
  etag: string;
  /** When the bytes were written, to the second (HTTP dates have no finer precision). */
  lastModified: Date;
  size: number;
}

/** The request headers a download answers to; absent ones undefined. */
export interface DownloadRequest {
  method: 'GET' | 'HEAD';
  range?: string;
  ifRange?: string;
  /** Read by the API's download only; a share link's ignores it, as it always has. */
  ifMatch?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
}

/** What to answer: the whole file, one part of it, or that the client's copy is current. */
export type DownloadPlan = { status: 200 } | { status: 206; range: ByteRange } | { status: 304 };

/**
 * The validators of `file`. The ETag is its id: every upload writes a new id with new bytes and the bytes
 * under an id never change, so the id is a strong validator known from the record alone, without S3.
 */
export function representationOf(file: FileNode): Representation {
  return { etag: `"${file.etag}"`, lastModified: wholeSeconds(new Date(file.createdAt)), size: file.size };
}

/**
 * Evaluates the request's preconditions and range in the order of RFC 9110 §13.2.2: If-Match (which fails
 * with `precondition_failed`, 412, carrying the file's `ETag`), then If-None-Match, else If-Modified-Since
 * (either may answer 304), then If-Range and Range (GET only). A range past the end of the file throws
 * `range_not_satisfiable`, whose `Content-Range` gives the size.
 */
export function planDownload(request: DownloadRequest, file: Representation): DownloadPlan {
  if (request.ifMatch !== undefined && !matchHits(request.ifMatch, file.etag)) {
    throw new DriveError(
      'precondition_failed',
      `If-Match ${JSON.stringify(request.ifMatch.slice(0, 200))} names no version this file has: its ETag is ${file.etag}; nothing is sent`,
      { ETag: file.etag },
    );
  }
  if (request.ifNoneMatch !== undefined) {
    if (noneMatchHits(request.ifNoneMatch, file.etag)) return { status: 304 };
  } else if (request.ifModifiedSince !== undefined && unmodifiedSince(request.ifModifiedSince, file.lastModified)) {
    return { status: 304 };
  }
  // Range is defined for GET only (RFC 9110 §14.2): a HEAD describes the whole file.
  if (request.method !== 'GET' || request.range === undefined) return { status: 200 };
  if (request.ifRange !== undefined && !ifRangeHolds(request.ifRange, file)) return { status: 200 };
  const range = rangeOf(request.range, file.size);
  if (range === undefined) return { status: 200 };
  if (range === 'unsatisfiable') {
    throw new DriveError(
      'range_not_satisfiable',
      `Range ${JSON.stringify(request.range)} selects no byte of this file of ${file.size} bytes`,
      { 'Content-Range': unsatisfiedRange(file.size), 'Accept-Ranges': 'bytes' },
    );
  }
  return { status: 206, range };
}

/**
 * Whether If-Match holds for a file whose ETag is `etag` (RFC 9110 §13.1.1): `*` holds for any file, a list
 * when one of its tags is a strong match (a weak tag never is). A bare ETag without quotes, as a listing's
 * `etag` or an upload's `if_match` gives it, is taken as that strong tag. Anything else holds for nothing:
 * a condition that cannot be read is not taken as met.
 */
export function matchHits(header: string, etag: string): boolean {
  const value = header.trim();
  if (value === '*') return true;
  const mine = entityTag(etag);
  if (mine === undefined || mine.weak) return false;
  const tags = entityTags(value) ?? (/^[\x21\x23-\x7e\x80-\xff]+$/.test(value) ? [{ weak: false, opaque: value }] : []);
  return tags.some((tag) => !tag.weak && tag.opaque === mine.opaque);
}

/**
 * Whether If-None-Match matches `etag` (RFC 9110 §13.1.2): `*` matches any file, a list matches when one of
 * its tags is equal by weak comparison (a `W/` prefix on either side is ignored). A value that is not a
 * list of entity tags matches nothing, so the client gets the file.
 */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const mine = entityTag(etag);
  return (entityTags(header) ?? []).some((tag) => tag.opaque === mine?.opaque);
}

/**
 * Whether a file last modified at `lastModified` is unmodified since the If-Modified-Since date (RFC 9110
 * §13.1.3), comparing whole seconds. A value that is not one HTTP-date is ignored (false).
 */
export function unmodifiedSince(header: string, lastModified: Date): boolean {
  const since = parseHttpDate(header);
  return since !== undefined && wholeSeconds(lastModified).getTime() <= since.getTime();
}

/**
 * Whether If-Range lets the range be served (RFC 9110 §13.1.5): an entity tag that is a strong match of the
 * file's (a weak tag never is), or an HTTP-date equal to its Last-Modified. Anything else sends the whole file.
 */
export function ifRangeHolds(header: string, file: Pick<Representation, 'etag' | 'lastModified'>): boolean {
  const value = header.trim();
  if (value.startsWith('"') || value.startsWith('W/')) {
    const tag = entityTag(value);
    const mine = entityTag(file.etag);
    return tag !== undefined && !tag.weak && mine !== undefined && !mine.weak && tag.opaque === mine.opaque;
  }
  const date = parseHttpDate(value);
  return date !== undefined && date.getTime() === wholeSeconds(file.lastModified).getTime();
}

interface EntityTag {
  weak: boolean;
  opaque: string;
}

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text (RFC 9110 §8.8.3).
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;
// One element of a #list of entity tags: the tag (or nothing) up to the next comma or the end.
const LIST_ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(,|$)/y;

function entityTag(value: string): EntityTag | undefined {
  const match = ENTITY_TAG.exec(value.trim());
  return match ? { weak: match[1] !== undefined, opaque: match[2] } : undefined;
}

/** The tags of a comma-separated list (commas may also sit inside a tag), or undefined if it is not one. */
function entityTags(value: string): EntityTag[] | undefined {
  const tags: EntityTag[] = [];
  const element = new RegExp(LIST_ELEMENT);
  while (element.lastIndex < value.length) {
    const match = element.exec(value);
    if (!match) return undefined;
    if (match[2] !== undefined) tags.push({ weak: match[1] !== undefined, opaque: match[2] });
    if (match[3] === '') break;
  }
  return tags.length > 0 ? tags : undefined;
}

/** `date` as an HTTP-date in the preferred IMF-fixdate form: `Sun, 06 Nov 1994 08:49:37 GMT`. */
export function httpDate(date: Date): string {
  return date.toUTCString();
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// The three forms a recipient must accept (RFC 9110 §5.6.7); names are case-sensitive.
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * Parses an HTTP-date in any of its three forms (RFC 9110 §5.6.7), always as UTC; undefined for anything
 * else, including impossible dates. `Date.parse` is not used: it reads the asctime form as local time and
 * accepts much that is not an HTTP-date.
 */
export function parseHttpDate(value: string): Date | undefined {
  const text = value.trim();
  let match = IMF_FIXDATE.exec(text);
  if (match) return utc(Number(match[3]), match[2], Number(match[1]), match.slice(4));
  match = RFC850_DATE.exec(text);
  if (match) return utc(fullYear(Number(match[3])), match[2], Number(match[1]), match.slice(4));
  match = ASCTIME_DATE.exec(text);
  if (match) return utc(Number(match[6]), match[1], Number(match[2].trim()), match.slice(3, 6));
  return undefined;
}

/** The date, or undefined if its fields do not name a real instant (31 Feb, 25:00). */
function utc(year: number, month: string, day: number, time: string[]): Date | undefined {
  const [hours, minutes, seconds] = time.map(Number);
  const monthIndex = MONTHS.indexOf(month);
  const date = new Date(Date.UTC(year, monthIndex, day, hours, minutes, seconds));
  const exact =
    date.getUTCFullYear() === year && date.getUTCMonth() === monthIndex && date.getUTCDate() === day &&
    date.getUTCHours() === hours && date.getUTCMinutes() === minutes && date.getUTCSeconds() === seconds;
  return exact ? date : undefined;
}

/** A two-digit rfc850 year: the latest year with those digits that is not more than 50 years ahead. */
function fullYear(twoDigits: number, now = new Date()): number {
  const thisYear = now.getUTCFullYear();
  let year = thisYear - (thisYear % 100) + twoDigits;
  if (year > thisYear + 50) year -= 100;
  return year;
}

function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

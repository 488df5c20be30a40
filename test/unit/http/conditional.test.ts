import { DriveError } from '../../../functions/core/errors';
import type { FileNode } from '../../../functions/core/ports';
import {
  type DownloadRequest,
  type Representation,
  httpDate,
  ifRangeHolds,
  noneMatchHits,
  parseHttpDate,
  planDownload,
  representationOf,
  unmodifiedSince,
} from '../../../functions/http/conditional';

const ETAG = '"0b7c5a2e-1111-4222-8333-444455556666"';
const MODIFIED = new Date('2026-03-04T05:06:07.000Z');
const MODIFIED_HTTP = 'Wed, 04 Mar 2026 05:06:07 GMT';
const file: Representation = { etag: ETAG, lastModified: MODIFIED, size: 1000 };
const get = (headers: Omit<DownloadRequest, 'method'> = {}): DownloadRequest => ({ method: 'GET', ...headers });

describe('Function: representationOf', () => {
  it('makes a strong ETag of the id and a Last-Modified of createdAt, to the second', () => {
    const node: FileNode = {
      kind: 'file', id: 'abc-123', path: '/a.txt', size: 5, contentType: 'text/plain', createdAt: '2026-03-04T05:06:07.890Z', objectKey: 'd/abc-123', etag: 'abc-123',
    };

    const representation = representationOf(node);

    expect(representation).toEqual({ etag: '"abc-123"', lastModified: new Date('2026-03-04T05:06:07.000Z'), size: 5 });
    expect(httpDate(representation.lastModified)).toBe('Wed, 04 Mar 2026 05:06:07 GMT');
  });
});

describe('Function: parseHttpDate (RFC 9110 §5.6.7)', () => {
  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['rfc850-date', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['asctime-date (read as UTC)', 'Sun Nov  6 08:49:37 1994'],
    ['IMF-fixdate with surrounding whitespace', ' Sun, 06 Nov 1994 08:49:37 GMT '],
  ])('reads the %s form', (_, value) => {
    expect(parseHttpDate(value)?.toISOString()).toBe('1994-11-06T08:49:37.000Z');
  });

  it('reads a two-digit rfc850 year as the latest such year not more than 50 years ahead', () => {
    const thisYear = new Date().getUTCFullYear();
    const ahead = (thisYear + 10) % 100;
    const behind = (thisYear + 60) % 100;
    const twoDigits = (n: number) => String(n).padStart(2, '0');
    expect(parseHttpDate(`Monday, 01-Jan-${twoDigits(ahead)} 00:00:00 GMT`)?.getUTCFullYear()).toBe(thisYear + 10);
    expect(parseHttpDate(`Monday, 01-Jan-${twoDigits(behind)} 00:00:00 GMT`)?.getUTCFullYear()).toBe(thisYear + 60 - 100);
  });

  it.each([
    ['an ISO date', '1994-11-06T08:49:37Z'],
    ['another zone', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['a lower-case month', 'Sun, 06 nov 1994 08:49:37 GMT'],
    ['a one-digit day in IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT'],
    ['an impossible day', 'Sun, 31 Feb 1994 08:49:37 GMT'],
    ['an impossible hour', 'Sun, 06 Nov 1994 25:49:37 GMT'],
    ['two dates', 'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT'],
    ['a number', '784111777'],
    ['nothing', ''],
  ])('refuses %s', (_, value) => {
    expect(parseHttpDate(value)).toBeUndefined();
  });
});

describe('Function: noneMatchHits (weak comparison, RFC 9110 §13.1.2)', () => {
  it.each([
    ['the tag', ETAG],
    ['the tag marked weak', `W/${ETAG}`],
    ['*', '*'],
    ['* with whitespace', ' * '],
    ['the tag in a list', `"other", ${ETAG}, "third"`],
    ['the tag in a list without spaces', `"other",${ETAG}`],
    ['the tag after empty list elements', `, ,${ETAG}`],
    ['the tag after one holding a comma', `"a,b", ${ETAG}`],
  ])('matches %s', (_, header) => {
    expect(noneMatchHits(header, ETAG)).toBe(true);
  });

  it.each([
    ['another tag', '"other"'],
    ['the tag without quotes', ETAG.slice(1, -1)],
    ['the tag with a lower-case weak prefix', `w/${ETAG}`],
    ['a list of others', '"a", W/"b"'],
    ['a malformed list holding the tag', `${ETAG} "other"`],
    ['garbage around the tag', `x${ETAG}`],
    ['an empty value', ''],
  ])('does not match %s', (_, header) => {
    expect(noneMatchHits(header, ETAG)).toBe(false);
  });
});

describe('Function: unmodifiedSince (RFC 9110 §13.1.3)', () => {
  it('holds when the file is not newer than the date, to the second', () => {
    expect(unmodifiedSince(MODIFIED_HTTP, MODIFIED)).toBe(true);
    expect(unmodifiedSince(MODIFIED_HTTP, new Date('2026-03-04T05:06:07.999Z'))).toBe(true);
    expect(unmodifiedSince('Wed, 04 Mar 2026 05:06:08 GMT', MODIFIED)).toBe(true);
  });

  it('fails when the file is newer, and ignores what is not one HTTP-date', () => {
    expect(unmodifiedSince('Wed, 04 Mar 2026 05:06:06 GMT', MODIFIED)).toBe(false);
    expect(unmodifiedSince('yesterday', MODIFIED)).toBe(false);
    expect(unmodifiedSince(`${MODIFIED_HTTP}, ${MODIFIED_HTTP}`, MODIFIED)).toBe(false);
  });
});

describe('Function: ifRangeHolds (RFC 9110 §13.1.5)', () => {
  it('holds for the strong tag, and for the exact Last-Modified date', () => {
    expect(ifRangeHolds(ETAG, file)).toBe(true);
    expect(ifRangeHolds(MODIFIED_HTTP, file)).toBe(true);
    expect(ifRangeHolds('Wednesday, 04-Mar-26 05:06:07 GMT', file)).toBe(true);
  });

  it.each([
    ['the tag marked weak (strong comparison)', `W/${ETAG}`],
    ['another tag', '"other"'],
    ['a list of tags', `${ETAG}, "other"`],
    ['a later date', 'Wed, 04 Mar 2026 05:06:08 GMT'],
    ['an earlier date', 'Wed, 04 Mar 2026 05:06:06 GMT'],
    ['garbage', 'not a validator'],
  ])('fails for %s', (_, header) => {
    expect(ifRangeHolds(header, file)).toBe(false);
  });
});

describe('Function: planDownload (RFC 9110 §13.2.2)', () => {
  it('serves the whole file to an unconditional request', () => {
    expect(planDownload(get(), file)).toEqual({ status: 200 });
  });

  it('answers 304 when If-None-Match matches, and 200 when it does not', () => {
    expect(planDownload(get({ ifNoneMatch: `W/${ETAG}` }), file)).toEqual({ status: 304 });
    expect(planDownload(get({ ifNoneMatch: '"old"' }), file)).toEqual({ status: 200 });
  });

  it('answers 304 when the file is unmodified since If-Modified-Since, and 200 when it is newer', () => {
    expect(planDownload(get({ ifModifiedSince: MODIFIED_HTTP }), file)).toEqual({ status: 304 });
    expect(planDownload(get({ ifModifiedSince: 'Wed, 04 Mar 2026 05:06:06 GMT' }), file)).toEqual({ status: 200 });
  });

  it('lets If-None-Match decide alone when both are given', () => {
    expect(planDownload(get({ ifNoneMatch: '"old"', ifModifiedSince: MODIFIED_HTTP }), file)).toEqual({ status: 200 });
    expect(planDownload(get({ ifNoneMatch: ETAG, ifModifiedSince: 'Wed, 04 Mar 2026 05:06:06 GMT' }), file)).toEqual({ status: 304 });
  });

  it('answers 304 before looking at Range', () => {
    expect(planDownload(get({ ifNoneMatch: ETAG, range: 'bytes=5000-' }), file)).toEqual({ status: 304 });
  });

  it('serves a range with 206, or the whole file when If-Range does not hold', () => {
    expect(planDownload(get({ range: 'bytes=0-99' }), file)).toEqual({ status: 206, range: { start: 0, end: 99 } });
    expect(planDownload(get({ range: 'bytes=0-99', ifRange: ETAG }), file)).toEqual({ status: 206, range: { start: 0, end: 99 } });
    expect(planDownload(get({ range: 'bytes=0-99', ifRange: MODIFIED_HTTP }), file)).toEqual({ status: 206, range: { start: 0, end: 99 } });
    expect(planDownload(get({ range: 'bytes=0-99', ifRange: '"old"' }), file)).toEqual({ status: 200 });
    expect(planDownload(get({ range: 'bytes=0-99', ifRange: `W/${ETAG}` }), file)).toEqual({ status: 200 });
  });

  it('ignores If-Range without Range, and an invalid or multiple Range', () => {
    expect(planDownload(get({ ifRange: '"old"' }), file)).toEqual({ status: 200 });
    expect(planDownload(get({ range: 'bytes=9-1' }), file)).toEqual({ status: 200 });
    expect(planDownload(get({ range: 'bytes=0-1,5-6' }), file)).toEqual({ status: 200 });
  });

  it('answers a range past the end with 416 range_not_satisfiable, naming the size in Content-Range', () => {
    let thrown: unknown;
    try {
      planDownload(get({ range: 'bytes=1000-' }), file);
    } catch (error) {
      thrown = error;
    }

    expect(thrown).toBeInstanceOf(DriveError);
    const error = thrown as DriveError;
    expect({ code: error.code, status: error.status }).toEqual({ code: 'range_not_satisfiable', status: 416 });
    expect(error.headers).toEqual({ 'Content-Range': 'bytes */1000', 'Accept-Ranges': 'bytes' });
    expect(error.message).toContain('Range');
  });

  it('serves an unsatisfiable range as the whole file when If-Range does not hold', () => {
    expect(planDownload(get({ range: 'bytes=1000-', ifRange: '"old"' }), file)).toEqual({ status: 200 });
  });

  it('ignores Range on HEAD, which describes the whole file, but answers its conditions', () => {
    expect(planDownload({ method: 'HEAD', range: 'bytes=0-9' }, file)).toEqual({ status: 200 });
    expect(planDownload({ method: 'HEAD', range: 'bytes=5000-' }, file)).toEqual({ status: 200 });
    expect(planDownload({ method: 'HEAD', ifNoneMatch: ETAG }, file)).toEqual({ status: 304 });
  });
});

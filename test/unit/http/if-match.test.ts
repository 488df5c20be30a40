import { DriveError } from '../../../functions/core/errors';
import { type Representation, matchHits, planDownload } from '../../../functions/http/conditional';

const TAG = 'abc123';
const ETAG = `"${TAG}"`;
const file: Representation = { etag: ETAG, lastModified: new Date('2026-03-04T05:06:07.000Z'), size: 1000 };

describe('Function: matchHits (If-Match, RFC 9110 13.1.1)', () => {
  it('holds for *, for the ETag alone or in a list, and for the ETag bare, as a listing gives it', () => {
    for (const header of ['*', ' * ', ETAG, `"x", ${ETAG}`, `${ETAG},"y"`, TAG]) expect(matchHits(header, ETAG)).toBe(true);
  });

  it('fails for another tag, a weak tag (strong comparison), an empty tag and what is not a tag', () => {
    for (const header of ['"x"', `W/${ETAG}`, '""', '', 'a b', `${TAG}, x`]) expect(matchHits(header, ETAG)).toBe(false);
  });
});

describe('Function: planDownload with If-Match', () => {
  const plan = (headers: Record<string, string>, method: 'GET' | 'HEAD' = 'GET') => {
    try {
      return planDownload({ method, ...headers }, file);
    } catch (error) {
      const e = error as DriveError;
      return { status: e.status, code: e.code, headers: e.headers, message: e.message };
    }
  };

  it('answers as without it when it holds', () => {
    expect(plan({ ifMatch: ETAG })).toEqual({ status: 200 });
    expect(plan({ ifMatch: '*', range: 'bytes=0-9' })).toEqual({ status: 206, range: { start: 0, end: 9 } });
  });

  it('fails with 412 precondition_failed and the file\'s ETag, for HEAD too', () => {
    for (const method of ['GET', 'HEAD'] as const) {
      expect(plan({ ifMatch: '"old"' }, method)).toEqual({
        status: 412,
        code: 'precondition_failed',
        headers: { ETag: ETAG },
        message: `If-Match "\\"old\\"" names no version this file has: its ETag is ${ETAG}; nothing is sent`,
      });
    }
  });

  it('is weighed before If-None-Match and If-Modified-Since (RFC 9110 13.2.2)', () => {
    expect(plan({ ifMatch: ETAG, ifNoneMatch: ETAG })).toEqual({ status: 304 });
    expect(plan({ ifMatch: '"old"', ifNoneMatch: ETAG })).toMatchObject({ status: 412 });
    expect(plan({ ifMatch: '"old"', ifModifiedSince: 'Wed, 04 Mar 2026 05:06:07 GMT' })).toMatchObject({ status: 412 });
  });
});

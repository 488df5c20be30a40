import { conditionOf, conditionsOf, etagOf, holds } from '../../../functions/core/upload';
import { parseUploadForm } from '../../../functions/http/upload-form';
import { documentChanges } from '../../../functions/openapi/document-changes';

const ETAG = '9e107d9d372bb6826bd81d3542a419d6';

/** The code and message `run` throws. */
function thrown(run: () => unknown): { code?: string; message?: string } {
  try {
    run();
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return { code, message };
  }
  return {};
}

describe('Function: etagOf', () => {
  it('takes an ETag with the quotes of the ETag header or bare, as records and listings keep it', () => {
    expect(etagOf(`"${ETAG}"`, 'if_match')).toBe(ETAG);
    expect(etagOf(ETAG, 'if_match')).toBe(ETAG);
    expect(etagOf(`${ETAG}-12`, 'if_match')).toBe(`${ETAG}-12`);
  });

  it('refuses a weak tag, a quote inside, spaces and what is left empty, as a validation error naming the field', () => {
    for (const value of [`W/"${ETAG}"`, 'a"b', '"a b"', '""', '"', ' x', 'é']) {
      expect(thrown(() => etagOf(value, 'metadata[2].if_match'))).toEqual({
        code: 'validation_error',
        message: `metadata[2].if_match must be a file's ETag, like "${ETAG}" (quotes optional; no weak W/ tag), got ${JSON.stringify(value)}`,
      });
    }
  });
});

describe('Function: conditionsOf', () => {
  it("gives each target's condition, none where it sets none", () => {
    expect(conditionsOf([{ path: '/a' }, { ifMatch: `"${ETAG}"` }, { ifNoneMatch: '*' }])).toEqual([undefined, { ifMatch: ETAG }, { ifNoneMatch: '*' }]);
    expect(conditionsOf(undefined)).toEqual([]);
  });

  it('refuses both on one file as a bad request naming it', () => {
    expect(thrown(() => conditionsOf([{}, { ifMatch: ETAG, ifNoneMatch: '*' }]))).toEqual({
      code: 'bad_request',
      message: 'metadata[1] has both if_match and if_none_match; give one: if_match to replace only that version, if_none_match to store only where no file is',
    });
  });

  it('for a key that may not replace: if_match is forbidden, if_none_match adds nothing to what it asks already', () => {
    expect(thrown(() => conditionsOf([{ ifMatch: ETAG }], false))).toEqual({ code: 'forbidden', message: 'metadata[0].if_match asks to replace a file, and this key may not replace files' });
    expect(conditionsOf([{ ifNoneMatch: '*' }], false)).toEqual([undefined]);
  });
});

describe('Function: conditionOf, for a body\'s own fields (a large upload\'s start)', () => {
  it('reads one condition as conditionsOf reads a target\'s, and names the body\'s fields in its errors', () => {
    expect(conditionOf({ ifMatch: `"${ETAG}"` }, true)).toEqual({ ifMatch: ETAG });
    expect(conditionOf({ ifNoneMatch: '*' }, undefined)).toEqual({ ifNoneMatch: '*' });
    expect(conditionOf({}, true)).toBeUndefined();
    expect(thrown(() => conditionOf({ ifMatch: ETAG, ifNoneMatch: '*' }, true))).toEqual({
      code: 'bad_request',
      message: 'the body has both if_match and if_none_match; give one: if_match to replace only that version, if_none_match to store only where no file is',
    });
    expect(thrown(() => conditionOf({ ifMatch: 'W/"x"' }, true))).toEqual({ code: 'validation_error', message: `if_match must be a file's ETag, like "${ETAG}" (quotes optional; no weak W/ tag), got "W/\\"x\\""` });
    expect(thrown(() => conditionOf({ ifMatch: ETAG }, false))).toEqual({ code: 'forbidden', message: 'if_match asks to replace a file, and this key may not replace files' });
    expect(conditionOf({ ifNoneMatch: '*' }, false)).toBeUndefined();
  });
});

describe('Function: holds', () => {
  const file = { kind: 'file' as const, id: 'other', path: '/a', size: 1, contentType: 'text/plain', createdAt: 'now', objectKey: 'd/other', etag: ETAG };
  it('judges a condition on what stands at the path; the file\'s own record passes, as putFile\'s condition lets it', () => {
    expect(holds({ ifMatch: ETAG }, file, 'mine')).toBe(true);
    expect(holds({ ifMatch: 'stale' }, file, 'mine')).toBe(false);
    expect(holds({ ifMatch: ETAG }, undefined, 'mine')).toBe(false);
    expect(holds({ ifNoneMatch: '*' }, file, 'mine')).toBe(false);
    expect(holds({ ifNoneMatch: '*' }, undefined, 'mine')).toBe(true);
    // A completion tried again after its record was saved (its file id is its session's) finds its own record.
    expect(holds({ ifMatch: 'stale' }, { ...file, id: 'mine', etag: 'new' }, 'mine')).toBe(true);
    expect(holds({ ifNoneMatch: '*' }, { ...file, id: 'mine' }, 'mine')).toBe(true);
    expect(holds(undefined, file, 'mine')).toBe(true);
  });
});

describe('Function: parseUploadForm, conditions', () => {
  const BOUNDARY = 'xyz';
  const body = (json: string) =>
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nA\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${json}\r\n--${BOUNDARY}--\r\n`);
  const parse = (json: string) => parseUploadForm(body(json), `multipart/form-data; boundary=${BOUNDARY}`);
  const failure = (json: string) => parse(json).then(() => ({}), (error: { code: string; message: string }) => ({ code: error.code, message: error.message }));

  it('reads if_match and if_none_match from a target, null as absent', async () => {
    expect((await parse(`[{"path": "/a.txt", "if_match": "\\"${ETAG}\\""}]`)).targets).toEqual([{ path: '/a.txt', ifMatch: `"${ETAG}"` }]);
    expect((await parse('[{"path": "/a.txt", "if_none_match": "*", "if_match": null}]')).targets).toEqual([{ path: '/a.txt', ifNoneMatch: '*' }]);
  });

  it('refuses an empty or too long if_match and an if_none_match other than "*" (422), a number (400)', async () => {
    expect(await failure('[{"if_match": ""}]')).toMatchObject({ code: 'validation_error', message: expect.stringMatching(/^metadata\[0\]\.if_match /) });
    expect(await failure(`[{"if_match": "${'a'.repeat(256)}"}]`)).toMatchObject({ code: 'validation_error', message: expect.stringMatching(/^metadata\[0\]\.if_match /) });
    expect((await parse(`[{"if_match": "${'a'.repeat(255)}"}]`)).targets).toEqual([{ ifMatch: 'a'.repeat(255) }]);
    expect(await failure('[{"if_none_match": "abc"}]')).toEqual({ code: 'validation_error', message: 'metadata[0].if_none_match must be "*" (got "abc")' });
    expect(await failure('[{"if_match": 5}]')).toEqual({ code: 'bad_request', message: 'metadata[0].if_match must be a string' });
  });

  it('still names the destination fields alone in an unknown field\'s message, as it always has', async () => {
    expect(await failure('[{"x": 1}]')).toEqual({ code: 'bad_request', message: 'metadata[0].x is not a known field; use "path", "folder" or "name"' });
  });
});

describe('Function: documentChanges, an enum', () => {
  it('reads values added to an enum that keeps its own, in order, as added; any other change as changed', () => {
    const doc = (values: string[]) => ({ components: { schemas: { ErrorCode: { enum: values } } } });
    expect(documentChanges(doc(['a', 'c']), doc(['a', 'b', 'c']))).toEqual([{ kind: 'added', pointer: '/components/schemas/ErrorCode/enum/b' }]);
    expect(documentChanges(doc(['a', 'c']), doc(['c', 'a', 'b']))).toEqual([{ kind: 'changed', pointer: '/components/schemas/ErrorCode/enum' }]);
    expect(documentChanges(doc(['a', 'b', 'c']), doc(['a', 'c']))).toEqual([{ kind: 'changed', pointer: '/components/schemas/ErrorCode/enum' }]);
    expect(documentChanges({ list: ['a'] }, { list: ['a', 'b'] })).toEqual([{ kind: 'changed', pointer: '/list' }]);
  });
});

import { parseUploadForm } from '../../../functions/http/upload-form';
import { UploadForm } from '../../../functions/openapi/request-schemas';

const BOUNDARY = 'xyz';
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** A part of a form: a file when it has a filename, a text part otherwise. */
const part = (name: string, value: string, filename?: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n\r\n${value}\r\n`;
const form = (...parts: string[]) => Buffer.from(`${parts.join('')}--${BOUNDARY}--\r\n`);
const file = (filename = 'a.txt', data = 'data') => part('files', data, filename);
const metadata = (json: string) => part('metadata', json);

/** The error parsing `body` fails with, as code and message. */
async function failure(body: Buffer, type = TYPE): Promise<{ code: string; message: string }> {
  const error = await parseUploadForm(body, type).then(
    () => new Error('the form was taken'),
    (thrown: unknown) => thrown,
  );
  const { code, message } = error as { code: string; message: string };
  return { code, message };
}

describe('Function: parseUploadForm', () => {
  it('returns the files in order and the metadata\'s targets, a field sent as null taken as absent', async () => {
    // Act
    const parsed = await parseUploadForm(form(file('a.txt', 'A'), file('b.txt', 'B'), metadata('[{"path": "/x/a.txt"}, {"folder": "/y", "name": null}]')), TYPE);
    // Assess
    expect(parsed.parts.map(({ filename, data }) => ({ filename, data: data.toString() }))).toEqual([
      { filename: 'a.txt', data: 'A' },
      { filename: 'b.txt', data: 'B' },
    ]);
    expect(parsed.targets).toEqual([{ path: '/x/a.txt' }, { folder: '/y' }]);
    expect(parsed.targets?.[1].name).toBeUndefined();
    expect((await parseUploadForm(form(file()), TYPE)).targets).toBeUndefined();
  });

  it('words each malformed metadata part as the handler always has, as a bad request', async () => {
    const rejected = (json: string) => failure(form(file(), metadata(json)));
    const bad = (message: string) => ({ code: 'bad_request', message });
    expect(await rejected('[{"path": ')).toEqual(bad('metadata is not valid JSON; send a JSON array with one object per file'));
    expect(await rejected('{"path": "/a.txt"}')).toEqual(bad('metadata must be a JSON array with one object per file'));
    expect(await rejected('[{}, "/a.txt"]')).toEqual(bad('metadata[1] must be an object with optional "path", "folder" and "name"'));
    expect(await rejected('[null]')).toEqual(bad('metadata[0] must be an object with optional "path", "folder" and "name"'));
    expect(await rejected('[[]]')).toEqual(bad('metadata[0] must be an object with optional "path", "folder" and "name"'));
    expect(await rejected('[{"filename": "x", "other": 1}]')).toEqual(bad('metadata[0].filename is not a known field; use "path", "folder" or "name"'));
    expect(await rejected('[{"__proto__": "x"}]')).toEqual(bad('metadata[0].__proto__ is not a known field; use "path", "folder" or "name"'));
    expect(await rejected('[{"path": "/a"}, {"folder": 5}]')).toEqual(bad('metadata[1].folder must be a string'));
    expect(await rejected('[{"name": ["a"]}]')).toEqual(bad('metadata[0].name must be a string'));
  });

  it('names, of an entry\'s several faults, an unknown field first, then the fields in the schema\'s order, as a body\'s', async () => {
    const rejected = (json: string) => failure(form(file(), metadata(json)));
    expect((await rejected('[{"path": 5, "x": 1}]')).message).toBe('metadata[0].x is not a known field; use "path", "folder" or "name"');
    expect((await rejected('[{"name": 5, "path": 6}]')).message).toBe('metadata[0].path must be a string');
  });

  it('names the parts the form takes, as its schema lists them', async () => {
    expect(Object.keys(UploadForm.properties)).toEqual(['files', 'metadata']);
    expect(await failure(form(file(), part('other', 'x')))).toEqual({ code: 'bad_request', message: 'unexpected part "other"; the parts are "files" and "metadata"' });
    expect(await failure(form(part('other', 'x', 'a.txt')))).toEqual({ code: 'bad_request', message: 'unexpected file part "other"; files go in parts named "files"' });
    expect(await failure(form(part('files', 'just text')))).toEqual({ code: 'bad_request', message: 'part "files" must be a file: give it a filename in its Content-Disposition' });
    expect(await failure(form(file(), metadata('[{}]'), metadata('[{}]')))).toEqual({ code: 'bad_request', message: 'metadata is given twice; send one JSON array' });
    const skipped = Buffer.from(`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nno disposition\r\n${file()}--${BOUNDARY}--\r\n`);
    expect(await failure(skipped)).toEqual({ code: 'bad_request', message: 'multipart body has 2 parts but only 1 are form-data parts named "files" or "metadata"' });
  });

  it('counts a part busboy passed over wherever it stands among large files, whose bytes it does not search again', async () => {
    const noDisposition = `--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nno disposition\r\n`;
    // File bytes that hold the delimiter's text, though never at a line's start, so never a delimiter.
    const big = `x--${BOUNDARY}${'y'.repeat(200_000)}\r\nz--${BOUNDARY}`;
    const refused = { code: 'bad_request', message: 'multipart body has 3 parts but only 2 are form-data parts named "files" or "metadata"' };
    expect(await failure(form(file('a.txt', big), noDisposition, file('b.txt', big)))).toEqual(refused);
    expect(await failure(form(file('a.txt', big), file('b.txt', big), noDisposition))).toEqual(refused);
    expect(await failure(form(noDisposition, file('a.txt', big), file('b.txt', '')))).toEqual(refused);
    const parsed = await parseUploadForm(form(file('a.txt', big), file('b.txt', ''), metadata('[{}, {}]')), TYPE);
    expect(parsed.parts.map(({ data }) => data.toString())).toEqual([big, '']);
  });

  it('takes as many files as the schema allows (1,000) and refuses one more as invalid', async () => {
    const files = (count: number) => form(...Array.from({ length: count }, (_, i) => file(`f${i}.txt`, 'x')));
    expect((await parseUploadForm(files(1000), TYPE)).parts).toHaveLength(1000);
    expect(await failure(files(1001))).toEqual({ code: 'validation_error', message: 'files: at most 1000 files per request; send the rest in another' });
  });

  it('refuses a body that is not multipart, or a metadata part too large to be one', async () => {
    expect(await failure(form(file()), 'application/json')).toEqual({ code: 'bad_request', message: 'Content-Type must be multipart/form-data with a boundary (got "application/json")' });
    expect(await failure(form(file(), metadata(`[${'{}, '.repeat(300_000)}{}]`)))).toEqual({ code: 'bad_request', message: 'metadata is larger than 1048576 bytes' });
  });
});

import busboy from 'busboy';
import { METADATA_FIXED_BYTES, REQUEST_FIXED_BYTES, fileCost, partFilename, uploadForm } from '../../src/upload-form';

/** Parses a body as a multipart server would: the files in order (name, type, bytes) and the metadata field. */
async function parse(body: Blob, contentType: string) {
  const files: { filename: string; type: string; bytes: Buffer }[] = [];
  let metadata: string | undefined;
  await new Promise<void>((resolve, reject) => {
    const parser = busboy({ headers: { 'content-type': contentType }, preservePath: true, defParamCharset: 'utf8' });
    parser.on('file', (_field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => files.push({ filename: info.filename ?? '', type: info.mimeType, bytes: Buffer.concat(chunks) }));
    });
    parser.on('field', (name, value) => name === 'metadata' && (metadata = value));
    parser.on('close', resolve);
    parser.on('error', reject);
    body.arrayBuffer().then((buffer) => parser.end(Buffer.from(buffer)), reject);
  });
  return { files, metadata: metadata === undefined ? undefined : (JSON.parse(metadata) as unknown) };
}

const files = [
  { path: '/reports/2024/q1.csv', data: new Blob(['a,b\n1,2\n']), size: 8, contentType: 'text/csv' },
  { path: '/ünïcode/naïve "quoted" name.bin', data: new Blob([new Uint8Array([0, 13, 10, 45, 45, 255])]), size: 6 },
  { path: '/empty', data: new Blob([]), size: 0 },
];

describe('Function: uploadForm', () => {
  it('writes a body whose size is exactly REQUEST_FIXED_BYTES plus each file cost, known before any byte is read', () => {
    // Act
    const { body } = uploadForm(files);

    // Assess
    expect(body.size).toBe(REQUEST_FIXED_BYTES + files.reduce((sum, file) => sum + fileCost(file).bytes, 0));
  });

  it('carries every file in order, byte for byte, with a metadata path for each (so names cannot lose a file)', async () => {
    // Act
    const { body, contentType } = uploadForm(files);
    const parsed = await parse(body, contentType);

    // Assess
    expect(parsed.files.map((file) => file.bytes)).toEqual([Buffer.from('a,b\n1,2\n'), Buffer.from([0, 13, 10, 45, 45, 255]), Buffer.alloc(0)]);
    expect(parsed.files.map((file) => file.type)).toEqual(['text/csv', 'application/octet-stream', 'application/octet-stream']);
    expect(parsed.metadata).toEqual(files.map((file) => ({ path: file.path })));
    expect(parsed.files.map((file) => file.filename)).toEqual(['q1.csv', 'na_ve _quoted_ name.bin', 'empty']);
  });

  it('counts the metadata JSON exactly: the entries, their commas and the brackets', () => {
    const { body } = uploadForm(files);
    const metadata = JSON.stringify(files.map((file) => ({ path: file.path })));
    expect(Buffer.byteLength(metadata)).toBe(METADATA_FIXED_BYTES + files.reduce((sum, file) => sum + fileCost(file).metadataBytes, 0));
    expect(body.size).toBeGreaterThan(Buffer.byteLength(metadata));
  });

  it('draws a new boundary for each request', () => {
    expect(uploadForm(files).contentType).not.toBe(uploadForm(files).contentType);
    expect(uploadForm(files).contentType).toMatch(/^multipart\/form-data; boundary=----drive-[0-9a-f]{32}$/);
  });

  it('refuses a content type with a line break, which would forge a header', () => {
    expect(() => uploadForm([{ ...files[0], contentType: 'text/plain\r\nX-Evil: 1' }])).toThrow(/line break/);
  });
});

describe('Function: partFilename', () => {
  it('is the last path segment with anything but safe ASCII replaced, never empty', () => {
    expect(partFilename('/a/b/report-2024_v1.0 final.pdf')).toBe('report-2024_v1.0 final.pdf');
    expect(partFilename('/a/résumé/\\x"y')).toBe('_x_y');
    expect(partFilename('/a/日本')).toBe('__');
    expect(partFilename('/')).toBe('file');
  });
});

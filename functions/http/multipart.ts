import busboy from 'busboy';
import { badRequest } from '../core/errors';
import type { UploadPart, UploadTarget } from '../core/upload';

/** The parts of an upload request (spec 4.1): the files in order and the parsed `metadata`, if sent. */
export interface UploadForm {
  parts: UploadPart[];
  targets?: UploadTarget[];
}

// A metadata array for thousands of files fits in this; anything larger is not a metadata field.
const MAX_FIELD_BYTES = 1024 * 1024;

/** Parses a `multipart/form-data` upload body; any malformed or unexpected part is a `bad_request`. */
export async function parseUploadForm(body: Buffer, contentType: string | undefined): Promise<UploadForm> {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType.trim())) {
    throw badRequest(`Content-Type must be multipart/form-data with a boundary (got ${contentType ? JSON.stringify(contentType) : 'none'})`);
  }
  const parts: UploadPart[] = [];
  let metadata: string | undefined;

  await new Promise<void>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // preservePath: a filename with "/" must be rejected, not silently cut to its last segment.
      // defParamCharset: clients send UTF-8 filenames raw; busboy would read them as latin1.
      parser = busboy({
        headers: { 'content-type': contentType },
        preservePath: true,
        defParamCharset: 'utf8',
        limits: { fieldSize: MAX_FIELD_BYTES, fieldNameSize: 100 },
      });
    } catch (error) {
      return reject(badRequest(`Content-Type is not a usable multipart/form-data header: ${(error as Error).message}`));
    }
    const fail = (error: Error) => reject(error);
    parser.on('file', (field, stream, info) => {
      if (field !== 'files') {
        stream.resume();
        return fail(badRequest(`unexpected file part "${field}"; files go in parts named "files"`));
      }
      const chunks: Buffer[] = [];
      // A body that ends inside a file part fails the part's stream as well as the parser.
      stream.on('error', (error: Error) => fail(badRequest(`multipart body is malformed: ${error.message}`)));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => parts.push({ filename: info.filename ?? '', contentType: info.mimeType, data: Buffer.concat(chunks) }));
    });
    parser.on('field', (field, value, info) => {
      if (field === 'files') return fail(badRequest('part "files" must be a file: give it a filename in its Content-Disposition'));
      if (field !== 'metadata') return fail(badRequest(`unexpected part "${field}"; the parts are "files" and "metadata"`));
      if (metadata !== undefined) return fail(badRequest('metadata is given twice; send one JSON array'));
      if (info.valueTruncated) return fail(badRequest(`metadata is larger than ${MAX_FIELD_BYTES} bytes`));
      metadata = value;
    });
    parser.on('error', (error: Error) => fail(badRequest(`multipart body is malformed: ${error.message}`)));
    parser.on('close', () => resolve());
    parser.end(body);
  });

  return { parts, targets: metadata === undefined ? undefined : parseTargets(metadata) };
}

function parseTargets(text: string): UploadTarget[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('metadata is not valid JSON; send a JSON array with one object per file');
  }
  if (!Array.isArray(value)) throw badRequest('metadata must be a JSON array with one object per file');
  return value.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw badRequest(`metadata[${i}] must be an object with optional "path", "folder" and "name"`);
    }
    const target: UploadTarget = {};
    for (const [key, field] of Object.entries(entry)) {
      if (key !== 'path' && key !== 'folder' && key !== 'name') {
        throw badRequest(`metadata[${i}].${key} is not a known field; use "path", "folder" or "name"`);
      }
      if (field === null) continue;
      if (typeof field !== 'string') throw badRequest(`metadata[${i}].${key} must be a string`);
      target[key] = field;
    }
    return target;
  });
}

import busboy from 'busboy';
import { guard } from './wiring/guard';
import { jobs } from './wiring/jobs';
import { journal } from './wiring/journal';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { confine, mayReplace } from './core/access';
import { badRequest, invalid } from './core/errors';
import { type UploadPart, type UploadTarget, uploadFiles } from './core/upload';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf, headerOf } from './http/event';
import { fileView } from './http/views';

/** POST /drive/upload: multipart `files` (+ optional `metadata`) → the stored Files. */
export const handler = jsonHandler({ permission: 'upload', guard, stores: { nodes, objects, journal, jobs } }, async (event, { caller, drive, stores }) => {
  const form = await parseUploadForm(bodyOf(event), headerOf(event, 'content-type'));
  const files = await uploadFiles(stores, drive, form.parts, form.targets, (path, i) => confine(caller, path, `files[${i}] destination`), {
    replace: mayReplace(caller),
  });
  const baseUrl = baseUrlOf(event);
  return files.map((file) => fileView(file, baseUrl));
});

/** The parts of an upload request (spec 4.1): the files in order and the parsed `metadata`, if sent. */
interface UploadForm {
  parts: UploadPart[];
  targets?: UploadTarget[];
}

// A metadata array for thousands of files fits in this; anything larger is not a metadata field.
const MAX_FIELD_BYTES = 1024 * 1024;

/** Files one request may carry: enough for any batch, few enough to store well inside API Gateway's 29 s. */
const MAX_FILES_PER_UPLOAD = 1000;

/** Parses a `multipart/form-data` upload body; any malformed or unexpected part is a `bad_request`. */
async function parseUploadForm(body: Buffer, contentType: string | undefined): Promise<UploadForm> {
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
        limits: { fieldSize: MAX_FIELD_BYTES, fieldNameSize: 100, files: MAX_FILES_PER_UPLOAD },
      });
    } catch (error) {
      return reject(badRequest(`Content-Type is not a usable multipart/form-data header: ${(error as Error).message}`));
    }
    const fail = (error: Error) => reject(error);
    parser.on('file', (field, stream, info) => {
      // A body that ends inside a file part fails the part's stream as well as the parser: every part's
      // stream, read or skipped, has its error handled (an unhandled one would end the process).
      stream.on('error', (error: Error) => fail(badRequest(`multipart body is malformed: ${error.message}`)));
      if (field !== 'files') {
        stream.resume();
        return fail(badRequest(`unexpected file part "${field}"; files go in parts named "files"`));
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // busboy hands a part over as views of the body; a part in one view is kept as it is, not copied.
      stream.on('end', () => parts.push({ filename: info.filename ?? '', contentType: info.mimeType, data: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
    });
    parser.on('field', (field, value, info) => {
      if (field === 'files') return fail(badRequest('part "files" must be a file: give it a filename in its Content-Disposition'));
      if (field !== 'metadata') return fail(badRequest(`unexpected part "${field}"; the parts are "files" and "metadata"`));
      if (metadata !== undefined) return fail(badRequest('metadata is given twice; send one JSON array'));
      if (info.valueTruncated) return fail(badRequest(`metadata is larger than ${MAX_FIELD_BYTES} bytes`));
      metadata = value;
    });
    parser.on('filesLimit', () => fail(invalid(`files: at most ${MAX_FILES_PER_UPLOAD} files per request; send the rest in another`)));
    parser.on('error', (error: Error) => fail(badRequest(`multipart body is malformed: ${error.message}`)));
    parser.on('close', () => resolve());
    parser.end(body);
  });

  // busboy passes over a part without a form-data Content-Disposition; a file must not vanish that way.
  const sent = countParts(body, contentType);
  const read = parts.length + (metadata === undefined ? 0 : 1);
  if (sent !== read) throw badRequest(`multipart body has ${sent} parts but only ${read} are form-data parts named "files" or "metadata"`);
  return { parts, targets: metadata === undefined ? undefined : parseTargets(metadata) };
}

/** The number of parts in a multipart body: its delimiter lines, less the closing one. */
function countParts(body: Buffer, contentType: string): number {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  const delimiter = Buffer.from(`--${boundary?.[1] ?? boundary?.[2] ?? ''}`);
  let count = 0;
  for (let at = body.indexOf(delimiter); at >= 0; at = body.indexOf(delimiter, at + delimiter.length)) {
    const atLineStart = at === 0 || (body[at - 1] === 0x0a && body[at - 2] === 0x0d);
    const closing = body[at + delimiter.length] === 0x2d && body[at + delimiter.length + 1] === 0x2d;
    if (atLineStart && !closing) count++;
  }
  return count;
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

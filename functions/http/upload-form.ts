import busboy from 'busboy';
import { badRequest, invalid } from '../core/errors';
import type { UploadPart, UploadTarget } from '../core/upload';
import { UploadForm as FormSchema, UploadMetadata, UploadTarget as TargetSchema } from '../openapi/request-schemas';
import { type Messages, formFieldInput } from './request-input';

/** The parts of an upload request (spec 4.1): the files in order and the parsed `metadata`, if sent. */
export interface UploadRequest {
  parts: UploadPart[];
  targets?: UploadTarget[];
}

// The form's parts, as its schema names them (functions/openapi/request-schemas.ts): the files, each a part
// with a filename, and `metadata`, one text part holding JSON.
type Part = keyof typeof FormSchema.properties;
const FILES: Part = 'files';
const METADATA: Part = 'metadata';
const PARTS = Object.keys(FormSchema.properties);

// A metadata array for thousands of files fits in this; anything larger is not a metadata field.
const MAX_FIELD_BYTES = 1024 * 1024;

/** Files one request may carry: enough for any batch, few enough to store well inside API Gateway's 29 s. */
const MAX_FILES_PER_UPLOAD = FormSchema.properties.files.maxItems ?? Infinity;

/** Parses a `multipart/form-data` upload body; any malformed or unexpected part is a `bad_request`. */
export async function parseUploadForm(body: Buffer, contentType: string | undefined): Promise<UploadRequest> {
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
      if (field !== FILES) {
        stream.resume();
        return fail(badRequest(`unexpected file part "${field}"; files go in parts named "${FILES}"`));
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // busboy hands a part over as views of the body; a part in one view is kept as it is, not copied.
      stream.on('end', () => parts.push({ filename: info.filename ?? '', contentType: info.mimeType, data: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
    });
    parser.on('field', (field, value, info) => {
      if (field === FILES) return fail(badRequest(`part "${FILES}" must be a file: give it a filename in its Content-Disposition`));
      if (field !== METADATA) return fail(badRequest(`unexpected part "${field}"; the parts are ${listed(PARTS, 'and')}`));
      if (metadata !== undefined) return fail(badRequest(`${METADATA} is given twice; send one JSON array`));
      if (info.valueTruncated) return fail(badRequest(`${METADATA} is larger than ${MAX_FIELD_BYTES} bytes`));
      metadata = value;
    });
    parser.on('filesLimit', () => fail(invalid(`${FILES}: at most ${MAX_FILES_PER_UPLOAD} files per request; send the rest in another`)));
    parser.on('error', (error: Error) => fail(badRequest(`multipart body is malformed: ${error.message}`)));
    parser.on('close', () => resolve());
    parser.end(body);
  });

  // busboy passes over a part without a form-data Content-Disposition; a file must not vanish that way.
  const sent = countParts(body, contentType, parts.map((part) => rangeIn(body, part.data)));
  const read = parts.length + (metadata === undefined ? 0 : 1);
  if (sent !== read) throw badRequest(`multipart body has ${sent} parts but only ${read} are form-data parts named ${listed(PARTS, 'or')}`);
  return { parts, targets: metadata === undefined ? undefined : targetsOf(metadata) };
}

/** Where `data` lies in `body`, if it is a view of `body`'s own bytes (busboy hands a part in one piece so). */
function rangeIn(body: Buffer, data: Buffer): [number, number] | undefined {
  const start = data.byteOffset - body.byteOffset;
  return data.buffer === body.buffer && start >= 0 && start + data.length <= body.length ? [start, start + data.length] : undefined;
}

/**
 * The number of parts in a multipart body: its delimiter lines, less the closing one. The bytes of the files
 * busboy read (`files`: where each lies in the body, when it is a view of it) are not searched again: a
 * delimiter line inside one would have ended it there (busboy splits at every CRLF and delimiter), so none is in
 * them, and an upload's megabytes are scanned once, not twice.
 */
function countParts(body: Buffer, contentType: string, files: readonly ([number, number] | undefined)[] = []): number {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  const delimiter = Buffer.from(`--${boundary?.[1] ?? boundary?.[2] ?? ''}`);
  const skipped = files.filter((range) => range !== undefined).sort((a, b) => a[0] - b[0]);
  let count = 0;
  let from = 0;
  for (const [start, end] of [...skipped, [body.length, body.length] as [number, number]]) {
    // The stretch before a file's bytes, searched as far as a delimiter starting in it could reach: one that starts
    // there is counted there, once, and the search never runs on through the file.
    const stretch = body.subarray(0, Math.min(start + delimiter.length - 1, body.length));
    for (let at = stretch.indexOf(delimiter, from); at >= 0 && at < start; at = stretch.indexOf(delimiter, at + delimiter.length)) {
      const atLineStart = at === 0 || (body[at - 1] === 0x0a && body[at - 2] === 0x0d);
      const closing = body[at + delimiter.length] === 0x2d && body[at + delimiter.length + 1] === 0x2d;
      if (atLineStart && !closing) count++;
    }
    from = Math.max(from, end);
  }
  return count;
}

// The words the metadata part has always had for the shapes its schema refuses; its fields' types have the
// generic ones (`metadata[0].path must be a string`).
// The fields named are the destination's, as they always were (the conditions, `if_match` and
// `if_none_match`, are in the schema and the docs).
const TARGET_FIELDS = ['path', 'folder', 'name'] satisfies (keyof typeof TargetSchema.properties)[];
const METADATA_MESSAGES: Messages = {
  [METADATA]: { type: () => `${METADATA} must be a JSON array with one object per file` },
  [`${METADATA}[]`]: {
    type: ({ at }) => `${at} must be an object with optional ${listed(TARGET_FIELDS, 'and')}`,
    unknown: ({ at, unknown = [] }) => `${at}.${unknown[0]} is not a known field; use ${listed(TARGET_FIELDS, 'or')}`,
  },
};

/** The `metadata` part's targets, checked against its schema; a field sent as null is absent. */
function targetsOf(text: string): UploadTarget[] {
  const entries = formFieldInput(METADATA, text, UploadMetadata, `${METADATA} is not valid JSON; send a JSON array with one object per file`, METADATA_MESSAGES);
  return entries.map((entry) => ({
    path: entry.path ?? undefined,
    folder: entry.folder ?? undefined,
    name: entry.name ?? undefined,
    ...(entry.if_match != null ? { ifMatch: entry.if_match } : {}),
    ...(entry.if_none_match != null ? { ifNoneMatch: entry.if_none_match } : {}),
  }));
}

/** `names` quoted and joined as a sentence lists them: `"a", "b" and "c"`. */
function listed(names: readonly string[], conjunction: 'and' | 'or'): string {
  const quoted = names.map((name) => `"${name}"`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} ${conjunction} ${quoted.at(-1)}`;
}

import { randomBytes } from 'node:crypto';

/**
 * The `multipart/form-data` body of one `POST /drive/upload`, written by hand rather than with `FormData`
 * so that its exact size is known before any file is read: batches are packed up to the request size
 * limit, and the part headers count. Files are Blobs (file-backed from `fs.openAsBlob` for local files),
 * so a body streams from disk with a known `Content-Length` and is never held in memory.
 */

/** One file of a request: where it goes, its bytes, its media type, and on what condition (`if_match`, `if_none_match`). */
export interface FormFile {
  path: string;
  size: number;
  data: Blob;
  contentType?: string;
  ifMatch?: string;
  ifNoneMatch?: '*';
}

type Target = Pick<FormFile, 'path' | 'ifMatch' | 'ifNoneMatch'>;

/** Every boundary has this length, so sizes can be computed before a boundary is drawn. */
const BOUNDARY_LENGTH = '----drive-'.length + 32;
const CRLF = '\r\n';
const DEFAULT_TYPE = 'application/octet-stream';

const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The part's filename: the server stores each file at its `metadata` path and takes the type from that
 * path, so the filename only has to be a safe, non-empty token (no quotes, slashes or line breaks).
 */
export function partFilename(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1).replace(/[^A-Za-z0-9._ -]/g, '_');
  return name === '' ? 'file' : name;
}

function partHeader(boundary: string, file: Pick<FormFile, 'path' | 'contentType'>): string {
  const type = file.contentType ?? DEFAULT_TYPE;
  if (/[\r\n]/.test(type)) throw new Error(`contentType of ${file.path} has a line break`);
  return `--${boundary}${CRLF}Content-Disposition: form-data; name="files"; filename="${partFilename(file.path)}"${CRLF}Content-Type: ${type}${CRLF}${CRLF}`;
}

function metadataHeader(boundary: string): string {
  return `--${boundary}${CRLF}Content-Disposition: form-data; name="metadata"${CRLF}${CRLF}`;
}

function closing(boundary: string): string {
  return `--${boundary}--${CRLF}`;
}

/** The `metadata` entry of one file: its destination, by `path` (the rule that wins, spec 4.1), and its condition if any. */
function metadataEntry(file: Target): string {
  return JSON.stringify({
    path: file.path,
    ...(file.ifMatch === undefined ? {} : { if_match: file.ifMatch }),
    ...(file.ifNoneMatch === undefined ? {} : { if_none_match: file.ifNoneMatch }),
  });
}

const SIZING_BOUNDARY = '-'.repeat(BOUNDARY_LENGTH);

/** What one file adds to a request: body bytes (its part, and its metadata entry with a comma), and metadata bytes. */
export function fileCost(file: Pick<FormFile, 'path' | 'size' | 'contentType' | 'ifMatch' | 'ifNoneMatch'>): { bytes: number; metadataBytes: number } {
  const metadataBytes = utf8Length(metadataEntry(file)) + 1;
  return { bytes: utf8Length(partHeader(SIZING_BOUNDARY, file)) + file.size + CRLF.length + metadataBytes, metadataBytes };
}

/** What every request has whatever its files: the metadata part's header, `[`, `]` less one comma, and the closing line. */
export const REQUEST_FIXED_BYTES = utf8Length(metadataHeader(SIZING_BOUNDARY)) + 2 - 1 + CRLF.length + utf8Length(closing(SIZING_BOUNDARY));

/** The metadata JSON of a request is `[`, `]` and each entry with a comma, less one. */
export const METADATA_FIXED_BYTES = 2 - 1;

/** The body and its Content-Type for files that all go in one request; its size is `REQUEST_FIXED_BYTES` plus each `fileCost`. */
export function uploadForm(files: readonly FormFile[]): { body: Blob; contentType: string } {
  const boundary = `----drive-${randomBytes(16).toString('hex')}`;
  const parts: (string | Blob)[] = [];
  for (const file of files) parts.push(partHeader(boundary, file), file.data, CRLF);
  parts.push(metadataHeader(boundary), `[${files.map(metadataEntry).join(',')}]`, CRLF, closing(boundary));
  return { body: new Blob(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { ByteSelection } from '../core/download';
import { nameOf } from '../core/paths';
import type { FileNode, ReadUrlHeaders } from '../core/ports';
import type { Wire } from '../openapi/schemas';
import { type DownloadPlan, type DownloadRequest, httpDate, representationOf } from './conditional';
import { attachment, inline } from './content-disposition';
import { headerOf } from './event';
import { contentRange } from './ranges';
import { type Headers, JSON_TYPE } from './respond';

/** Any cache must ask again each time; the ETag makes that a 304 without the bytes. */
const PLAIN_CACHE_CONTROL = 'private, no-cache';

/** The method and the headers of `event` that make a download conditional or partial. */
export function downloadRequestOf(event: APIGatewayProxyEvent): DownloadRequest {
  return {
    method: event.httpMethod === 'HEAD' ? 'HEAD' : 'GET',
    range: headerOf(event, 'range'),
    ifRange: headerOf(event, 'if-range'),
    ifNoneMatch: headerOf(event, 'if-none-match'),
    ifModifiedSince: headerOf(event, 'if-modified-since'),
  };
}

/** What to read from S3: nothing for HEAD or 304 (the record has every header), else the planned bytes. */
export function bytesToRead(method: DownloadRequest['method'], plan: DownloadPlan): ByteSelection {
  if (method === 'HEAD' || plan.status === 304) return 'none';
  return plan.status === 206 ? plan.range : 'all';
}

/**
 * The headers of a download: the validators on every answer, the file's own on 200 and 206. The file is an
 * `attachment` unless `inline` is asked for (share links, for types a browser shows without running them).
 */
export function downloadHeaders(file: FileNode, plan: DownloadPlan, options: { inline?: boolean } = {}): Headers {
  const { etag, lastModified } = representationOf(file);
  const common: Headers = {
    ETag: etag,
    'Last-Modified': httpDate(lastModified),
    'Cache-Control': PLAIN_CACHE_CONTROL,
    'Accept-Ranges': 'bytes',
    'X-Content-Type-Options': 'nosniff',
    // Bytes of any user, served from the API's origin: if a browser renders them anyway (HTML, SVG),
    // nothing in them may run or load.
    'Content-Security-Policy': "default-src 'none'; sandbox",
  };
  if (plan.status === 304) return common;
  const fileHeaders: Headers = {
    ...common,
    'Content-Type': file.contentType,
    'Content-Disposition': (options.inline ? inline : attachment)(nameOf(file.path)),
  };
  if (plan.status === 200) return { ...fileHeaders, 'Content-Length': String(file.size) };
  return {
    ...fileHeaders,
    'Content-Length': String(plan.range.end - plan.range.start + 1),
    'Content-Range': contentRange(plan.range, file.size),
  };
}

/** What the bytes' own answer carries when a client reads them straight from the object store: the plain download's headers. */
export function readUrlHeaders(file: FileNode): ReadUrlHeaders {
  return { contentType: file.contentType, contentDisposition: attachment(nameOf(file.path)), cacheControl: PLAIN_CACHE_CONTROL };
}

/**
 * The `307` of `redirect=true`: `Location` is `url`, a presigned GET of the file's bytes; the body (none for
 * HEAD) says what it reads and until when, so a client can check what it gets. Never cached: the URL is a
 * bearer credential until it expires.
 */
export function directDownloadAnswer(file: FileNode, url: string, expiresAt: Date, method: DownloadRequest['method']): { statusCode: 307; headers: Headers; body?: string } {
  const data: Wire<'DirectDownload'> = {
    url,
    expires_at: expiresAt.toISOString(),
    path: file.path,
    size: file.size,
    etag: file.etag,
    content_type: file.contentType,
  };
  const headers: Headers = { Location: url, 'Cache-Control': 'no-store', 'Content-Type': JSON_TYPE };
  return { statusCode: 307, headers, ...(method === 'HEAD' ? {} : { body: JSON.stringify({ data }) }) };
}

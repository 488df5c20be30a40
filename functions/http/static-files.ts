import type { APIGatewayProxyResult } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { notFound } from '../core/errors';
import { type Headers, errorResponse } from './respond';

/** The media types a static site may hold; a file of any other type is not served (a tsconfig, a README). */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** One file of a static site, held in memory. */
export interface StaticFile {
  body: string;
  contentType: string;
  /** A strong validator: the SHA-256 of the body, quoted. */
  etag: string;
}

/**
 * Reads every file of `dir` with a known media type (not its subfolders) into memory, by name. The names
 * read here are the only ones served, so no request can reach another file, whatever its path says.
 */
export function loadStaticFiles(dir: string): ReadonlyMap<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const contentType = MEDIA_TYPES[extname(entry.name)];
    if (!entry.isFile() || !contentType) continue;
    const body = readFileSync(join(dir, entry.name), 'utf8');
    files.set(entry.name, { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  if (!files.has('index.html')) throw new Error(`${dir} has no index.html`);
  return files;
}

/**
 * The response for `file` (a JSON 404 when it is not one of the site's files): `304` when the client
 * already holds this version, and always `headers`. `no-cache` makes browsers ask each time, so a new
 * deploy shows at once, and the ETag keeps that asking cheap.
 */
export function staticFileResponse(file: StaticFile | undefined, name: string, ifNoneMatch: string | undefined, headers: Headers): APIGatewayProxyResult {
  if (!file) return errorResponse(notFound(`no dashboard file named ${JSON.stringify(name.slice(0, 100))}`), headers);
  const validators = { ETag: file.etag, 'Cache-Control': 'no-cache' };
  if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag)) {
    return { statusCode: 304, headers: { ...headers, ...validators }, body: '' };
  }
  return { statusCode: 200, headers: { ...headers, ...validators, 'Content-Type': file.contentType }, body: file.body };
}

import type { APIGatewayProxyResult } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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

/** One file of a static site. */
export interface StaticFile {
  body: string;
  contentType: string;
  /** A strong validator: the SHA-256 of the body, quoted. */
  etag: string;
}

// One plain name: no slash, no leading dot, so no request reaches outside the folder or a hidden file.
const SITE_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Checks at cold start that `dir` holds a site (an index.html), and returns it. */
export function staticSiteDir(dir: string): string {
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`${dir} has no index.html`);
  return dir;
}

/**
 * The file `name` of the site in `dir`, or undefined unless it is a plain name with a known media type that
 * is there. Read on each request (from the page cache, a fraction of a millisecond), so an edited file shows
 * on the next reload without a restart.
 */
export async function readStaticFile(dir: string, name: string): Promise<StaticFile | undefined> {
  const contentType = MEDIA_TYPES[extname(name)];
  if (!contentType || !SITE_FILE.test(name)) return undefined;
  let body: string;
  try {
    body = await readFile(join(dir, name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EISDIR') return undefined;
    throw error;
  }
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * The response for `file` (a JSON 404 when it is not one of the site's files): `304` when the client
 * already holds this version, and always `headers`. `no-cache` makes browsers ask each time, so a new
 * deploy shows at once, and the ETag keeps that asking cheap.
 */
export function staticFileResponse(file: StaticFile | undefined, name: string, ifNoneMatch: string | undefined, headers: Headers, requestId?: string): APIGatewayProxyResult {
  if (!file) return errorResponse(notFound(`no dashboard file named ${JSON.stringify(name.slice(0, 100))}`), headers, requestId);
  const validators = { ETag: file.etag, 'Cache-Control': 'no-cache' };
  if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag)) {
    return { statusCode: 304, headers: { ...headers, ...validators }, body: '' };
  }
  return { statusCode: 200, headers: { ...headers, ...validators, 'Content-Type': file.contentType }, body: file.body };
}

import { Readable } from 'node:stream';
import { guard } from './wiring/guard';
import { nodes } from './wiring/nodes';
import { confine } from './core/access';
import { invalid } from './core/errors';
import { listFolder, listPage } from './core/list-folder';
import { ROOT, parentOf, parsePath } from './core/paths';
import type { FileNode, FolderNode } from './core/ports';
import { streamingHandler } from './http/api-handler';
import { type Messages, type Problem, queryInput } from './http/request-input';
import { fileEntryView, folderEntryView } from './http/views';
import { ListQuery } from './openapi/request-schemas';

/**
 * GET /drive/list?folder=&recursive= → the folder's files and folders. `include=etag` (an extension) adds
 * each file's content hash, so a client can tell which of its files are already stored; `limit` and
 * `cursor` (an extension) page the listing, adding `next_cursor` to the answer. The answer streams (as
 * downloads do), read from the table as it is sent, so a listing of any size answers whole, past a buffered
 * Lambda's 6 MB, in bounded memory.
 */
export const handler = awslambda.streamifyResponse(streamingHandler({ permission: 'list', guard, stores: { nodes } }, async (event, { caller, drive, stores }) => {
  const query = queryInput(event, ListQuery, MESSAGES);
  const folder = parsePath(query.folder ?? ROOT, 'folder', { allowTrailingSlash: true, existing: true });
  confine(caller, folder, 'folder');
  const etag = query.include === 'etag';
  const recursive = query.recursive === 'true';
  const paging = pagingOf(query.limit, query.cursor, folder, recursive);
  const fileView = (file: FileNode) => fileEntryView(file, { etag });
  if (paging) {
    const page = await listPage(stores.nodes, drive, folder, { recursive, ...paging });
    const next_cursor = page.after === undefined ? null : encodeCursor(folder, page.after, recursive);
    return { statusCode: 200, headers: JSON_TYPE, body: Readable.from(listingJson(page.folder, [page.files], [page.folders], fileView, { next_cursor })) };
  }
  // The spec's whole listing, read as it is sent: a page of the table at a time, at any size.
  const listing = await listFolder(stores.nodes, drive, folder, recursive);
  return { statusCode: 200, headers: JSON_TYPE, body: Readable.from(listingJson(listing.folder, listing.files, listing.folders, fileView, {})) };
}));

const JSON_TYPE = { 'Content-Type': 'application/json; charset=utf-8' };

/** Entries written at once: the answer streams in pieces of this many, never as one string of the whole. */
const ENTRIES_PER_CHUNK = 500;

/** The spec's `{"data": {folder, files, folders}}` (with `extra` in `data`), as a stream of JSON text; the entries come in runs. */
async function* listingJson(
  folder: string,
  files: Iterable<FileNode[]> | AsyncIterable<FileNode[]>,
  folders: Iterable<FolderNode[]> | AsyncIterable<FolderNode[]>,
  fileView: (file: FileNode) => unknown,
  extra: Record<string, unknown>,
): AsyncGenerator<string> {
  yield `{"data":{"folder":${JSON.stringify(folder)},"files":[`;
  yield* entriesJson(files, fileView);
  yield '],"folders":[';
  yield* entriesJson(folders, folderEntryView);
  const more = Object.entries(extra).map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`).join('');
  yield `]${more}}}`;
}

async function* entriesJson<T>(runs: Iterable<T[]> | AsyncIterable<T[]>, view: (entry: T) => unknown): AsyncGenerator<string> {
  let chunk: unknown[] = [];
  let first = true;
  // One JSON.stringify of a chunk's views, its brackets cut off, is the views' own JSON joined by commas, byte
  // for byte (a view is an object, never undefined), in two thirds of the time of one call per entry.
  const text = () => JSON.stringify(chunk).slice(1, -1);
  for await (const run of runs) {
    for (const entry of run) {
      chunk.push(view(entry));
      if (chunk.length === ENTRIES_PER_CHUNK) {
        yield (first ? '' : ',') + text();
        first = false;
        chunk = [];
      }
    }
  }
  if (chunk.length > 0) yield (first ? '' : ',') + text();
}

/** Most entries one page may hold: the schema's most for `limit`. */
const MAX_PAGE = ListQuery.properties.limit.maximum ?? 1000;

// Worded as they always were: `include`'s value cut shorter, `limit`'s bound without a thousands separator.
const LIMIT = ({ value }: Problem) => `limit must be a whole number from 1 to ${MAX_PAGE} (got ${JSON.stringify((value as string).slice(0, 20))})`;
const MESSAGES: Messages = {
  include: { value: ({ value }) => `include must be "etag" (got ${JSON.stringify((value as string).slice(0, 40))})` },
  limit: { type: LIMIT, value: LIMIT },
};

/**
 * Paging (an extension of the spec) when `limit` or `cursor` is given: `limit` 1 to 1,000 (default 1,000),
 * and `cursor` the `next_cursor` of the page before, for the same folder.
 */
function pagingOf(limit: number | undefined, cursor: string | undefined, folder: string, recursive: boolean): { limit: number; after?: string } | undefined {
  if (limit === undefined && cursor === undefined) return undefined;
  return { limit: limit ?? MAX_PAGE, ...(cursor === undefined ? {} : { after: decodeCursor(cursor, folder, recursive) }) };
}

/** An opaque cursor: the listing's folder, the last name (or, recursive, path) its page held, and which kind it is. */
function encodeCursor(folder: string, after: string, recursive: boolean): string {
  return Buffer.from(JSON.stringify([folder, after, recursive ? 1 : 0])).toString('base64url');
}

function decodeCursor(cursor: string, folder: string, recursive: boolean): string {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 3 || typeof value[0] !== 'string' || typeof value[1] !== 'string' || value[1] === '') {
    throw invalid('cursor is not one this API gave; pass the next_cursor of the page before, as it was');
  }
  if (value[0] !== folder) throw invalid('cursor belongs to the listing of another folder; page each folder with its own cursors');
  if (value[2] !== (recursive ? 1 : 0)) throw invalid(`cursor belongs to a ${recursive ? 'folder' : 'recursive'} listing; keep recursive as it was for every page`);
  // A cursor names the path of an entry below the folder (a child of it, unless recursive), checked as any path is.
  const below = value[1].startsWith(folder === ROOT ? '/' : `${folder}/`) && parsePath(value[1], 'cursor', { existing: true }) === value[1];
  if (!below || (!recursive && parentOf(value[1]) !== folder)) {
    throw invalid('cursor is not one this API gave; pass the next_cursor of the page before, as it was');
  }
  return value[1];
}

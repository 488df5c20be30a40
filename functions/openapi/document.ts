import { ROLES } from '../core/access';
import { ERROR_REASONS, ERROR_STATUS } from '../core/errors';
import { ERROR_CODES, type Schema, codeOfStatus, envelope, integer, nullable, object, ref, string, timestamp } from './schema-kit';

/**
 * The one source of Drive's API contract: an OpenAPI 3.1 document of every route (lib/routes.ts; a unit test
 * holds the two to each other), served at GET /openapi.json and written to docs/openapi.json by
 * `npm run openapi`. Every answer the integration tests receive is checked against it (lib/local/contract.ts).
 */

const PATH = string('A canonical absolute path: "/" then names joined by "/", no trailing slash.', { examples: ['/reports/q3.pdf'] });
const ID = string('An opaque identifier (a UUID).', { format: 'uuid' });

/** A job of `type`: the fields every job has (GET /drive/jobs/{job_id}), then its own. */
function jobSchema(type: string, own: Record<string, Schema>, optional: readonly string[] = []): Schema {
  return object(
    {
      id: ID,
      type: { const: type },
      status: ref('JobStatus'),
      created_at: timestamp('When it was accepted.'),
      updated_at: timestamp('When it last advanced.'),
      url: string('Where GET /drive/jobs/{job_id} reads it.', { format: 'uri' }),
      path: PATH,
      ...own,
    },
    optional,
  );
}

const SCHEMAS: Record<string, Schema> = {
  ErrorCode: { type: 'string', enum: ERROR_CODES, description: 'The error codes of the API and, in ERROR_STATUS order, the status each is sent with.' },
  ErrorReason: { type: 'string', enum: [...ERROR_REASONS], description: 'What a client may act on beyond the code: `upload_busy` (409) is a large upload being completed or aborted by another request; wait and retry.' },
  Error: object(
    {
      error: object(
        {
          code: ref('ErrorCode'),
          message: string('What went wrong and what to do, in English; for people, not for matching.'),
          request_id: string('The id of the request (also in `X-Request-Id`), for the logs.'),
          reason: ref('ErrorReason'),
        },
        ['request_id', 'reason'],
      ),
    },
    [],
    'Every failure: `{"error": {"code", "message"}}`.',
  ),
  File: object(
    {
      id: ID,
      name: string('The last segment of `path`.'),
      path: PATH,
      url: string('Where GET /drive/download reads it.', { format: 'uri' }),
      size: integer('Bytes.', { minimum: 0 }),
      created_at: timestamp('When this version was stored.'),
    },
    [],
    'A stored file, as upload, the end of a large upload and a file copy return it.',
  ),
  FileEntry: object(
    {
      id: ID,
      name: string(),
      path: PATH,
      size: integer('Bytes.', { minimum: 0 }),
      created_at: timestamp('When this version was stored.'),
      etag: string('The content hash (with include=etag), as the download ETag has it.'),
    },
    ['etag'],
    'A file in a listing, or a moved or copied file: a File without `url`.',
  ),
  FolderEntry: object({ id: ID, name: string('The last segment of `path` ("" for the root).'), path: PATH }, [], 'A folder in a listing, or a moved or copied folder.'),
  Folder: object({ id: ID, path: PATH, created_at: timestamp('When it was created.') }, [], 'A folder as POST /drive/folders returns it.'),
  Listing: object(
    {
      folder: PATH,
      files: { type: 'array', items: ref('FileEntry') },
      folders: { type: 'array', items: ref('FolderEntry') },
      next_cursor: nullable(string('Pass as `cursor` for the next page; null after the last.')),
    },
    ['next_cursor'],
    'A folder\'s files and folders; `next_cursor` only when the listing is paged (limit or cursor given).',
  ),
  DeletedFolder: object({ deleted: { const: true }, path: PATH, files_deleted: integer('Files deleted with it.', { minimum: 0 }) }),
  DeletedFiles: object({
    deleted: { type: 'array', items: PATH, description: 'The paths whose file is gone, in the order asked.' },
    not_found: { type: 'array', items: PATH, description: 'The paths that held no file, in the order asked.' },
  }),
  JobStatus: { type: 'string', enum: ['running', 'done'] },
  JobFailure: object({ code: ref('ErrorCode'), message: string() }, [], 'Why a move or copy that is done stopped short.'),
  DeleteJob: jobSchema('delete-folder', {
    files_deleted: integer('Files deleted so far.', { minimum: 0 }),
    result: nullable(ref('DeletedFolder')),
  }),
  MoveJob: jobSchema(
    'move-folder',
    { to: PATH, files_moved: integer('Files moved so far.', { minimum: 0 }), result: nullable(ref('FolderEntry')), error: ref('JobFailure') },
    ['error'],
  ),
  CopyJob: jobSchema(
    'copy-folder',
    { to: PATH, files_copied: integer('Files copied so far.', { minimum: 0 }), result: nullable(ref('FolderEntry')), error: ref('JobFailure') },
    ['error'],
  ),
  Job: { oneOf: [ref('DeleteJob'), ref('MoveJob'), ref('CopyJob')], discriminator: { propertyName: 'type', mapping: { 'delete-folder': '#/components/schemas/DeleteJob', 'move-folder': '#/components/schemas/MoveJob', 'copy-folder': '#/components/schemas/CopyJob' } } },
  JobAnswer: object({ job: ref('Job') }),
  Role: { type: 'string', enum: [...ROLES] },
  Whoami: object({ role: ref('Role'), prefix: PATH, drive: string('The drive the key belongs to.'), key_id: string('The key\'s id (never its secret).') }),
  PartUrl: object({ number: integer('The part number, from 1.', { minimum: 1 }), url: string('A presigned S3 URL to PUT the part\'s bytes to.', { format: 'uri' }) }),
  UploadSession: object({
    upload_id: ID,
    path: PATH,
    size: integer('Bytes.', { minimum: 1 }),
    part_size: integer('Bytes in each part but the last.', { minimum: 1 }),
    part_count: integer('Parts in all.', { minimum: 1 }),
    parts: { type: 'array', items: ref('PartUrl') },
    next_part: nullable(integer('The first part whose URL is not in `parts`; null once every part\'s is given.', { minimum: 1 })),
    expires_at: timestamp('When the session and its URLs end.'),
  }),
  PartUrlPage: object({
    upload_id: ID,
    part_size: integer(undefined, { minimum: 1 }),
    part_count: integer(undefined, { minimum: 1 }),
    parts: { type: 'array', items: ref('PartUrl') },
    next_part: nullable(integer(undefined, { minimum: 1 })),
    expires_at: timestamp('When the session and its URLs end.'),
  }),
  AbortedUpload: object({ upload_id: ID, aborted: { const: true } }),
  ApiKey: object({
    id: string('The key\'s id.', { pattern: '^[0-9a-f]{16}$' }),
    name: string(),
    role: ref('Role'),
    prefix: PATH,
    created_at: timestamp('When it was made.'),
    last_used_at: nullable(timestamp('About when it was last used (to the minute).')),
    last4: string('The last four characters of its secret.'),
    revoked_at: nullable(timestamp('When it was revoked.')),
  }),
  KeyList: object({ keys: { type: 'array', items: ref('ApiKey') } }),
  CreatedKey: object({ key: ref('ApiKey'), secret: string('The key\'s secret: shown this once, stored only as a hash.') }),
  RevokedKey: object({ key: ref('ApiKey') }),
  CreatedLink: object({
    id: string('The link\'s id: the SHA-256 of its token.', { pattern: '^[0-9a-f]{64}$' }),
    url: string('Opens the file with no key; its token is shown this once.', { format: 'uri' }),
    path: PATH,
    expires_at: timestamp('When it stops opening.'),
  }),
  Link: object({
    id: string(undefined, { pattern: '^[0-9a-f]{64}$' }),
    path: PATH,
    created_at: timestamp('When it was made.'),
    expires_at: timestamp('When it stops opening.'),
    created_by: nullable(string('The id of the key that made it.')),
  }),
  LinkList: object({ links: { type: 'array', items: ref('Link') }, next_cursor: nullable(string('Pass as `cursor` for the next page; null after the last.')) }),
  RevokedLink: object({ id: string(undefined, { pattern: '^[0-9a-f]{64}$' }), revoked: { const: true } }),
  RevokedLinks: object({
    created_by: string('The key whose links were revoked.', { pattern: '^[0-9a-f]{16}$' }),
    revoked: { type: 'integer', minimum: 0, description: 'Links this page revoked.' },
    next_cursor: nullable(string('Pass as `cursor` to revoke the next page; null after the last.')),
  }),
  // Requests.
  UploadForm: {
    type: 'object',
    required: ['files'],
    additionalProperties: false,
    properties: {
      files: { type: 'array', description: 'The files, each a part named "files" with its filename (1 to 1,000).', items: { type: 'string', contentMediaType: 'application/octet-stream' } },
      metadata: string('A JSON array with one object per file, in order: `{"path"}` or `{"folder", "name"}` or `{"name"}`, each optional.'),
    },
  },
  CreateFolderRequest: { type: 'object', required: ['path'], properties: { path: string('The folder to create, with its parents if missing.') } },
  DeleteFilesRequest: object({ paths: { type: 'array', items: string(), minItems: 1, maxItems: 1000 } }),
  TransferRequest: object({ from: string('The file or folder.'), to: string('Its new path.'), overwrite: { type: 'boolean', description: 'Replace a file at `to` (never a folder). Default false.' } }, ['overwrite']),
  StartUploadRequest: object(
    {
      path: string('Where to store the file; or give `folder` and `name`, or `name` alone for the root.'),
      folder: string(),
      name: string(),
      size: integer('The file\'s length in bytes.', { minimum: 1 }),
      content_type: string('Its media type, like "application/zip".', { maxLength: 255 }),
    },
    ['path', 'folder', 'name', 'content_type'],
  ),
  CompleteUploadRequest: object({
    parts: { type: 'array', minItems: 1, maxItems: 10000, items: object({ number: integer(undefined, { minimum: 1 }), etag: string('The ETag header the part\'s PUT returned.', { minLength: 1, maxLength: 1024 }) }) },
  }),
  CreateKeyRequest: object({ name: string('A label, 1 to 100 characters.', { minLength: 1, maxLength: 100 }), role: ref('Role'), prefix: string('The folder the key is confined to (default "/").') }, ['role', 'prefix']),
  CreateLinkRequest: object({ path: string('The file to share.'), expires_in: integer('Seconds until it stops opening (default a day, at most 30 days).', { minimum: 1, maximum: 2_592_000 }) }, ['expires_in']),
};

const header = (description: string, schema: Schema = { type: 'string' }, required = false) => ({ description, required, schema });

const HEADERS: Record<string, unknown> = {
  RequestId: header('The id of this request, as the logs name it.'),
  RateLimitLimit: header('Requests a minute this key may make to this endpoint.', { type: 'integer' }),
  RateLimitRemaining: header('Requests left in the bucket.', { type: 'integer' }),
  RateLimitReset: header('Seconds until the bucket is full again.', { type: 'integer' }),
  RetryAfter: header('Seconds to wait before retrying.', { type: 'integer' }, true),
  Location: header('Where to read the job.', { type: 'string', format: 'uri' }, true),
  ETag: header('The strong validator of the bytes.', { type: 'string' }, true),
  LastModified: header('When the bytes were stored.'),
  CacheControl: header('How caches may keep the answer.'),
  ContentRange: header('`bytes first-last/size` of a partial answer; `bytes */size` with a 416.', { type: 'string' }, true),
  ContentDisposition: header('`attachment` (or `inline`) with the file\'s name.'),
};

/** Headers every answer of a keyed API operation may carry. */
const apiHeaders = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
const limitHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
};

/** What API Gateway (and the local host, which plays it) may answer for any route: body too large, throttled, the integration failed or ran late. */
const GATEWAY_STATUSES = [413, 429, 500, 502, 504];
/** What the key check adds on every keyed route. */
const KEY_STATUSES = [401, 403];

const ERROR_TEXT: Record<number, string> = {
  400: 'The request is malformed: a missing or mistyped field, a body that is not what the route takes.',
  401: 'No API key, a malformed `Authorization` header, or a key no live record holds.',
  403: 'The key\'s role or folder does not allow the call.',
  404: 'Nothing at that path or id (or one this key may not see).',
  409: 'The request conflicts with what is stored (a path taken, a folder not empty, work in progress).',
  413: 'The body (or a file\'s declared size) is larger than accepted.',
  416: 'The byte range starts past the end of the file.',
  422: 'A field is well-formed but its value is not allowed.',
  429: 'A rate limit (the key\'s per endpoint, or the gateway\'s) is exceeded, or (a folder delete, move or copy) the drive already has its most jobs in the background; `Retry-After` says when to try again.',
  500: 'An error of Drive\'s own; the request may be retried.',
  502: 'The gateway\'s: the function failed or gave no usable answer.',
  504: 'The gateway\'s: the function did not answer in time.',
};

/** Response components: one per error status, each saying which code it carries. */
function errorResponses(): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const status of [...new Set([...Object.values(ERROR_STATUS), 502, 504])].sort((a, b) => a - b)) {
    const code = codeOfStatus(status);
    const schema: Schema = { allOf: [ref('Error'), { properties: { error: { properties: { code: { const: code } } } } }] };
    responses[`Error${status}`] = {
      description: `${ERROR_TEXT[status]} Code \`${code}\`.`,
      headers: { ...(status === 429 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}), ...apiHeaders },
      content: { 'application/json': { schema } },
    };
  }
  return responses;
}

const json = (schema: Schema) => ({ 'application/json': { schema } });
const ok = (description: string, data: Schema, headers: Record<string, unknown> = {}) => ({ description, headers: { ...apiHeaders, ...limitHeaders, ...headers }, content: json(envelope(data)) });
const jobAccepted = (what: string) => ({
  description: `${what} is too big for one request: it goes on as a job; \`Location\` and \`job.url\` read it.`,
  headers: { Location: { $ref: '#/components/headers/Location' }, ...apiHeaders, ...limitHeaders },
  content: json(envelope(ref('JobAnswer'))),
});

interface OperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** False for the routes that take no key. */
  keyed?: boolean;
  parameters?: unknown[];
  requestBody?: unknown;
  /** Success answers by status. */
  answers: Record<number, unknown>;
  /** Error statuses of the operation's own, beyond the gateway's (and the key check's, when keyed). */
  errors: number[];
}

const query = (name: string, description: string, schema: Schema = { type: 'string' }, extra: Record<string, unknown> = {}) => ({ name, in: 'query', required: false, description, schema, ...extra });
const pathParam = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });
const requestHeader = (name: string, description: string) => ({ name, in: 'header', required: false, description, schema: { type: 'string' } });
const jsonBody = (schema: Schema, required = true) => ({ required, content: json(schema) });

const DOWNLOAD_HEADERS = [
  requestHeader('Range', 'One byte range, `bytes=first-last`, `bytes=first-` or `bytes=-suffix`; several ranges are answered whole.'),
  requestHeader('If-Range', 'An ETag or date: the range is honoured only if the file is still that version.'),
  requestHeader('If-None-Match', 'ETags the client holds: a match is a 304 without the bytes.'),
  requestHeader('If-Modified-Since', 'A date: no change since is a 304 (ignored with If-None-Match).'),
];

const bytes = { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } };
const validatorHeaders = {
  ETag: { $ref: '#/components/headers/ETag' },
  'Last-Modified': { $ref: '#/components/headers/LastModified' },
  'Cache-Control': { $ref: '#/components/headers/CacheControl' },
};

/** The answers of a download (GET or HEAD, of a file or through a share link). */
function downloadAnswers(head: boolean, limited: boolean): Record<number, unknown> {
  const common = { ...validatorHeaders, ...apiHeaders, ...(limited ? limitHeaders : {}) };
  const file = { ...common, 'Content-Disposition': { $ref: '#/components/headers/ContentDisposition' } };
  return {
    200: { description: head ? 'The file\'s headers, without its bytes.' : 'The file\'s bytes, with its own Content-Type.', headers: file, ...(head ? {} : { content: bytes }) },
    ...(head ? {} : { 206: { description: 'The range asked for.', headers: { ...file, 'Content-Range': { $ref: '#/components/headers/ContentRange' } }, content: bytes } }),
    304: { description: 'The client\'s copy is current (If-None-Match or If-Modified-Since).', headers: common },
  };
}

const FOLDER_QUERY = query('folder', 'The folder (default "/").');

/** Every operation, by `METHOD path` as lib/routes.ts names its routes. */
export const OPERATIONS: Record<string, OperationSpec> = {
  'POST /drive/upload': {
    operationId: 'uploadFiles',
    summary: 'Upload files',
    description: 'Multipart `files` (and optional `metadata` saying where each goes) → the stored Files, in order. At most 4.5 MB a request; larger files go through POST /drive/uploads.',
    tags: ['files'],
    requestBody: { required: true, content: { 'multipart/form-data': { schema: ref('UploadForm'), encoding: { files: { contentType: '*/*' }, metadata: { contentType: 'application/json' } } } } },
    answers: { 200: ok('The stored files.', { type: 'array', items: ref('File') }) },
    errors: [400, 404, 409, 422],
  },
  'GET /drive/download': {
    operationId: 'downloadFile',
    summary: 'Download a file',
    description: 'By `path`, or `folder` with `name`. Ranges and conditional requests as RFC 9110 has them.',
    tags: ['files'],
    parameters: [query('path', 'The file.'), FOLDER_QUERY, query('name', 'The file\'s name in `folder`.'), ...DOWNLOAD_HEADERS],
    answers: downloadAnswers(false, true),
    errors: [400, 404, 416, 422],
  },
  'HEAD /drive/download': {
    operationId: 'headFile',
    summary: 'A file\'s headers',
    description: 'What GET answers, without the bytes (and without a body on errors).',
    tags: ['files'],
    parameters: [query('path', 'The file.'), FOLDER_QUERY, query('name', 'The file\'s name in `folder`.'), ...DOWNLOAD_HEADERS],
    answers: downloadAnswers(true, true),
    errors: [400, 404, 416, 422],
  },
  'GET /drive/list': {
    operationId: 'listFolder',
    summary: 'List a folder',
    tags: ['folders'],
    parameters: [
      FOLDER_QUERY,
      query('recursive', 'Everything below the folder, not only its children.', { type: 'string', enum: ['true', 'false'] }),
      query('include', 'Add each file\'s `etag`.', { type: 'string', enum: ['etag'] }),
      query('limit', 'Entries a page (1 to 1,000): pages the listing.', { type: 'integer', minimum: 1, maximum: 1000 }),
      query('cursor', 'The `next_cursor` of the page before.'),
    ],
    answers: { 200: ok('The folder\'s files and folders.', ref('Listing')) },
    errors: [400, 404, 422],
  },
  'POST /drive/folders': {
    operationId: 'createFolder',
    summary: 'Create a folder (and its parents)',
    tags: ['folders'],
    requestBody: jsonBody(ref('CreateFolderRequest')),
    answers: { 200: ok('The folder, made or already there.', ref('Folder')) },
    errors: [400, 409, 422],
  },
  'DELETE /drive/folders': {
    operationId: 'deleteFolder',
    summary: 'Delete a folder',
    tags: ['folders'],
    parameters: [query('path', 'The folder.', { type: 'string' }, { required: true }), query('recursive', 'Delete what it holds too.', { type: 'string', enum: ['true', 'false'] })],
    answers: { 200: ok('What was deleted.', ref('DeletedFolder')), 202: jobAccepted('The delete') },
    errors: [400, 404, 409, 422],
  },
  'DELETE /drive/files': {
    operationId: 'deleteFiles',
    summary: 'Delete files',
    description: 'Up to 1,000 paths, as repeated `path` query parameters or a JSON body `{"paths"}` (not both). A folder at any of them is a 409 and deletes nothing.',
    tags: ['files'],
    parameters: [query('path', 'A file to delete (repeat for more).', { type: 'array', items: { type: 'string' } }, { explode: true, style: 'form' })],
    requestBody: jsonBody(ref('DeleteFilesRequest'), false),
    answers: { 200: ok('Which paths were deleted and which held no file.', ref('DeletedFiles')) },
    errors: [400, 409, 422],
  },
  'POST /drive/move': {
    operationId: 'move',
    summary: 'Move or rename a file or folder',
    tags: ['files', 'folders'],
    requestBody: jsonBody(ref('TransferRequest')),
    answers: { 200: ok('The entry at its new path.', { oneOf: [ref('FileEntry'), ref('FolderEntry')] }), 202: jobAccepted('The folder move') },
    errors: [400, 404, 409, 422],
  },
  'POST /drive/copy': {
    operationId: 'copy',
    summary: 'Copy a file or folder',
    tags: ['files', 'folders'],
    requestBody: jsonBody(ref('TransferRequest')),
    answers: { 200: ok('The copy\'s entry.', { oneOf: [ref('FileEntry'), ref('FolderEntry')] }), 202: jobAccepted('The folder copy') },
    errors: [400, 404, 409, 413, 422],
  },
  'GET /drive/jobs/{job_id}': {
    operationId: 'getJob',
    summary: 'Read a job',
    description: 'A job whose folder (for a move or copy, either end) lies outside the key\'s folder does not exist for it (404, as an unknown id).',
    tags: ['jobs'],
    parameters: [pathParam('job_id', 'The job\'s id.')],
    answers: { 200: ok('Where the job stands; its `result` once done.', ref('JobAnswer')) },
    errors: [404],
  },
  'GET /drive/whoami': {
    operationId: 'whoami',
    summary: 'What the calling key may do',
    tags: ['keys'],
    answers: { 200: ok('The key\'s role, folder, drive and id.', ref('Whoami')) },
    errors: [],
  },
  'POST /drive/uploads': {
    operationId: 'startUpload',
    summary: 'Start a large upload',
    description: 'A multipart upload straight to S3: PUT each part to its URL, then complete.',
    tags: ['large uploads'],
    requestBody: jsonBody(ref('StartUploadRequest')),
    answers: { 200: ok('The session and the URLs of its first parts.', ref('UploadSession')) },
    errors: [400, 409, 413, 422],
  },
  'GET /drive/uploads/{upload_id}/parts': {
    operationId: 'uploadParts',
    summary: 'More part URLs',
    description: 'A session answers only the key that started it and the drive\'s admin keys; to any other key it does not exist (404).',
    tags: ['large uploads'],
    parameters: [pathParam('upload_id', 'The session.'), query('from', 'The first part (default 1).', { type: 'integer', minimum: 1 }), query('limit', 'URLs a page (1 to 1,000; default 50). A page takes one token of the upload bucket per 50 asked for.', { type: 'integer', minimum: 1, maximum: 1000 })],
    answers: { 200: ok('URLs for parts `from` on.', ref('PartUrlPage')) },
    errors: [404, 422],
  },
  'POST /drive/uploads/{upload_id}/complete': {
    operationId: 'completeUpload',
    summary: 'Complete a large upload',
    description: 'A 409 with `reason: upload_busy` is another request completing or aborting the same session: wait and retry. Another key\'s session (unless the caller is an admin) is 404, as one never issued.',
    tags: ['large uploads'],
    parameters: [pathParam('upload_id', 'The session.')],
    requestBody: jsonBody(ref('CompleteUploadRequest')),
    answers: { 200: ok('The stored file, now listed.', ref('File')) },
    errors: [400, 404, 409, 422],
  },
  'DELETE /drive/uploads/{upload_id}': {
    operationId: 'abortUpload',
    summary: 'Abort a large upload',
    description: 'Only the key that started the session, or an admin key of its drive; to any other key it does not exist (404).',
    tags: ['large uploads'],
    parameters: [pathParam('upload_id', 'The session.')],
    answers: { 200: ok('The session ended; its parts are deleted.', ref('AbortedUpload')) },
    errors: [404, 409],
  },
  'GET /drive/keys': {
    operationId: 'listKeys',
    summary: 'List the drive\'s API keys (admin)',
    tags: ['keys'],
    answers: { 200: ok('Every key, revoked ones too, oldest first.', ref('KeyList')) },
    errors: [],
  },
  'POST /drive/keys': {
    operationId: 'createKey',
    summary: 'Create an API key (admin)',
    tags: ['keys'],
    requestBody: jsonBody(ref('CreateKeyRequest')),
    answers: { 200: ok('The key and its secret, shown this once.', ref('CreatedKey')) },
    errors: [400, 422],
  },
  'DELETE /drive/keys/{key_id}': {
    operationId: 'revokeKey',
    summary: 'Revoke an API key (admin)',
    tags: ['keys'],
    parameters: [pathParam('key_id', 'The key\'s id.')],
    answers: { 200: ok('The key, revoked.', ref('RevokedKey')) },
    errors: [404, 409],
  },
  'POST /drive/links': {
    operationId: 'createLink',
    summary: 'Share a file by link',
    tags: ['links'],
    requestBody: jsonBody(ref('CreateLinkRequest')),
    answers: { 200: ok('The link; its `url` opens the file with no key.', ref('CreatedLink')) },
    errors: [400, 404, 409, 422],
  },
  'GET /drive/links': {
    operationId: 'listLinks',
    summary: 'List live share links',
    tags: ['links'],
    parameters: [
      query('path', 'Only the links of this file.'),
      query('created_by', 'Only the links the key with this id made (a page may then hold fewer than `limit`).', { type: 'string', pattern: '^[0-9a-f]{16}$' }),
      query('limit', 'Links a page (1 to 100).', { type: 'integer', minimum: 1, maximum: 100 }),
      query('cursor', 'The `next_cursor` of the page before.'),
    ],
    answers: { 200: ok('A page of links, in path order.', ref('LinkList')) },
    errors: [400, 422],
  },
  'DELETE /drive/links': {
    operationId: 'revokeLinksBy',
    summary: 'Revoke the share links a key made',
    description: 'One page of the links the key `created_by` made that the caller may reach (as GET /drive/links lists them), revoked; call again with `next_cursor` until it is null.',
    tags: ['links'],
    parameters: [
      query('created_by', 'The id of the key whose links to revoke (required).', { type: 'string', pattern: '^[0-9a-f]{16}$' }),
      query('limit', 'Links read a page (1 to 100).', { type: 'integer', minimum: 1, maximum: 100 }),
      query('cursor', 'The `next_cursor` of the page before.'),
    ],
    answers: { 200: ok('How many links the page revoked, and where the next starts.', ref('RevokedLinks')) },
    errors: [400, 422],
  },
  'DELETE /drive/links/{link_id}': {
    operationId: 'revokeLink',
    summary: 'Revoke a share link',
    tags: ['links'],
    parameters: [pathParam('link_id', 'The link\'s id.')],
    answers: { 200: ok('The link, revoked.', ref('RevokedLink')) },
    errors: [404],
  },
  'GET /s/{token}': {
    operationId: 'openLink',
    summary: 'Open a share link (no key)',
    description: 'The linked file, as GET /drive/download answers it; a 404 once the link is revoked or expired, its file is gone, or the key that made it is revoked or no longer reaches the file. `download=0` shows safe types in the tab.',
    tags: ['links'],
    keyed: false,
    parameters: [pathParam('token', 'The link\'s token.'), query('download', '"0" to show the file in the browser, "1" (default) to save it.', { type: 'string', enum: ['0', '1'] }), ...DOWNLOAD_HEADERS],
    answers: downloadAnswers(false, true),
    errors: [404, 416, 422],
  },
  'HEAD /s/{token}': {
    operationId: 'headLink',
    summary: 'A share link\'s headers (no key)',
    tags: ['links'],
    keyed: false,
    parameters: [pathParam('token', 'The link\'s token.'), query('download', '"0" or "1".', { type: 'string', enum: ['0', '1'] }), ...DOWNLOAD_HEADERS],
    answers: downloadAnswers(true, true),
    errors: [404, 416, 422],
  },
  'GET /': {
    operationId: 'dashboard',
    summary: 'The web dashboard (no key)',
    tags: ['dashboard'],
    keyed: false,
    parameters: [requestHeader('If-None-Match', 'The ETag of the copy the browser holds.')],
    answers: {
      200: { description: 'The page.', headers: validatorHeaders, content: { 'text/html': { schema: { type: 'string' } } } },
      304: { description: 'The browser\'s copy is current.', headers: validatorHeaders },
      308: { description: 'The stage\'s URL without its slash: the page\'s relative URLs need it.', headers: { Location: { description: 'The same URL with a trailing slash.', required: true, schema: { type: 'string' } } } },
    },
    errors: [],
  },
  'GET /{file}': {
    operationId: 'dashboardFile',
    summary: 'A file of the web dashboard (no key)',
    tags: ['dashboard'],
    keyed: false,
    parameters: [pathParam('file', 'A plain file name, like app.js.'), requestHeader('If-None-Match', 'The ETag of the copy the browser holds.')],
    answers: {
      200: {
        description: 'The file.',
        headers: validatorHeaders,
        content: { 'text/html': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } }, 'text/javascript': { schema: { type: 'string' } }, 'image/svg+xml': { schema: { type: 'string' } } },
      },
      304: { description: 'The browser\'s copy is current.', headers: validatorHeaders },
    },
    errors: [404],
  },
  'GET /openapi.json': {
    operationId: 'openApiDocument',
    summary: 'This document (no key)',
    description: 'Its `servers` name the API that served it.',
    tags: ['contract'],
    keyed: false,
    parameters: [requestHeader('If-None-Match', 'The ETag of the copy the client holds.')],
    answers: {
      200: { description: 'The OpenAPI 3.1 document.', headers: { ...validatorHeaders, ...apiHeaders }, content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } } },
      304: { description: 'The client\'s copy is current.', headers: { ...validatorHeaders, ...apiHeaders } },
    },
    errors: [],
  },
};

const errorRef = (status: number) => ({ $ref: `#/components/responses/Error${status}` });

function operationObject(spec: OperationSpec): Record<string, unknown> {
  const keyed = spec.keyed !== false;
  const statuses = [...new Set([...spec.errors, ...(keyed ? KEY_STATUSES : []), ...GATEWAY_STATUSES])].sort();
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(spec.answers)) responses[status] = answer;
  for (const status of statuses) responses[String(status)] = errorRef(status);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: spec.tags,
    security: keyed ? [{ apiKey: [] }] : [],
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
  };
}

/** The document's version: the API's, which changes only by additions (spec section 9). */
export const API_VERSION = '1.0.0';

/** The OpenAPI document, with `servers` as given (the local host by default). */
export function openApiDocument(servers: { url: string; description?: string }[] = [{ url: 'http://127.0.0.1:3000', description: 'npm start' }]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, spec] of Object.entries(OPERATIONS)) {
    const [method, path] = key.split(' ');
    paths[path] = { ...paths[path], [method.toLowerCase()]: operationObject(spec) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Drive',
      version: API_VERSION,
      description:
        'A file store: upload, download, list, and organise files and folders, with large uploads straight to S3, share links and API keys with roles. ' +
        'Every answer of the API is JSON in a `data` envelope, or `{"error": {"code", "message"}}` with the status its code has. ' +
        'A path or method no route has is a 404 `not_found`, from the gateway. See docs/api-contract.md in the repository.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers,
    tags: ['files', 'folders', 'jobs', 'large uploads', 'keys', 'links', 'dashboard', 'contract'].map((name) => ({ name })),
    paths,
    components: {
      schemas: SCHEMAS,
      responses: errorResponses(),
      headers: HEADERS,
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API key>`.' } },
    },
  };
}

/** The document as docs/openapi.json holds it: two-space JSON and a final newline. */
export function openApiDocumentText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

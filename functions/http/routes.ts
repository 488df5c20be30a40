import { type Permission, ROLES, ROLE_PERMISSIONS, type Role } from '../core/access';
import {
  type Answer,
  DOWNLOAD_HEADERS,
  type Parameter,
  apiHeaders,
  directDownloadAnswer,
  downloadAnswers,
  jobAccepted,
  jsonBody,
  ok,
  pathParam,
  queryParameters,
  requestHeader,
  validatorHeaders,
} from '../openapi/operation-parts';
import { type Static, array, oneOf, plainSchema, ref } from '../openapi/schema-kit';
import * as R from '../openapi/request-schemas';
import * as S from '../openapi/schemas';

/** The functions behind the routes, one per handler module (`functions/<name>.ts`); a handler may serve more than one route. */
export type RouteHandler =
  | 'upload'
  | 'download'
  | 'list'
  | 'create-folder'
  | 'delete-folder'
  | 'delete-files'
  | 'move'
  | 'copy'
  | 'get-job'
  | 'trash-list'
  | 'trash-restore'
  | 'trash-purge'
  | 'trash-empty'
  | 'whoami'
  | 'start-upload'
  | 'upload-parts'
  | 'complete-upload'
  | 'abort-upload'
  | 'list-keys'
  | 'create-key'
  | 'revoke-key'
  | 'create-trust'
  | 'list-trust'
  | 'revoke-trust'
  | 'exchange-token'
  | 'create-link'
  | 'list-links'
  | 'revoke-link'
  | 'open-link'
  | 'create-webhook'
  | 'list-webhooks'
  | 'delete-webhook'
  | 'list-deliveries'
  | 'dashboard'
  | 'openapi'
  | 'changes';

/**
 * One route of the HTTP API, whole: where it is and what serves it (read by the CDK stack and the local host
 * through lib/routes.ts), who may call it, and what it takes and answers (the OpenAPI document's operation).
 */
export interface RouteSpec {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  path: string;
  handler: RouteHandler;
  /** Streamed through `awslambda.streamifyResponse` rather than returned whole. */
  streaming: boolean;
  /** The path holds a secret (a share link's token): logs name the route, never the path called. */
  secretPath?: boolean;
  /** The rate-limit bucket of a route that takes an API key; absent for the routes that take none. */
  permission?: Permission;
  /**
   * A mutating route that honours `Idempotency-Key` (issue 26): its handler's endpoint is given the idempotency
   * store (functions/http/api-handler.ts), which test/unit/http/idempotent-routes.test.ts holds to this mark.
   */
  idempotent?: true;
  /** The roles whose keys may call it (each role's `ROLE_PERMISSIONS` hold `permission`); none for a route that takes no key. */
  roles: readonly Role[];
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: Parameter[];
  requestBody?: unknown;
  /** Success answers by status, each JSON one with an example. */
  answers: Record<number, Answer>;
  /** Error statuses of the route's own, beyond the gateway's (and the key check's, when keyed). */
  errors: number[];
}

type Spec = Omit<RouteSpec, 'roles'>;

/** A route with its roles, from its permission. */
function route(spec: Spec): RouteSpec {
  const permission = spec.permission;
  return { ...spec, roles: permission === undefined ? [] : ROLES.filter((role) => ROLE_PERMISSIONS[role].includes(permission)) };
}

// Examples: one small drive, seen from an admin key's requests to https://api.example.com/v1.
const BASE = 'https://api.example.com/v1';
const AT = '2026-03-02T09:30:00.000Z';
const LATER = '2026-03-02T09:30:04.000Z';
const FILE: Static<typeof S.File> = {
  id: '6f1c2a4e-8b3d-4c5e-9f70-1a2b3c4d5e6f',
  name: 'q3.pdf',
  path: '/reports/q3.pdf',
  url: `${BASE}/drive/download?path=/reports/q3.pdf`,
  size: 48213,
  created_at: AT,
};
const { url: _fileUrl, ...FILE_ENTRY } = FILE;
const FOLDER_ENTRY: Static<typeof S.FolderEntry> = { id: '0b7d9e2f-4a6c-4d8e-a1b3-c5d7e9f1a3b5', name: 'reports', path: '/reports' };
const JOB_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const TRASH_ID = '0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b';
const UPLOAD_ID = '2c4e6a8b-0d1f-4e3a-9b5c-7d9e1f3a5b7c';
const KEY_ID = '3f9a1c7e5b2d8046';
const LINK_ID = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const API_KEY: Static<typeof S.ApiKey> = {
  id: KEY_ID,
  name: 'nightly job',
  role: 'upload-only',
  prefix: '/',
  created_at: AT,
  last_used_at: null,
  last4: 'x7Qe',
  revoked_at: null,
};
const TRUST_ID = '5c1e9a7d3b2f4068';
const TRUST: Static<typeof S.TrustRule> = {
  id: TRUST_ID,
  issuer: 'https://token.actions.githubusercontent.com',
  audience: 'https://api.example.com/v1',
  subject: 'repo:acme/etl:ref:refs/heads/main',
  claims: { repository_owner: 'acme' },
  role: 'upload-only',
  prefix: '/ingest',
  max_ttl_seconds: 3600,
  created_at: AT,
  revoked_at: null,
};
const PARTS = [
  { number: 1, url: 'https://drive-bucket.s3.amazonaws.com/u/2c4e6a8b?partNumber=1&uploadId=abc&X-Amz-Signature=5d2e8f' },
  { number: 2, url: 'https://drive-bucket.s3.amazonaws.com/u/2c4e6a8b?partNumber=2&uploadId=abc&X-Amz-Signature=5d2e8f' },
];
const LINK: Static<typeof S.Link> = { id: LINK_ID, path: '/reports/q3.pdf', created_at: AT, expires_at: '2026-03-09T09:30:00.000Z', created_by: KEY_ID };

const WEBHOOK_ID = '7d3f5b1a9c2e4680';
const WEBHOOK: Static<typeof S.Webhook> = { id: WEBHOOK_ID, url: 'https://hooks.example.com/drive', path: '/reports', types: ['file.created', 'file.replaced'], created_at: AT };
const CHANGE: Static<typeof S.Change> = { id: '1042', type: 'file.created', path: '/reports/q3.pdf', at: AT, file: { ...FILE_ENTRY, etag: 'a3f5c7e9b1d3f5a7c9e1b3d5f7a9c1e3' } };

const DIRECT: Static<typeof S.DirectDownload> = {
  url: 'https://drive-bucket.s3.us-east-1.amazonaws.com/default/6f1c2a4e-8b3d-4c5e-9f70-1a2b3c4d5e6f?response-content-disposition=attachment%3B%20filename%3D%22q3.pdf%22&X-Amz-Expires=300&X-Amz-Signature=5d2e8f',
  expires_at: '2026-03-02T09:35:00.000Z',
  path: '/reports/q3.pdf',
  size: 48213,
  etag: '9e107d9d372bb6826bd81d3542a419d6',
  content_type: 'application/pdf',
};
const IF_NONE_MATCH = 'The ETag of the copy the browser holds.';
/** The API download's If-Match (a share link's download ignores it). */
const IF_MATCH = requestHeader(
  'If-Match',
  'ETags (or `*`): the file is answered only if it has one of them (strong comparison; a bare ETag without quotes is taken as one), else `412 precondition_failed` with its `ETag`, before If-None-Match (RFC 9110 §13.2.2); with `redirect`, before any URL is signed.',
);
/** How the upload form's parts are sent: files of any type; `metadata` as its schema says (JSON). */
const UPLOAD_ENCODING = {
  files: { contentType: '*/*' },
  metadata: { contentType: R.UploadForm.properties.metadata.contentMediaType },
} satisfies Record<keyof typeof R.UploadForm.properties, { contentType?: string }>;

/** Every route, in the order the OpenAPI document lists them. */
export const ROUTE_SPECS: readonly RouteSpec[] = [
  route({
    method: 'POST',
    path: '/drive/upload',
    idempotent: true,
    handler: 'upload',
    permission: 'upload',
    streaming: false,
    operationId: 'uploadFiles',
    summary: 'Upload files',
    description: 'Multipart `files` (and optional `metadata` saying where each goes) → the stored Files, in order. At most 4.5 MB a request; larger files go through POST /drive/uploads.',
    tags: ['files'],
    requestBody: { required: true, content: { 'multipart/form-data': { schema: plainSchema(ref(S.UploadForm)), encoding: UPLOAD_ENCODING } } },
    answers: { 200: ok('The stored files.', array(ref(S.File)), [FILE]) },
    errors: [400, 404, 409, 412, 422],
  }),
  route({
    method: 'GET',
    path: '/drive/download',
    handler: 'download',
    permission: 'download',
    streaming: true,
    operationId: 'downloadFile',
    summary: 'Download a file',
    description: 'By `path`, or `folder` with `name`. Ranges and conditional requests as RFC 9110 has them.',
    tags: ['files'],
    parameters: [...queryParameters(R.DownloadQuery), IF_MATCH, ...DOWNLOAD_HEADERS],
    answers: { ...downloadAnswers(false, true), 307: directDownloadAnswer(false, DIRECT) },
    errors: [400, 404, 412, 416, 422],
  }),
  // The same function answers HEAD from the record alone; streamed like GET, so the response has one shape.
  route({
    method: 'HEAD',
    path: '/drive/download',
    handler: 'download',
    permission: 'download',
    streaming: true,
    operationId: 'headFile',
    summary: 'A file\'s headers',
    description: 'What GET answers, without the bytes (and without a body on errors).',
    tags: ['files'],
    parameters: [...queryParameters(R.DownloadQuery), IF_MATCH, ...DOWNLOAD_HEADERS],
    answers: { ...downloadAnswers(true, true), 307: directDownloadAnswer(true, DIRECT) },
    errors: [400, 404, 412, 416, 422],
  }),
  // Streamed, so that a listing of any size answers whole: a buffered answer stops at Lambda's 6 MB.
  route({
    method: 'GET',
    path: '/drive/list',
    handler: 'list',
    permission: 'list',
    streaming: true,
    operationId: 'listFolder',
    summary: 'List a folder',
    description:
      'The folder\'s files and folders; with `recursive=true`, everything below it. Without `limit` or `cursor` the whole listing comes in one answer (streamed, of any size); with either, a page at a time.',
    tags: ['folders'],
    parameters: queryParameters(R.ListQuery),
    answers: { 200: ok('The folder\'s files and folders.', ref(S.Listing), { folder: '/reports', files: [FILE_ENTRY], folders: [{ id: '5d7f9b1d-3e5a-4c7e-8f1b-3d5f7a9c1e3a', name: '2025', path: '/reports/2025' }] }) },
    errors: [400, 404, 422],
  }),
  route({
    method: 'POST',
    path: '/drive/folders',
    idempotent: true,
    handler: 'create-folder',
    permission: 'create-folder',
    streaming: false,
    operationId: 'createFolder',
    summary: 'Create a folder (and its parents)',
    description: 'Idempotent: a folder already at `path` is answered as made. A file at `path`, or at a folder above it, is a 409.',
    tags: ['folders'],
    requestBody: jsonBody(ref(S.CreateFolderRequest), { path: '/reports' }),
    answers: { 200: ok('The folder, made or already there.', ref(S.Folder), { id: FOLDER_ENTRY.id, path: '/reports', created_at: AT }) },
    errors: [400, 409, 422],
  }),
  route({
    method: 'DELETE',
    path: '/drive/folders',
    idempotent: true,
    handler: 'delete-folder',
    permission: 'delete-folder',
    streaming: false,
    operationId: 'deleteFolder',
    summary: 'Delete a folder',
    description:
      'An empty folder, or with `recursive=true` the folder and everything in it. A folder with contents and no `recursive` is a 409; the root cannot be deleted. A delete too big for one request answers 202 with a job.',
    tags: ['folders'],
    parameters: queryParameters(R.DeleteFolderQuery),
    answers: {
      200: ok('What was deleted.', ref(S.DeletedFolder), { deleted: true, path: '/reports', files_deleted: 12 }),
      202: jobAccepted('The delete', {
        job: { id: JOB_ID, type: 'delete-folder', status: 'running', created_at: AT, updated_at: LATER, url: `${BASE}/drive/jobs/${JOB_ID}`, path: '/reports', files_deleted: 2000, result: null },
      }),
    },
    errors: [400, 404, 409, 422],
  }),
  // Deleting files by path (an extension: the spec deletes only folders).
  route({
    method: 'DELETE',
    path: '/drive/files',
    idempotent: true,
    handler: 'delete-files',
    permission: 'files',
    streaming: false,
    operationId: 'deleteFiles',
    summary: 'Delete files',
    description: 'Up to 1,000 paths, as repeated `path` query parameters or a JSON body `{"paths"}` (not both). A folder at any of them is a 409 and deletes nothing.',
    tags: ['files'],
    parameters: queryParameters(R.DeleteFilesQuery),
    requestBody: jsonBody(ref(S.DeleteFilesRequest), { paths: ['/reports/q3.pdf', '/reports/q4.pdf'] }, false),
    answers: { 200: ok('Which paths were deleted and which held no file.', ref(S.DeletedFiles), { deleted: ['/reports/q3.pdf'], not_found: ['/reports/q4.pdf'] }) },
    errors: [400, 409, 422],
  }),
  // Moving a file or folder (an extension): a folder too big for one request answers 202 with a job.
  route({
    method: 'POST',
    path: '/drive/move',
    idempotent: true,
    handler: 'move',
    permission: 'files',
    streaming: false,
    operationId: 'move',
    summary: 'Move or rename a file or folder',
    description:
      'Moves `from` to `to`, a folder with everything in it. A file already at `to` is replaced only with `overwrite: true`; a folder there is always a 409. A folder too big to move in one request answers 202 with a job.',
    tags: ['files', 'folders'],
    requestBody: jsonBody(ref(S.TransferRequest), { from: '/reports/q3.pdf', to: '/archive/q3.pdf' }),
    answers: {
      200: ok('The entry at its new path.', oneOf([ref(S.FileEntry), ref(S.FolderEntry)]), { ...FILE_ENTRY, name: 'q3.pdf', path: '/archive/q3.pdf' }),
      202: jobAccepted('The folder move', {
        job: { id: JOB_ID, type: 'move-folder', status: 'running', created_at: AT, updated_at: LATER, url: `${BASE}/drive/jobs/${JOB_ID}`, path: '/reports', to: '/archive/reports', files_moved: 1500, result: null },
      }),
    },
    errors: [400, 404, 409, 412, 422],
  }),
  // Copying a file (an extension): the bytes copied in S3, server-side.
  route({
    method: 'POST',
    path: '/drive/copy',
    idempotent: true,
    handler: 'copy',
    permission: 'files',
    streaming: false,
    operationId: 'copy',
    summary: 'Copy a file or folder',
    description:
      'Copies `from` to `to`, the bytes copied inside S3 (nothing passes through the client). A file already at `to` is replaced only with `overwrite: true`. A folder too big to copy in one request answers 202 with a job.',
    tags: ['files', 'folders'],
    requestBody: jsonBody(ref(S.TransferRequest), { from: '/reports/q3.pdf', to: '/reports/q3-draft.pdf', overwrite: false }),
    answers: {
      200: ok('The copy\'s entry.', oneOf([ref(S.FileEntry), ref(S.FolderEntry)]), { ...FILE_ENTRY, id: '7a9c1e3f-5b7d-4f9a-8c1e-3a5c7e9b1d3f', name: 'q3-draft.pdf', path: '/reports/q3-draft.pdf' }),
      202: jobAccepted('The folder copy', {
        job: { id: JOB_ID, type: 'copy-folder', status: 'running', created_at: AT, updated_at: LATER, url: `${BASE}/drive/jobs/${JOB_ID}`, path: '/reports', to: '/reports-2026', files_copied: 800, result: null },
      }),
    },
    errors: [400, 404, 409, 412, 413, 422],
  }),
  // The change feed (issue 27): a cursor at "now", then the changes after a cursor, waiting for them if asked.
  route({
    method: 'GET',
    path: '/drive/changes/latest',
    handler: 'changes',
    permission: 'changes',
    streaming: false,
    operationId: 'latestChangesCursor',
    summary: 'Take a cursor at the change feed\'s present',
    description: 'A cursor at "now" for `path` and what is below it: GET /drive/changes with it gives every change made after it. To mirror a folder, take a cursor, then list, then follow the cursor (a change made just before the cursor was taken may come again; none is missed).',
    tags: ['files', 'folders'],
    parameters: queryParameters(R.ChangesLatestQuery),
    answers: { 200: ok('The cursor.', ref(S.ChangesCursor), { cursor: 'eyJ2IjoxLCJkIjoiZHJpdmUiLCJwIjoiL3JlcG9ydHMiLCJzIjo0MiwidCI6MTc3MjQ0MzgwMH0' }) },
    errors: [400, 422],
  }),
  route({
    method: 'GET',
    path: '/drive/changes',
    handler: 'changes',
    permission: 'changes',
    streaming: false,
    operationId: 'listChanges',
    summary: 'Read the changes after a cursor',
    description:
      'The changes made after `cursor` in its folder, oldest first: every change once, each path\'s in the order made, a change within about 2 seconds of its request\'s answer. With none waiting and `timeout` > 0, the request waits up to that many seconds and answers as soon as one comes (a long poll), else an empty list with the same position. A recursive delete, move or copy gives one change a file and folder as its job reaches them; a move into the cursor\'s folder from outside is a `created`, out of it a `deleted`. A write withdrawn with a 409 (it raced a folder\'s delete or move) shows as its pair of changes. A cursor older than the changes kept (7 days by default) is 410 `cursor_expired`: list again and take a new cursor.',
    tags: ['files', 'folders'],
    parameters: queryParameters(R.ChangesQuery),
    answers: {
      200: ok('The changes, the cursor after them, and whether more wait.', ref(S.ChangesPage), {
        changes: [
          { id: '43', type: 'file.created', path: '/reports/q3.pdf', at: AT, file: { ...FILE_ENTRY, etag: 'a3f5c7e9b1d3f5a7c9e1b3d5f7a9c1e3' } },
          { id: '44', type: 'file.moved', path: '/reports/2025/q3.pdf', from: '/reports/q3.pdf', at: LATER, file: { ...FILE_ENTRY, path: '/reports/2025/q3.pdf', etag: 'a3f5c7e9b1d3f5a7c9e1b3d5f7a9c1e3' } },
        ],
        next_cursor: 'eyJ2IjoxLCJkIjoiZHJpdmUiLCJwIjoiL3JlcG9ydHMiLCJzIjo0NCwidCI6MTc3MjQ0MzgwNH0',
        has_more: false,
      }),
    },
    errors: [400, 410, 422],
  }),
  // A folder's recent activity (issue 27's "the dashboard shows a folder's recent activity"): the log read backwards.
  route({
    method: 'GET',
    path: '/drive/changes/recent',
    handler: 'changes',
    permission: 'changes',
    streaming: false,
    operationId: 'recentChanges',
    summary: 'Read a folder\'s most recent changes',
    description:
      'The most recent changes made in `path` and below it, newest first, at most `limit`, as GET /drive/changes gives them (a move in from outside is a `created`, out of it a `deleted`). `next_before`, passed as `before`, gives the page of older ones; `cursor`, followed with GET /drive/changes, gives every change newer than this page, none missed or repeated. A request reads at most 1,000 changes of the drive\'s log in at most 2 DynamoDB queries: in a folder whose changes are few among the drive\'s, a page may hold fewer than `limit`, even none, and still have a `next_before`. Changes are kept 7 days by default.',
    tags: ['files', 'folders'],
    parameters: queryParameters(R.ChangesRecentQuery),
    answers: {
      200: ok('The changes, newest first; a feed cursor after them; the page of older ones.', ref(S.RecentChanges), {
        changes: [
          { id: '44', type: 'file.moved', path: '/reports/2025/q3.pdf', from: '/reports/q3.pdf', at: LATER, file: { ...FILE_ENTRY, path: '/reports/2025/q3.pdf', etag: 'a3f5c7e9b1d3f5a7c9e1b3d5f7a9c1e3' } },
          { id: '43', type: 'file.created', path: '/reports/q3.pdf', at: AT, file: { ...FILE_ENTRY, etag: 'a3f5c7e9b1d3f5a7c9e1b3d5f7a9c1e3' } },
        ],
        cursor: 'eyJ2IjoxLCJkIjoiZHJpdmUiLCJwIjoiL3JlcG9ydHMiLCJzIjo0NCwidCI6MTc3MjQ0MzgwNH0',
        next_before: 'eyJ2IjoxLCJrIjoicmVjZW50IiwiZCI6ImRyaXZlIiwicCI6Ii9yZXBvcnRzIiwiYiI6NDMsImwiOjE3NzI0NDM4MDAwMDB9',
      }),
    },
    errors: [400, 422],
  }),
  // A delete or move too big for one request answers 202 with a job (an extension); its client reads the job here.
  route({
    method: 'GET',
    path: '/drive/jobs/{job_id}',
    handler: 'get-job',
    permission: 'jobs',
    streaming: false,
    operationId: 'getJob',
    summary: 'Read a job',
    description:
      'A job whose folder (for a move or copy, either end) lies outside the key\'s folder does not exist for it (404, as an unknown id). A folder restore\'s job (`type: restore-folder`) is read here too.',
    tags: ['jobs'],
    parameters: [pathParam('job_id', 'The job\'s id.')],
    answers: {
      200: ok('Where the job stands; its `result` once done.', ref(S.JobAnswer), {
        job: {
          id: JOB_ID,
          type: 'delete-folder',
          status: 'done',
          created_at: AT,
          updated_at: '2026-03-02T09:31:10.000Z',
          url: `${BASE}/drive/jobs/${JOB_ID}`,
          path: '/reports',
          files_deleted: 12500,
          result: { deleted: true, path: '/reports', files_deleted: 12500 },
        },
      }),
    },
    errors: [404],
  }),
  // The trash (issue 28): what deletes and replacements removed, kept for DRIVE_TRASH_DAYS days.
  route({
    method: 'GET',
    path: '/drive/trash',
    handler: 'trash-list',
    permission: 'trash',
    streaming: false,
    operationId: 'listTrash',
    summary: 'List the trash',
    description:
      'What deletes and replacements put in the trash, newest first: the items in the key\'s folder (with `path`, at or below it, and a deleted folder above it that held it), until their `purge_at`. `usage` is what the trash holds in that scope. Empty when the trash is off (`DRIVE_TRASH_DAYS=0`).',
    tags: ['trash'],
    parameters: queryParameters(R.TrashQuery),
    answers: {
      200: ok('One page of the trash, and its usage.', ref(S.TrashPage), {
        items: [
          {
            id: TRASH_ID,
            type: 'file',
            path: '/reports/q3.pdf',
            size: 48213,
            etag: '9b2cf535f27731c974343645a3985328',
            deleted_at: AT,
            purge_at: '2026-03-09T09:30:00.000Z',
            deleted_by: KEY_ID,
            reason: 'deleted',
            state: 'trashed',
          },
        ],
        next_cursor: null,
        usage: { items: 1, files: 1, bytes: 48213 },
      }),
    },
    errors: [403, 422],
  }),
  route({
    method: 'POST',
    path: '/drive/trash/restore',
    idempotent: true,
    handler: 'trash-restore',
    permission: 'restore',
    streaming: false,
    operationId: 'restoreFromTrash',
    summary: 'Restore a trash item',
    description:
      'Puts the trashed file back where it was taken from (or at `to`), with its id, bytes and ETag; missing folders above are made. A trashed folder comes back whole, with its folders\' ids and its files\' ids, bytes and ETags, except files whose path was taken since the delete, which stay in the trash; a folder too big for one request answers 202 with a job (`restore-folder`). Something at the destination is a 409 unless `overwrite` is true (a file there then goes to the trash in turn; a folder there is restored into). An item outside the key\'s folder, or past its `purge_at`, is a 404.',
    tags: ['trash'],
    requestBody: jsonBody(ref(S.RestoreRequest), { id: TRASH_ID }),
    answers: {
      200: ok('The restored file, or folder.', oneOf([ref(S.File), ref(S.Folder)]), FILE),
      202: jobAccepted('The folder restore', {
        job: { id: JOB_ID, type: 'restore-folder', status: 'running', created_at: AT, updated_at: LATER, url: `${BASE}/drive/jobs/${JOB_ID}`, path: '/reports', to: '/reports', files_restored: 800, result: null },
      }),
    },
    errors: [400, 403, 404, 409, 422],
  }),
  route({
    method: 'DELETE',
    path: '/drive/trash/{item_id}',
    idempotent: true,
    handler: 'trash-purge',
    permission: 'purge',
    streaming: false,
    operationId: 'purgeTrashItem',
    summary: 'Purge a trash item now',
    description: 'Deletes the item\'s bytes and records for good, before its `purge_at`. An item outside the key\'s folder is a 404; one being restored or purged, a 409.',
    tags: ['trash'],
    parameters: [pathParam('item_id', 'The trash item\'s id.')],
    answers: { 200: ok('What was purged.', ref(S.PurgedItem), { purged: true, id: TRASH_ID, files: 1, bytes: 48213 }) },
    errors: [404, 409],
  }),
  route({
    method: 'DELETE',
    path: '/drive/trash',
    idempotent: true,
    handler: 'trash-empty',
    permission: 'empty-trash',
    streaming: false,
    operationId: 'emptyTrash',
    summary: 'Empty the trash of a folder',
    description:
      'Purges now every trash item taken from `path` or below it (`/`: all of them) that was in the trash when the request came, newest first. Items being restored or purged are left. A trash too big to empty in one request answers 202 with a job (`empty-trash`) whose `result` is these totals.',
    tags: ['trash'],
    parameters: queryParameters(R.EmptyTrashQuery),
    answers: {
      200: ok('What was purged.', ref(S.EmptiedTrash), { purged: true, path: '/reports', items: 3, files: 122, bytes: 1050000 }),
      202: jobAccepted('Emptying the trash', {
        job: { id: JOB_ID, type: 'empty-trash', status: 'running', created_at: AT, updated_at: LATER, url: `${BASE}/drive/jobs/${JOB_ID}`, path: '/reports', files_purged: 800, result: null },
      }),
    },
    errors: [422],
  }),
  // What the caller's key may do (an extension): the dashboard asks at sign-in, to offer only what the role allows.
  route({
    method: 'GET',
    path: '/drive/whoami',
    handler: 'whoami',
    permission: 'whoami',
    streaming: false,
    operationId: 'whoami',
    summary: 'What the calling key may do',
    description: 'Any valid key, of any role, may ask; the answer tells a key only of itself (never its secret). A client asks once, to offer only what the role allows.',
    tags: ['keys'],
    answers: { 200: ok('The key\'s role, folder, drive and id.', ref(S.Whoami), { role: 'read-only', prefix: '/reports', drive: 'default', key_id: KEY_ID }) },
    errors: [],
  }),
  // Large files (an extension of the spec): a multipart upload straight to S3. Each takes upload tokens.
  route({
    method: 'POST',
    path: '/drive/uploads',
    idempotent: true,
    handler: 'start-upload',
    permission: 'upload',
    streaming: false,
    operationId: 'startUpload',
    summary: 'Start a large upload',
    description: 'A multipart upload straight to S3: PUT each part to its URL, then complete.',
    tags: ['large uploads'],
    requestBody: jsonBody(ref(S.StartUploadRequest), { path: '/backups/db.tar', size: 157286400, content_type: 'application/x-tar' }),
    answers: {
      200: ok('The session and the URLs of its first parts.', ref(S.UploadSession), {
        upload_id: UPLOAD_ID,
        path: '/backups/db.tar',
        size: 157286400,
        part_size: 104857600,
        part_count: 2,
        parts: PARTS,
        next_part: null,
        expires_at: '2026-03-03T09:30:00.000Z',
      }),
    },
    errors: [400, 409, 412, 413, 422],
  }),
  route({
    method: 'GET',
    path: '/drive/uploads/{upload_id}/parts',
    handler: 'upload-parts',
    permission: 'upload',
    streaming: false,
    operationId: 'uploadParts',
    summary: 'More part URLs',
    description: 'A session answers only the key that started it and the drive\'s admin keys; to any other key it does not exist (404).',
    tags: ['large uploads'],
    parameters: [pathParam('upload_id', 'The session.'), ...queryParameters(R.PartUrlsQuery)],
    answers: {
      200: ok('URLs for parts `from` on.', ref(S.PartUrlPage), { upload_id: UPLOAD_ID, part_size: 104857600, part_count: 2, parts: PARTS.slice(1), next_part: null, expires_at: '2026-03-03T09:30:00.000Z' }),
    },
    errors: [404, 422],
  }),
  route({
    method: 'POST',
    path: '/drive/uploads/{upload_id}/complete',
    idempotent: true,
    handler: 'complete-upload',
    permission: 'upload',
    streaming: false,
    operationId: 'completeUpload',
    summary: 'Complete a large upload',
    description:
      'A 409 with `reason: upload_busy` is another request completing or aborting the same session: wait and retry. Completing again after an attempt that stored the file answers with it; if that file has since been deleted, moved or replaced, 409, and nothing is stored again: start a new upload. Another key\'s session (unless the caller is an admin) is 404, as one never issued.',
    tags: ['large uploads'],
    parameters: [pathParam('upload_id', 'The session.')],
    requestBody: jsonBody(ref(S.CompleteUploadRequest), { parts: [{ number: 1, etag: '"a54357aff0632cce46d942af68356b38"' }, { number: 2, etag: '"0c78aef83f66abc1fa1e8477f296d394"' }] }),
    answers: { 200: ok('The stored file, now listed.', ref(S.File), { ...FILE, id: UPLOAD_ID, name: 'db.tar', path: '/backups/db.tar', url: `${BASE}/drive/download?path=/backups/db.tar`, size: 157286400 }) },
    errors: [400, 404, 409, 412, 422],
  }),
  route({
    method: 'DELETE',
    path: '/drive/uploads/{upload_id}',
    handler: 'abort-upload',
    permission: 'upload',
    streaming: false,
    operationId: 'abortUpload',
    summary: 'Abort a large upload',
    description: 'Only the key that started the session, or an admin key of its drive; to any other key it does not exist (404).',
    tags: ['large uploads'],
    parameters: [pathParam('upload_id', 'The session.')],
    answers: { 200: ok('The session ended; its parts are deleted.', ref(S.AbortedUpload), { upload_id: UPLOAD_ID, aborted: true }) },
    errors: [404, 409],
  }),
  // API keys, for admin keys (an extension of the spec: the dashboard's Settings → API Keys).
  route({
    method: 'GET',
    path: '/drive/keys',
    handler: 'list-keys',
    permission: 'keys',
    streaming: false,
    operationId: 'listKeys',
    summary: 'List the drive\'s API keys (admin)',
    description: 'The caller\'s drive\'s keys, revoked ones included, oldest first; never a secret or its hash. `last_used_at` is right to about a minute.',
    tags: ['keys'],
    answers: { 200: ok('Every key, revoked ones too, oldest first.', ref(S.KeyList), { keys: [{ ...API_KEY, name: 'dashboard', role: 'admin', id: 'a1b2c3d4e5f60718', last4: 'Qm3v', last_used_at: LATER }, API_KEY] }) },
    errors: [],
  }),
  route({
    method: 'POST',
    path: '/drive/keys',
    idempotent: true,
    handler: 'create-key',
    permission: 'keys',
    streaming: false,
    operationId: 'createKey',
    summary: 'Create an API key (admin)',
    description: '`role` defaults to `read-write` and `prefix` to the whole drive; an admin key must reach the whole drive. The secret is in this answer only: the drive keeps its SHA-256.',
    tags: ['keys'],
    requestBody: jsonBody(ref(S.CreateKeyRequest), { name: 'nightly job', role: 'upload-only' }),
    answers: { 200: ok('The key and its secret, shown this once.', ref(S.CreatedKey), { key: API_KEY, secret: 'drv_4bT9qLx2Vw7NcR1mZk8PfYs3Hd6Gj0x7Qe' }) },
    errors: [400, 422],
  }),
  route({
    method: 'DELETE',
    path: '/drive/keys/{key_id}',
    handler: 'revoke-key',
    permission: 'keys',
    streaming: false,
    operationId: 'revokeKey',
    summary: 'Revoke an API key (admin)',
    description: 'The key answers 401 from then on, and the share links it made open nothing. The drive\'s last live admin key cannot be revoked (409).',
    tags: ['keys'],
    parameters: [pathParam('key_id', 'The key\'s id.')],
    answers: { 200: ok('The key, revoked.', ref(S.RevokedKey), { key: { ...API_KEY, revoked_at: LATER } }) },
    errors: [404, 409],
  }),
  // Federation (an extension, issue 25): trust rules that let a job's identity token stand for a short-lived
  // key. Managed by admin keys, from the keys bucket; the exchange itself takes no key.
  route({
    method: 'POST',
    path: '/drive/trust',
    handler: 'create-trust',
    permission: 'keys',
    streaming: false,
    operationId: 'createTrust',
    summary: 'Trust an identity token issuer (admin)',
    description:
      'Tokens from `issuer` for `audience` whose `sub` matches `subject` (exact, or `*` for any run of characters within one `:`-separated segment) and whose claims carry `claims` exchange at POST /drive/token for keys of `role` (never admin) on `prefix`, living at most `max_ttl_seconds` (60 to 43,200; default 3,600). Issuers are https URLs.',
    tags: ['keys'],
    requestBody: jsonBody(ref(S.CreateTrustRequest), { issuer: TRUST.issuer, audience: TRUST.audience, subject: TRUST.subject, claims: TRUST.claims, role: 'upload-only', prefix: '/ingest' }),
    answers: { 200: ok('The rule.', ref(S.TrustAnswer), { trust: TRUST }) },
    errors: [400, 409, 422],
  }),
  route({
    method: 'GET',
    path: '/drive/trust',
    handler: 'list-trust',
    permission: 'keys',
    streaming: false,
    operationId: 'listTrust',
    summary: 'List the drive\'s trust rules (admin)',
    description: 'Revoked ones included, oldest first: the order POST /drive/token tries them in.',
    tags: ['keys'],
    answers: { 200: ok('Every rule, oldest first.', ref(S.TrustList), { trust: [TRUST] }) },
    errors: [],
  }),
  route({
    method: 'DELETE',
    path: '/drive/trust/{trust_id}',
    handler: 'revoke-trust',
    permission: 'keys',
    streaming: false,
    operationId: 'revokeTrust',
    summary: 'Revoke a trust rule (admin)',
    description: 'The rule admits no token from then on, and every key minted under it answers 401 as a revoked key does.',
    tags: ['keys'],
    parameters: [pathParam('trust_id', 'The rule\'s id.')],
    answers: { 200: ok('The rule, revoked.', ref(S.TrustAnswer), { trust: { ...TRUST, revoked_at: LATER } }) },
    errors: [404],
  }),
  // The exchange takes no key: the token is the credential. Its own rate-limit buckets are taken before the
  // issuer is asked anything: the source address's first, the drive's (10 times larger) after the free checks.
  route({
    method: 'POST',
    path: '/drive/token',
    handler: 'exchange-token',
    streaming: false,
    operationId: 'exchangeToken',
    summary: 'Exchange an identity token for a short-lived key (no key)',
    description:
      'The token (a JWT from GitHub Actions, GitLab CI, Google Cloud, Kubernetes, Azure or AWS) is checked against its issuer\'s published keys (OpenID discovery, then `jwks_uri`) and its `iss`, `aud`, `exp`, `nbf` and `iat`; only asymmetric algorithms. The first live trust rule of `drive` that matches decides the key\'s role and folder; the key is an ordinary Bearer key until `expires_at`. A 401 names the check that failed; a 503 is an issuer that did not answer.',
    tags: ['keys'],
    requestBody: jsonBody(ref(S.TokenRequest), { drive: 'default', token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJodHRwczovL3Rva2VuLmFjdGlvbnMuZ2l0aHVidXNlcmNvbnRlbnQuY29tIn0.c2ln', ttl_seconds: 900 }),
    answers: {
      200: ok('The key, shown this once, and what it may do.', ref(S.MintedKey), {
        key: 'drv_9Xw2LmN8rT5yB1cD4fG7hJ0sA6Zk3pQv7Qe4bT9qLx2V',
        expires_at: '2026-03-02T09:45:00.000Z',
        drive: 'default',
        role: 'upload-only',
        prefix: '/ingest',
        trust_id: TRUST_ID,
      }),
    },
    errors: [400, 401, 422, 503],
  }),
  // Share links (an extension of the spec): made, listed and revoked with a key; opened without one.
  route({
    method: 'POST',
    path: '/drive/links',
    idempotent: true,
    handler: 'create-link',
    permission: 'links',
    streaming: false,
    operationId: 'createLink',
    summary: 'Share a file by link',
    description: 'A URL that opens the file with no key until `expires_at` (a day by default, at most 30 days) or a revoke. Its token is in this answer only: the drive keeps its SHA-256, the link\'s `id`.',
    tags: ['links'],
    requestBody: jsonBody(ref(S.CreateLinkRequest), { path: '/reports/q3.pdf', expires_in: 604800 }),
    answers: {
      200: ok('The link; its `url` opens the file with no key.', ref(S.CreatedLink), { id: LINK_ID, url: `${BASE}/s/Zk3pQ9vXw2LmN8rT5yB1cD4fG7hJ0sA6`, path: '/reports/q3.pdf', expires_at: '2026-03-09T09:30:00.000Z' }),
    },
    errors: [400, 404, 409, 422],
  }),
  route({
    method: 'GET',
    path: '/drive/links',
    handler: 'list-links',
    permission: 'links',
    streaming: false,
    operationId: 'listLinks',
    summary: 'List live share links',
    description: 'The live links to files the key may reach, a page at a time; never a link\'s URL, whose token the drive does not keep.',
    tags: ['links'],
    parameters: queryParameters(R.LinksQuery),
    answers: { 200: ok('A page of links, in path order.', ref(S.LinkList), { links: [LINK], next_cursor: null }) },
    errors: [400, 422],
  }),
  route({
    method: 'DELETE',
    path: '/drive/links/{link_id}',
    handler: 'revoke-link',
    permission: 'links',
    streaming: false,
    operationId: 'revokeLink',
    summary: 'Revoke a share link',
    description: 'The link opens nothing from the next request on.',
    tags: ['links'],
    parameters: [pathParam('link_id', 'The link\'s id.')],
    answers: { 200: ok('The link, revoked.', ref(S.RevokedLink), { id: LINK_ID, revoked: true }) },
    errors: [404],
  }),
  // Every link one key made, a page a request (a leaked key's): the same function as one link's revoke.
  route({
    method: 'DELETE',
    path: '/drive/links',
    handler: 'revoke-link',
    permission: 'links',
    streaming: false,
    operationId: 'revokeLinksBy',
    summary: 'Revoke the share links a key made',
    description:
      'One page of the links the key `created_by` made that the caller may reach (as GET /drive/links lists them), revoked; call again with `next_cursor` until it is null.',
    tags: ['links'],
    parameters: queryParameters(R.RevokeLinksQuery),
    answers: { 200: ok('How many links the page revoked, and where the next starts.', ref(S.RevokedLinks), { created_by: KEY_ID, revoked: 3, next_cursor: null }) },
    errors: [400, 422],
  }),
  // Webhooks (issue 27; docs/change-feed-design.md, "Webhooks"): admin keys register URLs that are POSTed each
  // change of a subtree, signed, retried for 24 hours, in the feed's order.
  route({
    method: 'POST',
    path: '/drive/webhooks',
    idempotent: true,
    handler: 'create-webhook',
    permission: 'webhooks',
    streaming: false,
    operationId: 'createWebhook',
    summary: 'Register a webhook (admin)',
    description:
      'Each change in `path` (default the whole drive) of one of `types` (default all) is POSTed to `url` as JSON `{"id", "webhook_id", "change", "cursor"}` with `Drive-Webhook-Id`, `Drive-Delivery-Id` (the same on every retry) and `Drive-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the secret>`. A 2xx within 10 s acknowledges; anything else is retried with exponential backoff for 24 hours, then listed by GET /drive/webhooks/{webhook_id}/deliveries?status=failed. A webhook\'s deliveries come one at a time, in the feed\'s order. `url` must be https, and its host must resolve to public addresses only (422). The secret is in this answer only.',
    tags: ['webhooks'],
    requestBody: jsonBody(ref(S.CreateWebhookRequest), { url: 'https://hooks.example.com/drive', path: '/reports', types: ['file.created', 'file.replaced'] }),
    answers: { 200: ok('The webhook and its signing secret, shown this once.', ref(S.CreatedWebhook), { webhook: WEBHOOK, secret: 'whsec_q2Vx7LmN8rT5yB1cD4fG7hJ0sA6Zk3pQv7Qe4bT9qLx' }) },
    errors: [400, 422],
  }),
  route({
    method: 'GET',
    path: '/drive/webhooks',
    handler: 'list-webhooks',
    permission: 'webhooks',
    streaming: false,
    operationId: 'listWebhooks',
    summary: 'List the drive\'s webhooks (admin)',
    description: 'Oldest first; never a secret.',
    tags: ['webhooks'],
    answers: { 200: ok('Every webhook of the drive, oldest first.', ref(S.WebhookList), { webhooks: [WEBHOOK] }) },
    errors: [],
  }),
  route({
    method: 'DELETE',
    path: '/drive/webhooks/{webhook_id}',
    handler: 'delete-webhook',
    permission: 'webhooks',
    streaming: false,
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook (admin)',
    description: 'Nothing more is sent to it, deliveries already queued and their retries included; its failed deliveries go with it.',
    tags: ['webhooks'],
    parameters: [pathParam('webhook_id', 'The webhook\'s id.')],
    answers: { 200: ok('The webhook, deleted.', ref(S.DeletedWebhook), { id: WEBHOOK_ID, deleted: true }) },
    errors: [404],
  }),
  route({
    method: 'GET',
    path: '/drive/webhooks/{webhook_id}/deliveries',
    handler: 'list-deliveries',
    permission: 'webhooks',
    streaming: false,
    operationId: 'listDeliveries',
    summary: 'List a webhook\'s failed deliveries (admin)',
    description: 'The deliveries not acknowledged within 24 hours of being queued, oldest change first, kept as long as the feed keeps its changes.',
    tags: ['webhooks'],
    parameters: [pathParam('webhook_id', 'The webhook\'s id.'), ...queryParameters(R.DeliveriesQuery)],
    answers: {
      200: ok('The failed deliveries.', ref(S.DeliveryList), {
        deliveries: [
          {
            id: `${WEBHOOK_ID}.1042`,
            webhook_id: WEBHOOK_ID,
            status: 'failed',
            change: CHANGE,
            attempts: 19,
            last_status: 503,
            last_error: 'answered 503',
            first_attempt_at: AT,
            failed_at: '2026-03-03T10:30:40.000Z',
          },
        ],
      }),
    },
    errors: [404, 422],
  }),
  // What a share link's URL opens: the file, to anyone holding the token, with no key (the token is checked in
  // the function). Under `/s/`, clear of the API's `/drive/…` and of the dashboard's one-segment `/{file}`;
  // streamed, as downloads are, with HEAD from the same function.
  route({
    method: 'GET',
    path: '/s/{token}',
    handler: 'open-link',
    streaming: true,
    secretPath: true,
    operationId: 'openLink',
    summary: 'Open a share link (no key)',
    description:
      'The linked file, as GET /drive/download answers it; a 404 once the link is revoked or expired, its file is gone, or the key that made it is revoked or no longer reaches the file. `download=0` shows safe types in the tab.',
    tags: ['links'],
    parameters: [pathParam('token', 'The link\'s token.'), ...queryParameters(R.OpenLinkQuery), ...DOWNLOAD_HEADERS],
    answers: downloadAnswers(false, true),
    errors: [404, 416, 422],
  }),
  route({
    method: 'HEAD',
    path: '/s/{token}',
    handler: 'open-link',
    streaming: true,
    secretPath: true,
    operationId: 'headLink',
    summary: 'A share link\'s headers (no key)',
    description: 'What GET answers, without the bytes (and without a body on errors).',
    tags: ['links'],
    parameters: [pathParam('token', 'The link\'s token.'), ...queryParameters(R.OpenLinkQuery, { download: '"0" or "1".' }), ...DOWNLOAD_HEADERS],
    answers: downloadAnswers(true, true),
    errors: [404, 416, 422],
  }),
  // The web dashboard's page and its assets (an extension: Settings → API Keys and a file browser). They take
  // no key, as they hold no data: the page signs in with a key of any role and sends it with each API call.
  route({
    method: 'GET',
    path: '/',
    handler: 'dashboard',
    streaming: false,
    operationId: 'dashboard',
    summary: 'The web dashboard (no key)',
    description: 'The dashboard\'s page. It holds no data: it signs in with a key of any role and sends it with each API call.',
    tags: ['dashboard'],
    parameters: [requestHeader('If-None-Match', IF_NONE_MATCH)],
    answers: {
      200: { description: 'The page.', headers: validatorHeaders, content: { 'text/html': { schema: { type: 'string' } } } },
      304: { description: 'The browser\'s copy is current.', headers: validatorHeaders },
      308: { description: 'The stage\'s URL without its slash: the page\'s relative URLs need it.', headers: { Location: { description: 'The same URL with a trailing slash.', required: true, schema: { type: 'string' } } } },
    },
    errors: [],
  }),
  route({
    method: 'GET',
    path: '/{file}',
    handler: 'dashboard',
    streaming: false,
    operationId: 'dashboardFile',
    summary: 'A file of the web dashboard (no key)',
    description: 'The page\'s scripts, styles and icons; any other name is a 404.',
    tags: ['dashboard'],
    parameters: [pathParam('file', 'A plain file name, like app.js.'), requestHeader('If-None-Match', IF_NONE_MATCH)],
    answers: {
      200: {
        description: 'The file.',
        headers: validatorHeaders,
        content: { 'text/html': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } }, 'text/javascript': { schema: { type: 'string' } }, 'image/svg+xml': { schema: { type: 'string' } } },
      },
      304: { description: 'The browser\'s copy is current.', headers: validatorHeaders },
    },
    errors: [404],
  }),
  // The API's OpenAPI document, with no key: what a team generates its client from. A path of its own, which
  // API Gateway matches before the dashboard's `/{file}` (the local host lists it first for the same effect).
  route({
    method: 'GET',
    path: '/openapi.json',
    handler: 'openapi',
    streaming: false,
    operationId: 'openApiDocument',
    summary: 'This document (no key)',
    description: 'Its `servers` name the API that served it.',
    tags: ['contract'],
    parameters: [requestHeader('If-None-Match', 'The ETag of the copy the client holds.')],
    answers: {
      200: {
        description: 'The OpenAPI 3.1 document.',
        headers: { ...validatorHeaders, ...apiHeaders },
        content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] }, example: { openapi: '3.1.0', info: { title: 'Drive', version: '1.0.0' }, paths: {} } } },
      },
      304: { description: 'The client\'s copy is current.', headers: { ...validatorHeaders, ...apiHeaders } },
    },
    errors: [],
  }),
];

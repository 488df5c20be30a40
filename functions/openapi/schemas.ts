import { ERROR_REASONS } from '../core/errors';
import {
  ERROR_CODES,
  type Static,
  array,
  boolean,
  component,
  constant,
  enumOf,
  integer,
  map,
  nullable,
  object,
  oneOf,
  optional,
  ref,
  string,
  timestamp,
} from './schema-kit';
import * as R from './request-schemas';

/**
 * The API's wire shapes, each a JSON Schema with its TypeScript type (`Static<typeof X>`, named below as
 * `Wire<'X'>`, X the component's name in the document): the OpenAPI document's `components.schemas`, the views' return types and the handlers' input
 * types come from here. The requests' own schemas are in request-schemas.ts, which the handlers load to
 * validate their requests; they are declared here as the document's components.
 */

const PATH = string('A canonical absolute path: "/" then names joined by "/", no trailing slash.', { examples: ['/reports/q3.pdf'] });
const ID = string('An opaque identifier (a UUID).', { format: 'uuid' });
const LINK_ID = { pattern: '^[0-9a-f]{64}$' };

export const ErrorCode = component('ErrorCode', enumOf(ERROR_CODES, 'The error codes of the API and, in ERROR_STATUS order, the status each is sent with.'));
export const ErrorReason = component(
  'ErrorReason',
  enumOf(ERROR_REASONS, 'What a client may act on beyond the code: `upload_busy` (409) is a large upload being completed or aborted by another request; wait and retry. `idempotency_in_progress` (409, with `Retry-After`) is the first request with the request\'s `Idempotency-Key` still running; retry with the same key after the wait for its answer. `idempotency_key_reused` (422) is a key already used for another request (another method, path, query or body); send a new key.'),
);
export const ErrorBody = component(
  'Error',
  object(
    {
      error: object({
        code: ref(ErrorCode),
        message: string('What went wrong and what to do, in English; for people, not for matching.'),
        request_id: optional(string('The id of the request (also in `X-Request-Id`), for the logs.')),
        reason: optional(ref(ErrorReason)),
      }),
    },
    'Every failure: `{"error": {"code", "message"}}`.',
  ),
);
export const File = component(
  'File',
  object(
    {
      id: ID,
      name: string('The last segment of `path`.'),
      path: PATH,
      url: string('Where GET /drive/download reads it.', { format: 'uri' }),
      size: integer('Bytes.', { minimum: 0 }),
      created_at: timestamp('When this version was stored.'),
    },
    'A stored file, as upload, the end of a large upload and a file copy return it.',
  ),
);
export const FileEntry = component(
  'FileEntry',
  object(
    {
      id: ID,
      name: string(),
      path: PATH,
      size: integer('Bytes.', { minimum: 0 }),
      created_at: timestamp('When this version was stored.'),
      etag: optional(string('The content hash (with include=etag), as the download ETag has it.')),
    },
    'A file in a listing, or a moved or copied file: a File without `url`.',
  ),
);
export const FolderEntry = component('FolderEntry', object({ id: ID, name: string('The last segment of `path` ("" for the root).'), path: PATH }, 'A folder in a listing, or a moved or copied folder.'));
export const Folder = component('Folder', object({ id: ID, path: PATH, created_at: timestamp('When it was created.') }, 'A folder as POST /drive/folders returns it.'));
export const Listing = component(
  'Listing',
  object(
    {
      folder: PATH,
      files: array(ref(FileEntry)),
      folders: array(ref(FolderEntry)),
      next_cursor: optional(nullable(string('Pass as `cursor` for the next page; null after the last.'))),
    },
    'A folder\'s files and folders; `next_cursor` only when the listing is paged (limit or cursor given).',
  ),
);
export const DeletedFolder = component('DeletedFolder', object({ deleted: constant(true), path: PATH, files_deleted: integer('Files deleted with it.', { minimum: 0 }) }));
export const DeletedFiles = component(
  'DeletedFiles',
  object({
    deleted: array(PATH, { description: 'The paths whose file is gone, in the order asked.' }),
    not_found: array(PATH, { description: 'The paths that held no file, in the order asked.' }),
  }),
);
export const JobStatus = component('JobStatus', enumOf(['running', 'done']));
export const JobFailure = component('JobFailure', object({ code: ref(ErrorCode), message: string() }, 'Why a move or copy that is done stopped short.'));

/** The fields every job has (GET /drive/jobs/{job_id}), before its own. */
const jobFields = <const T extends string>(type: T) => ({
  id: ID,
  type: constant(type),
  status: ref(JobStatus),
  created_at: timestamp('When it was accepted.'),
  updated_at: timestamp('When it last advanced.'),
  url: string('Where GET /drive/jobs/{job_id} reads it.', { format: 'uri' }),
  path: PATH,
});
export const DeleteJob = component(
  'DeleteJob',
  object({ ...jobFields('delete-folder'), files_deleted: integer('Files deleted so far.', { minimum: 0 }), result: nullable(ref(DeletedFolder)) }),
);
export const MoveJob = component(
  'MoveJob',
  object({ ...jobFields('move-folder'), to: PATH, files_moved: integer('Files moved so far.', { minimum: 0 }), result: nullable(ref(FolderEntry)), error: optional(ref(JobFailure)) }),
);
export const CopyJob = component(
  'CopyJob',
  object({ ...jobFields('copy-folder'), to: PATH, files_copied: integer('Files copied so far.', { minimum: 0 }), result: nullable(ref(FolderEntry)), error: optional(ref(JobFailure)) }),
);
export const RestoreJob = component(
  'RestoreJob',
  object({
    ...jobFields('restore-folder'),
    to: PATH,
    files_restored: integer('Files restored so far (a file whose path was taken since the delete stays in the trash, uncounted).', { minimum: 0 }),
    result: nullable(ref(FolderEntry)),
    error: optional(ref(JobFailure)),
  }),
);
// Declared here, before the jobs, for the empty-trash job's `result`.
export const EmptiedTrash = component('EmptiedTrash', object({ purged: constant(true), path: PATH, items: integer(undefined, { minimum: 0 }), files: integer(undefined, { minimum: 0 }), bytes: integer(undefined, { minimum: 0 }) }));
export const EmptyTrashJob = component(
  'EmptyTrashJob',
  object({
    ...jobFields('empty-trash'),
    files_purged: integer('Files purged so far (in the trash items purged so far).', { minimum: 0 }),
    result: nullable(ref(EmptiedTrash)),
  }),
);
export const Job = component(
  'Job',
  oneOf([ref(DeleteJob), ref(MoveJob), ref(CopyJob), ref(RestoreJob), ref(EmptyTrashJob)], {
    discriminator: {
      propertyName: 'type',
      mapping: {
        'delete-folder': '#/components/schemas/DeleteJob',
        'move-folder': '#/components/schemas/MoveJob',
        'copy-folder': '#/components/schemas/CopyJob',
        'restore-folder': '#/components/schemas/RestoreJob',
        'empty-trash': '#/components/schemas/EmptyTrashJob',
      },
    },
  }),
);
export const JobAnswer = component('JobAnswer', object({ job: ref(Job) }));
export const ChangeType = component('ChangeType', R.ChangeType);
export const Change = component(
  'Change',
  object(
    {
      id: string('The change\'s place in the drive\'s feed (unique in the drive).'),
      type: ref(ChangeType),
      path: PATH,
      at: timestamp('When the write was made (a delete: to the second).'),
      from: optional(string('The old path of a move.')),
      file: optional(ref(FileEntry)),
      folder: optional(ref(FolderEntry)),
    },
    'One change in the drive: a file\'s (with `file` as GET /drive/list gives it, `etag` included) or a folder\'s (with `folder`); a move with `from`.',
  ),
);
export const ChangesPage = component(
  'ChangesPage',
  object({
    changes: array(ref(Change)),
    next_cursor: string('Pass as `cursor` for the changes after these (the same position when there were none).'),
    has_more: boolean('More changes wait: ask again at once.'),
  }),
);
export const RecentChanges = component(
  'RecentChanges',
  object(
    {
      changes: array(ref(Change)),
      cursor: string('A cursor for GET /drive/changes just after the newest change this page could hold: following it gives every change after these, none missed or repeated.'),
      next_before: nullable(string('Pass as `before` for the page of older changes; null when the log holds none older. A page may hold fewer than `limit` changes, even none, with more to come.')),
    },
    'A folder\'s most recent changes, newest first, as GET /drive/changes gives them (a move in from outside is a `created`, out of it a `deleted`).',
  ),
);
export const ChangesCursor = component('ChangesCursor', object({ cursor: string('A cursor at the feed\'s present position, for GET /drive/changes.') }));
export const TrashItem = component(
  'TrashItem',
  object(
    {
      id: string('The item\'s id (a UUIDv7: ids sort by the time they were made).'),
      type: enumOf(['file', 'folder']),
      path: PATH,
      size: integer('Bytes (a folder: its files\' sum).', { minimum: 0 }),
      files: optional(integer('For a folder: how many files it held.', { minimum: 0 })),
      etag: optional(string('A file\'s content hash, as its download\'s ETag gives it.')),
      deleted_at: timestamp('When it was deleted or replaced.'),
      purge_at: timestamp('When it is purged for good (then it is no longer listed nor restorable).'),
      deleted_by: nullable(string('The id of the key whose request deleted or replaced it.')),
      reason: enumOf(['deleted', 'replaced']),
      state: enumOf(['trashed', 'deleting', 'restoring', 'purging'], '`deleting` while a folder\'s delete job runs (not restorable yet).'),
    },
    'Something a delete or a replacement put in the trash.',
  ),
);
export const TrashUsage = component(
  'TrashUsage',
  object(
    {
      items: integer('Items in the trash in the scope asked.', { minimum: 0 }),
      files: integer('Files they hold.', { minimum: 0 }),
      bytes: integer('Bytes they hold (billed until purged).', { minimum: 0 }),
    },
    'What the trash holds in the scope asked (`path`, else the key\'s folder): summed from the rows the request read.',
  ),
);
export const TrashPage = component(
  'TrashPage',
  object({ items: array(ref(TrashItem)), next_cursor: nullable(string('Pass as `cursor` for the next page; null after the last.')), usage: ref(TrashUsage) }),
);
export const PurgedItem = component('PurgedItem', object({ purged: constant(true), id: string(), files: integer(undefined, { minimum: 0 }), bytes: integer(undefined, { minimum: 0 }) }));
export const Role = component('Role', R.Role);
export const Whoami = component('Whoami', object({ role: ref(Role), prefix: PATH, drive: string('The drive the key belongs to.'), key_id: string('The key\'s id (never its secret).') }));
export const PartUrl = component('PartUrl', object({ number: integer('The part number, from 1.', { minimum: 1 }), url: string('A presigned S3 URL to PUT the part\'s bytes to.', { format: 'uri' }) }));
export const DirectDownload = component(
  'DirectDownload',
  object(
    {
      url: string('A presigned S3 URL that GETs the bytes (ranges too) until `expires_at`, with the plain download\'s Content-Type and Content-Disposition; no key is sent to it.', { format: 'uri' }),
      expires_at: timestamp('When the URL stops opening: 300 seconds after it was given. A GET begun before then runs to its end.'),
      path: PATH,
      size: integer('Bytes the URL answers.', { minimum: 0 }),
      etag: string('The content hash, as the download ETag has it (without quotes): S3 answers this ETag, and a client may send it as If-Match.'),
      content_type: string('The Content-Type the URL answers with.'),
    },
    'What GET /drive/download?redirect=true redirects to (its `Location`), and what it reads.',
  ),
);
export const UploadSession = component(
  'UploadSession',
  object({
    upload_id: ID,
    path: PATH,
    size: integer('Bytes.', { minimum: 1 }),
    part_size: integer('Bytes in each part but the last.', { minimum: 1 }),
    part_count: integer('Parts in all.', { minimum: 1 }),
    parts: array(ref(PartUrl)),
    next_part: nullable(integer('The first part whose URL is not in `parts`; null once every part\'s is given.', { minimum: 1 })),
    expires_at: timestamp('When the session and its URLs end.'),
  }),
);
export const PartUrlPage = component(
  'PartUrlPage',
  object({
    upload_id: ID,
    part_size: integer(undefined, { minimum: 1 }),
    part_count: integer(undefined, { minimum: 1 }),
    parts: array(ref(PartUrl)),
    next_part: nullable(integer(undefined, { minimum: 1 })),
    expires_at: timestamp('When the session and its URLs end.'),
  }),
);
export const AbortedUpload = component('AbortedUpload', object({ upload_id: ID, aborted: constant(true) }));
export const ApiKey = component(
  'ApiKey',
  object({
    id: string('The key\'s id.', R.KEY_ID),
    name: string(),
    role: ref(Role),
    prefix: PATH,
    created_at: timestamp('When it was made.'),
    last_used_at: nullable(timestamp('About when it was last used (to the minute).')),
    last4: string('The last four characters of its secret.'),
    revoked_at: nullable(timestamp('When it was revoked.')),
    trust_id: optional(string('A key minted by POST /drive/token: the trust rule that admitted the token.')),
    subject: optional(string('A minted key: the subject of the token it was minted for.')),
    expires_at: optional(nullable(timestamp('A minted key: when it stops working (401 from then on).'))),
  }),
);
export const KeyList = component('KeyList', object({ keys: array(ref(ApiKey)) }));
export const CreatedKey = component('CreatedKey', object({ key: ref(ApiKey), secret: string('The key\'s secret: shown this once, stored only as a hash.') }));
export const RevokedKey = component('RevokedKey', object({ key: ref(ApiKey) }));
export const TrustRole = component('TrustRole', R.TrustRole);
export const TrustRule = component(
  'TrustRule',
  object({
    id: string('The rule\'s id.', R.KEY_ID),
    issuer: string('The issuer, as its tokens\' `iss` says it.'),
    audience: string('The `aud` its tokens must carry.'),
    subject: string('The `sub` its tokens must carry; `*` matches any run of characters within one `:`-separated segment.'),
    claims: map(string('The value the claim must have, compared as a string.'), 'Other claims its tokens must carry, by name, each with exactly this value.'),
    role: ref(TrustRole),
    prefix: PATH,
    max_ttl_seconds: integer('The longest life of a minted key.', { minimum: 60, maximum: 43_200 }),
    created_at: timestamp('When it was made.'),
    revoked_at: nullable(timestamp('When it was revoked: its keys stopped working then.')),
  }),
);
export const TrustAnswer = component('TrustAnswer', object({ trust: ref(TrustRule) }));
export const TrustList = component('TrustList', object({ trust: array(ref(TrustRule)) }));
export const MintedKey = component(
  'MintedKey',
  object({
    key: string('The key\'s secret, a Bearer key until `expires_at`: shown this once, stored only as a hash.'),
    expires_at: timestamp('When the key stops working (401 from then on).'),
    drive: string('The drive the key belongs to.'),
    role: ref(TrustRole),
    prefix: PATH,
    trust_id: string('The rule that admitted the token.', R.KEY_ID),
  }),
);
export const CreatedLink = component(
  'CreatedLink',
  object({
    id: string('The link\'s id: the SHA-256 of its token.', LINK_ID),
    url: string('Opens the file with no key; its token is shown this once.', { format: 'uri' }),
    path: PATH,
    expires_at: timestamp('When it stops opening.'),
  }),
);
export const Link = component(
  'Link',
  object({
    id: string(undefined, LINK_ID),
    path: PATH,
    created_at: timestamp('When it was made.'),
    expires_at: timestamp('When it stops opening.'),
    created_by: nullable(string('The id of the key that made it.')),
  }),
);
export const LinkList = component('LinkList', object({ links: array(ref(Link)), next_cursor: nullable(string('Pass as `cursor` for the next page; null after the last.')) }));
export const RevokedLink = component('RevokedLink', object({ id: string(undefined, LINK_ID), revoked: constant(true) }));
export const RevokedLinks = component(
  'RevokedLinks',
  object({
    created_by: string('The key whose links were revoked.', R.KEY_ID),
    revoked: integer('Links this page revoked.', { minimum: 0 }),
    next_cursor: nullable(string('Pass as `cursor` to revoke the next page; null after the last.')),
  }),
);

const WEBHOOK_ID = { pattern: '^[0-9a-f]{16}$' };
export const Webhook = component(
  'Webhook',
  object({
    id: string('The webhook\'s id.', WEBHOOK_ID),
    url: string('Where each change is POSTed.', { format: 'uri' }),
    path: PATH,
    types: array(ref(ChangeType)),
    created_at: timestamp('When it was made.'),
  }),
);
export const CreatedWebhook = component('CreatedWebhook', object({ webhook: ref(Webhook), secret: string('The signing secret (`whsec_…`): shown this once.') }));
export const WebhookList = component('WebhookList', object({ webhooks: array(ref(Webhook)) }));
export const DeletedWebhook = component('DeletedWebhook', object({ id: string(undefined, WEBHOOK_ID), deleted: constant(true) }));
export const Delivery = component(
  'Delivery',
  object({
    id: string('The delivery\'s id, `<webhook id>.<change id>`: the `Drive-Delivery-Id` of each of its attempts.'),
    webhook_id: string(undefined, WEBHOOK_ID),
    status: constant('failed'),
    change: ref(Change),
    attempts: integer('How many times it was POSTed.', { minimum: 1 }),
    last_status: nullable(integer('The last attempt\'s HTTP status (null when it got none).')),
    last_error: string('What went wrong with the last attempt.'),
    first_attempt_at: timestamp('When it was first POSTed.'),
    failed_at: timestamp('When it was given up: its last attempt, 24 hours or more after the delivery was queued.'),
  }),
);
export const DeliveryList = component('DeliveryList', object({ deliveries: array(ref(Delivery)) }));

// Requests: declared here, in the document's order; written in request-schemas.ts, which the handlers load.
export const UploadTarget = component('UploadTarget', R.UploadTarget);
export const UploadForm = component('UploadForm', R.UploadForm);
export const CreateFolderRequest = component('CreateFolderRequest', R.CreateFolderRequest);
export const DeleteFilesRequest = component('DeleteFilesRequest', R.DeleteFilesRequest);
export const TransferRequest = component('TransferRequest', R.TransferRequest);
export const StartUploadRequest = component('StartUploadRequest', R.StartUploadRequest);
export const CompleteUploadRequest = component('CompleteUploadRequest', R.CompleteUploadRequest);
export const CreateKeyRequest = component('CreateKeyRequest', R.CreateKeyRequest);
export const CreateLinkRequest = component('CreateLinkRequest', R.CreateLinkRequest);
export const CreateTrustRequest = component('CreateTrustRequest', R.CreateTrustRequest);
export const TokenRequest = component('TokenRequest', R.TokenRequest);
export const CreateWebhookRequest = component('CreateWebhookRequest', R.CreateWebhookRequest);
export const RestoreRequest = component('RestoreRequest', R.RestoreRequest);

/** The TypeScript type of each wire shape, by its component name in the document. */
export type Wire<K extends keyof typeof SHAPES> = Static<(typeof SHAPES)[K]>;
const SHAPES = {
  ErrorCode, ErrorReason, Error: ErrorBody, File, FileEntry, FolderEntry, Folder, Listing, DeletedFolder, DeletedFiles, JobStatus, JobFailure, DeleteJob, MoveJob, CopyJob, RestoreJob, EmptyTrashJob, Job, JobAnswer, ChangeType, Change, ChangesPage, RecentChanges, ChangesCursor, Role, Whoami, PartUrl, DirectDownload,
  UploadSession, PartUrlPage, AbortedUpload, ApiKey, KeyList, CreatedKey, RevokedKey, CreatedLink, Link, LinkList, RevokedLink, RevokedLinks, UploadTarget, UploadForm, CreateFolderRequest, DeleteFilesRequest, TransferRequest,
  StartUploadRequest, CompleteUploadRequest, CreateKeyRequest, CreateLinkRequest, TrustRole, TrustRule, TrustAnswer, TrustList, MintedKey, CreateTrustRequest, TokenRequest,
  Webhook, CreatedWebhook, WebhookList, DeletedWebhook, Delivery, DeliveryList, CreateWebhookRequest,
  TrashItem, TrashUsage, TrashPage, PurgedItem, EmptiedTrash, RestoreRequest,
};

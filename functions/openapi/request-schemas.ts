import { ROLES } from '../core/access';
import { CHANGE_TYPES } from '../core/change-source';
import { TRUST_ROLES } from '../core/trust';
import { array, boolean, enumOf, integer, map, nullMeansAbsent, object, openObject, optional, ref, string } from './schema-kit';

/**
 * What the API takes: each route's JSON body and query, as JSON Schemas with their TypeScript types. The
 * handlers validate their requests against these (functions/http/request-input.ts) and the OpenAPI document
 * publishes them (the bodies as components, declared in functions/openapi/schemas.ts; the queries as each
 * route's parameters). Apart from the answers' schemas, so that a handler loads only what it takes.
 */

/** A key id, as the key routes list it: 16 hex digits. */
export const KEY_ID = { pattern: '^[0-9a-f]{16}$' };
/** A whole number a JavaScript number holds exactly: what the handlers have always taken as a count of bytes or parts. */
const SAFE = Number.MAX_SAFE_INTEGER;
// A media type (RFC 9110 §8.3.1): type/subtype and parameters of tokens or quoted printable ASCII; nothing
// that cannot stand in a header.
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const MEDIA_TYPE = `^${TOKEN}/${TOKEN}([ \\t]*;[ \\t]*${TOKEN}=(${TOKEN}|"[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]*"))*$`;

/** The component `Role` (declared in schemas.ts, where the answers refer to it too). */
export const Role = enumOf(ROLES);

/**
 * An ETag a request names (`if_match`): 1 to 255 characters, quotes optional (Drive's are 32 hex digits and
 * `-<parts>`, older records' a UUID); its form is checked by the handler (`etagOf` in core/upload.ts).
 */
const IF_MATCH_FIELD = (description: string) => string(description, { minLength: 1, maxLength: 255 });

// The upload form (spec 4.1): each property a part of the multipart body, named as it is there. The handler
// takes its part names, its files' bound and the `metadata` part's JSON (`contentSchema`) from here.
/** Where the file at the same index goes; a field sent as null is absent, as the handler has always taken it. */
export const UploadTarget = object(
  {
    path: optional(nullMeansAbsent(string('Where to store the file; wins over `folder` and `name`.'))),
    folder: optional(nullMeansAbsent(string('The folder to store it in, under `name` or else its filename.'))),
    name: optional(nullMeansAbsent(string('Its name: in `folder`, or in the root without one.'))),
    if_match: optional(nullMeansAbsent(IF_MATCH_FIELD('Store it only over the file with this ETag (as the download\'s `ETag` header or a listing\'s `etag` gives it, quotes optional): a file with another ETag there, or none, is `412 precondition_failed`, and nothing of the request is stored. Not with `if_none_match` (400); not for an `upload-only` key (403).'))),
    if_none_match: optional(nullMeansAbsent(enumOf(['*'], 'Store it only where no file stands: a file there is `412 precondition_failed`, and nothing of the request is stored.'))),
  },
  'Where one file of an upload goes: `path`, or `folder` and `name`, or one of them alone; with none, the root under its filename.',
);
/** The `metadata` part's JSON: one target per file, in the files' order. */
export const UploadMetadata = array(ref(UploadTarget, 'UploadTarget'));
export const UploadForm = object({
  files: array(string(undefined, { contentMediaType: 'application/octet-stream', format: 'binary' }), {
    description: 'The files, each a part named "files" with its filename (1 to 1,000).',
    minItems: 1,
    maxItems: 1000,
  }),
  metadata: optional(
    string('A JSON array with one object per file, in order: `{"path"}` or `{"folder", "name"}` or `{"name"}`, each optional.', {
      contentMediaType: 'application/json',
      contentSchema: UploadMetadata,
    }),
  ),
});

// Bodies: each a component of the document, of the name it has there.
// Open: the handler has always let other fields through.
export const CreateFolderRequest = openObject({ path: string('The folder to create, with its parents if missing.') });
export const DeleteFilesRequest = object({ paths: array(string(), { minItems: 1, maxItems: 1000 }) });
export const TransferRequest = object({
  from: string('The file or folder.'),
  to: string('Its new path.'),
  overwrite: optional(boolean('Replace a file at `to` (never a folder). Default false.')),
  if_match: optional(
    nullMeansAbsent(
      IF_MATCH_FIELD('Only if the file at `from` has this ETag (quotes optional): another is `412 precondition_failed`, and nothing is moved or copied. A folder has no ETag: with a folder at `from`, `400`.'),
    ),
  ),
});
export const StartUploadRequest = object({
  path: optional(nullMeansAbsent(string('Where to store the file; or give `folder` and `name`, or `name` alone for the root.'))),
  folder: optional(nullMeansAbsent(string())),
  name: optional(nullMeansAbsent(string())),
  size: integer('The file\'s length in bytes.', { minimum: 1, maximum: SAFE }),
  content_type: optional(nullMeansAbsent(string('Its media type, like "application/zip".', { maxLength: 255, pattern: MEDIA_TYPE }))),
  if_match: optional(
    nullMeansAbsent(
      IF_MATCH_FIELD(
        'Store it only over the file with this ETag (quotes optional), as `POST /drive/upload`\'s `if_match`: checked here (a file with another ETag there, or none, is `412 precondition_failed` before any part is sent), kept in the session, and held by the record\'s write at completion (`412` there too; the session then ends and its parts are deleted). Not with `if_none_match` (400); not for an `upload-only` key (403).',
      ),
    ),
  ),
  if_none_match: optional(
    nullMeansAbsent(
      enumOf(
        ['*'],
        'Store it only where no file stands, as `POST /drive/upload`\'s `if_none_match`: a file there now is `412 precondition_failed`, and one stored there before completion makes the completion `412` (the session then ends and its parts are deleted).',
      ),
    ),
  ),
});
export const CompleteUploadRequest = object({
  parts: array(object({ number: integer(undefined, { minimum: 1, maximum: SAFE }), etag: string('The ETag header the part\'s PUT returned.', { minLength: 1, maxLength: 1024 }) }), { minItems: 1, maxItems: 10000 }),
});
export const CreateKeyRequest = object({
  name: string('A label, 1 to 100 characters.', { minLength: 1, maxLength: 100 }),
  role: optional(nullMeansAbsent(ref(Role, 'Role'))),
  prefix: optional(nullMeansAbsent(string('The folder the key is confined to (default "/").'))),
});
/** The roles a trust rule may grant (never `admin`). */
export const TrustRole = enumOf(TRUST_ROLES);
export const CreateTrustRequest = object({
  issuer: string('The token issuer, exactly as its tokens\' `iss` claim says it: an https URL.', { minLength: 1, maxLength: 1000 }),
  audience: string('The `aud` the tokens must carry.', { minLength: 1, maxLength: 255 }),
  subject: string('The `sub` the tokens must carry: exact, or with `*` matching any run of characters within one `:`-separated segment.', { minLength: 1, maxLength: 255 }),
  claims: optional(nullMeansAbsent(map(string('The value the claim must have, at most 255 characters; a number or boolean the token sends compares as its string.'), 'Other claims the tokens must carry, by name (at most 20, none of iss, aud, sub, exp, nbf, iat), each with exactly this value. A value that is not a string is refused with 422, as a value out of bounds is.'))),
  role: ref(TrustRole, 'TrustRole'),
  prefix: optional(nullMeansAbsent(string('The folder the minted keys are confined to (default "/").'))),
  max_ttl_seconds: optional(nullMeansAbsent(integer('The longest life of a minted key, in seconds (60 to 43,200; default 3,600).', { minimum: 60, maximum: 43_200 }))),
});
export const TokenRequest = object({
  drive: string('The drive whose trust rules to match.', { minLength: 1, maxLength: 64 }),
  token: string('The identity token (a JWT) the job\'s platform issued.', { minLength: 1, maxLength: 16_384 }),
  ttl_seconds: optional(nullMeansAbsent(integer('The key\'s life in seconds: 60 or more; more than the rule\'s `max_ttl_seconds` is cut to it (default: that cap).', { minimum: 60 }))),
});
export const CreateLinkRequest = object({
  path: string('The file to share.'),
  expires_in: optional(nullMeansAbsent(integer('Seconds until it stops opening (default a day, at most 30 days).', { minimum: 1, maximum: 2_592_000 }))),
});
/** The kinds of change (issue 27), the component `ChangeType`. */
export const ChangeType = enumOf(CHANGE_TYPES);
export const CreateWebhookRequest = object({
  url: string('Where each change is POSTed: an https URL (the local host also takes http://127.0.0.1 and http://localhost). Its host must resolve to public addresses only.', { minLength: 1, maxLength: 2048 }),
  path: optional(nullMeansAbsent(string('The folder whose changes it is sent, everything below it included (default "/").'))),
  types: optional(nullMeansAbsent(array(ref(ChangeType, 'ChangeType'), { description: 'The kinds of change it is sent (default: all seven).', minItems: 1, maxItems: 7 }))),
});

// Queries: each property a query parameter of the route (functions/http/routes.ts), with its description.
const FOLDER = string('The folder (default "/").');
const CURSOR = string('The `next_cursor` of the page before.');
export const DownloadQuery = object({
  path: optional(string('The file.')),
  folder: optional(FOLDER),
  name: optional(string('The file\'s name in `folder`.')),
  redirect: optional(
    enumOf(
      ['true', 'false'],
      '"true": answer 307 with a presigned S3 URL of the bytes instead of the bytes (for big files: S3 serves them at its own speed, where a stream through the API slows after 10 MB and stops at 200 MiB). Range and If-Range are then for the URL; If-None-Match and If-Modified-Since may still answer 304.',
    ),
  ),
  redirect_above: optional(
    integer(
      'A size in bytes: a file larger than this is answered as with `redirect=true` (307 to a presigned S3 URL; Range and If-Range are then the URL\'s), any other as the plain download (its bytes, ranges and conditionals, as without this parameter). One request and one `download` token either way, where learning the size first and then asking with `redirect=true` takes two. `0` redirects every file but an empty one. Not with `redirect` (either value): 400.',
      { minimum: 0, maximum: SAFE },
    ),
  ),
});
export const ListQuery = object({
  folder: optional(FOLDER),
  recursive: optional(enumOf(['true', 'false'], 'Everything below the folder, not only its children.')),
  include: optional(enumOf(['etag'], 'Add each file\'s `etag`.')),
  limit: optional(integer('Entries a page (1 to 1,000): pages the listing.', { minimum: 1, maximum: 1000 })),
  cursor: optional(CURSOR),
});
export const ChangesLatestQuery = object({ path: optional(string('The folder whose changes to follow (default "/"); within the key\'s folder.')) });
export const ChangesQuery = object({
  cursor: string('A cursor from GET /drive/changes/latest or the `next_cursor` of the answer before.', { minLength: 1 }),
  limit: optional(integer('Changes an answer (1 to 1,000; default 100).', { minimum: 1, maximum: 1000 })),
  timeout: optional(integer('Seconds to wait for a change when none is waiting (0 to 25; default 0): a long poll.', { minimum: 0, maximum: 25 })),
});
export const ChangesRecentQuery = object({
  path: optional(string('The folder whose recent changes to read (default "/"); within the key\'s folder. With `before`, the folder of that page, or left out.')),
  before: optional(string('The `next_before` of the answer before: the page of older changes it starts.', { minLength: 1 })),
  limit: optional(integer('Changes an answer at most (1 to 100; default 20).', { minimum: 1, maximum: 100 })),
});
export const DeleteFolderQuery = object({ path: string('The folder.', { minLength: 1 }), recursive: optional(enumOf(['true', 'false'], 'Delete what it holds too.')) });
export const DeleteFilesQuery = object({ path: optional(array(string(), { description: 'A file to delete (repeat for more).', maxItems: 1000 })) });
export const PartUrlsQuery = object({
  from: optional(integer('The first part (default 1).', { minimum: 1, maximum: SAFE })),
  limit: optional(integer('URLs a page (1 to 1,000; default 50). A page takes one token of the upload bucket per 50 asked for.', { minimum: 1, maximum: 1000 })),
});
export const LinksQuery = object({
  path: optional(string('Only the links of this file.')),
  created_by: optional(string('Only the links the key with this id made (a page may then hold fewer than `limit`).', KEY_ID)),
  limit: optional(integer('Links a page (1 to 100).', { minimum: 1, maximum: 100 })),
  cursor: optional(CURSOR),
});
// `created_by` is required (the handler says so with a 400), but the 1.0.0 document had it optional.
export const RevokeLinksQuery = object({
  created_by: optional(string('The id of the key whose links to revoke (required).', KEY_ID)),
  limit: optional(integer('Links read a page (1 to 100).', { minimum: 1, maximum: 100 })),
  cursor: optional(CURSOR),
});
export const DeliveriesQuery = object({
  status: optional(enumOf(['failed'], 'Which deliveries: `failed`, those not acknowledged within 24 hours of their first attempt (the only status kept).')),
  limit: optional(integer('Deliveries a page (1 to 100, default 100).', { minimum: 1, maximum: 100 })),
});
export const OpenLinkQuery = object({ download: optional(enumOf(['0', '1'], '"0" to show the file in the browser, "1" (default) to save it.')) });

// The trash (issue 28).
export const TrashQuery = object({
  path: optional(string('Only what was taken from this folder or below it (and a deleted folder above it that held it).')),
  limit: optional(integer('Items a page (1 to 1,000; default 100).', { minimum: 1, maximum: 1000 })),
  cursor: optional(string('The `next_cursor` of the page before.', { minLength: 1 })),
});
export const EmptyTrashQuery = object({ path: string('The folder whose trashed items (at or below it) are purged; `/` for the whole trash.', { minLength: 1 }) });
export const RestoreRequest = object({
  id: string('The trash item\'s id, as GET /drive/trash lists it.', { minLength: 1, maxLength: 64 }),
  to: optional(nullMeansAbsent(string('Where to restore it; by default where it was taken from.'))),
  overwrite: optional(boolean('Replace a file at the destination (which goes to the trash in turn). Default false.')),
});

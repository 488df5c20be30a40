import type { ApiKeyRecord } from '../core/access';
import type { PartUrls } from '../core/large-upload';
import type { ShareLink } from '../core/links';
import type { TrustRule } from '../core/trust';
import type { Job, FileNode, FolderNode, TrashRow } from '../core/ports';
import type { LoggedChange } from '../core/changes/change-log';
import { nameOf } from '../core/paths';
import type { Wire } from '../openapi/schemas';

// Each view returns its wire shape's type, derived from the schema the OpenAPI document has (functions/openapi/schemas.ts).

/** A File as upload returns it (spec section 2). */
export function fileView(file: FileNode, baseUrl: string): Wire<'File'> {
  return {
    id: file.id,
    name: nameOf(file.path),
    path: file.path,
    url: `${baseUrl}/drive/download?path=${encodeQueryValue(file.path)}`,
    size: file.size,
    created_at: file.createdAt,
  };
}

/** A File entry as list returns it: a File without `url`; with `etag` when the client asked for it. */
export function fileEntryView(file: FileNode, options: { etag?: boolean } = {}): Wire<'FileEntry'> {
  const entry = { id: file.id, name: nameOf(file.path), path: file.path, size: file.size, created_at: file.createdAt };
  return options.etag ? { ...entry, etag: file.etag } : entry;
}

/** A Folder entry as list returns it. */
export function folderEntryView(folder: FolderNode): Wire<'FolderEntry'> {
  return { id: folder.id, name: nameOf(folder.path), path: folder.path };
}

/** An API key as the admin routes show it: never its secret or hash. */
export function keyView(key: ApiKeyRecord): Wire<'ApiKey'> {
  return {
    id: key.keyId,
    name: key.name,
    role: key.role,
    prefix: key.prefix,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt ?? null,
    last4: key.last4,
    revoked_at: key.revokedAt ?? null,
    // A minted key's rule, subject and end; an ordinary key's answer is as it always was.
    ...(key.trustId === undefined ? {} : { trust_id: key.trustId, subject: key.subject ?? '', expires_at: key.expiresAt ?? null }),
  };
}

/** A Folder as create returns it. */
export function folderView(folder: FolderNode): Wire<'Folder'> {
  return { id: folder.id, path: folder.path, created_at: folder.createdAt };
}

// Slashes are legal in a query value and keep the URL readable.
function encodeQueryValue(value: string): string {
  return encodeURIComponent(value).replace(/%2F/g, '/');
}

/**
 * A job (an extension of the spec): where it stands, its own URL, and once done the `result` the
 * synchronous answer would have carried (`null` until then): a delete's `{deleted, path, files_deleted}`, a
 * move's or copy's Folder entry at its new path; an empty-trash's `{purged, path, items, files, bytes}`. A move or copy that stopped short has `result: null` and an
 * `error`.
 */
export function jobView(job: Job, baseUrl: string): Wire<'Job'> {
  const common = { id: job.id, status: job.status, created_at: job.createdAt, updated_at: job.updatedAt, url: jobUrl(job, baseUrl) };
  if (job.kind === 'copy') {
    const done = job.status === 'done';
    return {
      ...common,
      type: 'copy-folder' as const,
      path: job.path,
      to: job.to!,
      files_copied: job.files,
      result: done && job.ended !== 'stopped' ? folderEntryView({ kind: 'folder', id: job.toId!, path: job.to!, createdAt: job.createdAt }) : null,
      ...(done && job.ended === 'stopped'
        ? { error: { code: 'conflict', message: `the copy stopped: ${job.path} or ${job.to} was deleted or taken by another request meanwhile; what had been copied is in ${job.to}` } }
        : {}),
    };
  }
  if (job.kind === 'restore') {
    const done = job.status === 'done';
    return {
      ...common,
      type: 'restore-folder' as const,
      path: job.path,
      to: job.to!,
      files_restored: job.files,
      result: done && job.ended !== 'stopped' ? folderEntryView({ kind: 'folder', id: job.toId!, path: job.to!, createdAt: job.toCreatedAt ?? job.createdAt }) : null,
      ...(done && job.ended === 'stopped'
        ? { error: { code: 'conflict', message: `the restore stopped: ${job.to} was deleted or moved by another request meanwhile; what was not restored is still in the trash` } }
        : {}),
    };
  }
  if (job.kind === 'empty-trash') {
    return {
      ...common,
      type: 'empty-trash' as const,
      path: job.path,
      files_purged: job.files,
      result: job.status === 'done' ? { purged: true as const, path: job.path, items: job.items ?? 0, files: job.files, bytes: job.bytes ?? 0 } : null,
    };
  }
  if (job.kind === 'move') {
    const done = job.status === 'done';
    return {
      ...common,
      type: 'move-folder' as const,
      path: job.path,
      to: job.to!,
      files_moved: job.files,
      result: done && job.ended !== 'stopped' ? folderEntryView({ kind: 'folder', id: job.folderId, path: job.to!, createdAt: job.createdAt }) : null,
      ...(done && job.ended === 'stopped'
        ? { error: { code: 'conflict', message: `the move stopped: a path in ${job.to} was taken by another request meanwhile; what had moved is there, the rest is still in ${job.path}` } }
        : {}),
    };
  }
  return {
    ...common,
    type: 'delete-folder' as const,
    path: job.path,
    files_deleted: job.files,
    result: job.status === 'done' ? { deleted: true, path: job.path, files_deleted: job.files } : null,
  };
}

/** Where a client reads the job: `GET /drive/jobs/{id}`. */
export function jobUrl(job: Pick<Job, 'id'>, baseUrl: string): string {
  return `${baseUrl}/drive/jobs/${job.id}`;
}

/** A run of part URLs as the large-upload routes give them: `parts`, and `next_part` (null after the last part). */
export function partUrlsView(parts: PartUrls): Pick<Wire<'UploadSession'>, 'parts' | 'next_part'> {
  return { parts: parts.urls.map((url, i) => ({ number: parts.first + i, url })), next_part: parts.next ?? null };
}

/** A share link as listing shows it: never its token (not stored), nor the key that made it. */
export function linkView(link: ShareLink): Wire<'Link'> {
  return { id: link.id, path: link.path, created_at: link.createdAt, expires_at: new Date(link.expiresAt * 1000).toISOString(), created_by: link.createdBy ?? null };
}

/** A trust rule as the trust routes show it. */
export function trustView(rule: TrustRule): Wire<'TrustRule'> {
  return {
    id: rule.id,
    issuer: rule.issuer,
    audience: rule.audience,
    subject: rule.subject,
    claims: { ...rule.claims },
    role: rule.role,
    prefix: rule.prefix,
    max_ttl_seconds: rule.maxTtlSeconds,
    created_at: rule.createdAt,
    revoked_at: rule.revokedAt ?? null,
  };
}

/** A change as the feed sends it: the file as GET /drive/list gives it (with `etag`), or the folder. */
export function changeView(change: LoggedChange): Wire<'Change'> {
  return {
    id: String(change.position),
    type: change.type,
    path: change.path,
    at: change.at,
    ...(change.from !== undefined ? { from: change.from } : {}),
    ...(change.node.kind === 'file' ? { file: fileEntryView(change.node, { etag: true }) } : { folder: folderEntryView(change.node) }),
  };
}

/** A trash row as GET /drive/trash lists it (docs/trash-design.md, "Listing"). */
export function trashItemView(row: TrashRow): Wire<'TrashItem'> {
  const state = row.state === 'filling' ? 'deleting' : row.purging !== undefined ? 'purging' : row.restoring !== undefined ? 'restoring' : 'trashed';
  return {
    id: row.id,
    type: row.type,
    path: row.path,
    size: row.bytes,
    ...(row.type === 'folder' ? { files: row.files } : {}),
    ...(row.file ? { etag: row.file.etag } : {}),
    deleted_at: row.deletedAt,
    purge_at: row.purgeAt,
    deleted_by: row.deletedBy ?? null,
    reason: row.reason,
    state,
  };
}

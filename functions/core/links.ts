import { randomBytes } from 'node:crypto';
import { type Caller, ROLE_PERMISSIONS, hashSecret, withinPrefix } from './access';
import { mapLimit } from './concurrency';
import { type DriveError, conflict, invalid, notFound } from './errors';
import type { FileNode, NodeStore } from './ports';
import { readVisible } from './visibility';

/**
 * A share link: anyone holding its token may read one file, until it expires or is revoked. The token is
 * never stored; `id` is its SHA-256, which is also the link's key in storage, so the id a client revokes by
 * names the item at once (no index to wait for) while telling nothing that opens the file.
 */
export interface ShareLink {
  /** The SHA-256 of the token, hex. */
  id: string;
  drive: string;
  path: string;
  /** The record id of the file shared: the link dies when the path holds another file, or none. */
  fileId: string;
  /** The record's `movedAt` when the link was made: a move kills the link for good, a move back included. */
  fileMovedAt?: string;
  /** The id of the key that made it (never its secret): shown to the drive's keys, so a leaked key's links can be found. */
  createdBy?: string;
  /**
   * The SHA-256 of that key's secret, which is its key in storage: opening the link reads the key in one
   * GetItem and refuses once it is revoked or no longer reaches the path. Never shown. Absent on links made
   * before links kept it: those open until they expire or are revoked.
   */
  makerKey?: string;
  createdAt: string;
  /** Epoch seconds; also the table's TTL attribute. */
  expiresAt: number;
}

/** Where a page of links resumes: the path and id of the last link the page before held. */
export interface LinkCursor {
  path: string;
  id: string;
}

/** Share links, kept by the SHA-256 of their token. */
export interface LinkStore {
  /** Stores a new link. */
  put(link: ShareLink): Promise<void>;
  /** The link with `id`, read consistently (a revoke is seen at once), or undefined. */
  get(id: string): Promise<ShareLink | undefined>;
  /**
   * Up to `limit` of `drive`'s links in path order, unexpired at `now`: those for `path` exactly, or those
   * under the folder `under` (every one for `/`), after `after`, made by the key `createdBy` if given (a page
   * may then hold fewer than `limit`: the others are read and left out). `next` is set while more may follow. The
   * listing is eventually consistent: a link made a moment ago may be missing for about a second.
   */
  page(
    drive: string,
    filter: { path: string } | { under: string },
    options: { limit: number; after?: LinkCursor; now: Date; createdBy?: string },
  ): Promise<{ links: ShareLink[]; next?: LinkCursor }>;
  /** Deletes the link `id` if it is `drive`'s and its path lies within `prefix`; false if there is no such link. */
  remove(drive: string, id: string, prefix: string): Promise<boolean>;
}

/** How long a link lasts unless asked otherwise (a day), and at most (30 days), in seconds. */
export const DEFAULT_LINK_SECONDS = 24 * 60 * 60;
export const MAX_LINK_SECONDS = 30 * 24 * 60 * 60;

/** A token as this API makes them: 32 random bytes, base64url (43 characters, 256 bits). */
export const LINK_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A link id: the token's SHA-256, hex. */
export const LINK_ID = /^[0-9a-f]{64}$/;

/** The one answer to a link that does not open: which of the reasons is not told to whoever holds the URL. */
export const linkGone = () => notFound('this link does not exist, has expired or was revoked, or its file is gone');

/** The lifetime asked for, in whole seconds: 1 to `MAX_LINK_SECONDS`, default `DEFAULT_LINK_SECONDS`. */
export function linkLifetime(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_LINK_SECONDS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_LINK_SECONDS) throw lifetimeError(value);
  return value;
}

/** The error of an `expires_in` that is not a whole number of seconds from 1 to 30 days. */
export function lifetimeError(value: unknown): DriveError {
  return invalid(`expires_in must be a whole number of seconds from 1 to ${MAX_LINK_SECONDS} (30 days) (got ${JSON.stringify(value)?.slice(0, 40)})`);
}

/**
 * Makes a link to the file at `path` lasting `seconds` from `now`; returns it with its token, which exists
 * only in this answer. Throws `not_found` if no file is there (or a folder above it is being deleted), and
 * `conflict` for a folder.
 */
export async function createLink(
  deps: { nodes: NodeStore; links: LinkStore },
  drive: string,
  path: string,
  seconds: number,
  now: Date,
  /** The key making it: its id, and the SHA-256 of its secret (`ShareLink.makerKey`). */
  maker?: { keyId: string; keyHash: string },
): Promise<{ link: ShareLink; token: string }> {
  const { node, seen } = await readVisible(deps.nodes, drive, path);
  if (node?.kind === 'folder' && seen) throw conflict(`${path} is a folder; a link shares one file`, [path]);
  if (node?.kind !== 'file' || !seen) throw notFound(`no file at ${path}`);
  const token = randomBytes(32).toString('base64url');
  const link: ShareLink = {
    id: hashSecret(token),
    drive,
    path,
    fileId: node.id,
    ...(node.movedAt ? { fileMovedAt: node.movedAt } : {}),
    ...(maker ? { createdBy: maker.keyId, makerKey: maker.keyHash } : {}),
    createdAt: now.toISOString(),
    expiresAt: Math.floor(now.getTime() / 1000) + seconds,
  };
  await deps.links.put(link);
  return { link, token };
}

/** The live link `token` opens at `now` (one consistent read); `linkGone` for a malformed, unknown, revoked or expired one. */
export async function findLink(links: LinkStore, token: string, now: Date): Promise<ShareLink> {
  if (!LINK_TOKEN.test(token)) throw linkGone();
  const link = await links.get(hashSecret(token));
  // TTL removes an expired item within days, not at once: the expiry is checked here.
  if (!link || link.expiresAt * 1000 <= now.getTime()) throw linkGone();
  return link;
}

/**
 * Whether the key that made `link`, as it stands now (undefined once revoked), may still read its file: of
 * the link's drive, a role that downloads, a folder that holds the path. A link shares only what its maker
 * could read, for as long as it could.
 */
export function makerReaches(maker: Caller | undefined, link: ShareLink): boolean {
  return maker !== undefined && maker.drive === link.drive && ROLE_PERMISSIONS[maker.role].includes('download') && withinPrefix(maker, link.path);
}

/** Deletes a revoke of a key's links has in flight at once. */
const REVOKE_CONCURRENCY = 8;

/**
 * Revokes one page of the links of `drive` under `under` that the key `createdBy` made: one read of the
 * listing (at most `limit` links, then those of other keys left out) and a conditional delete of each. Returns
 * how many were revoked and where the next page starts, if more may follow.
 */
export async function revokeLinksBy(
  links: LinkStore,
  drive: string,
  under: string,
  createdBy: string,
  options: { limit: number; after?: LinkCursor; now: Date },
): Promise<{ revoked: number; next?: LinkCursor }> {
  const page = await links.page(drive, { under }, { ...options, createdBy });
  const removed = await mapLimit(page.links, REVOKE_CONCURRENCY, (link) => links.remove(drive, link.id, under));
  return { revoked: removed.filter(Boolean).length, ...(page.next ? { next: page.next } : {}) };
}

/** Whether `file` is still the file `link` was made for: the same record, not one uploaded over it since. */
export function stillShared(link: ShareLink, file: FileNode): boolean {
  return file.id === link.fileId && file.movedAt === link.fileMovedAt;
}

/** The links of `links` whose file is still at its path, as one batched read of the records shows. */
export async function liveLinks(nodes: NodeStore, drive: string, links: readonly ShareLink[]): Promise<ShareLink[]> {
  if (links.length === 0) return [];
  const found = await nodes.getMany(drive, links.map((link) => link.path));
  return links.filter((link) => {
    const node = found.get(link.path);
    return node?.kind === 'file' && stillShared(link, node);
  });
}

import { randomUUID } from 'node:crypto';
import { cleanUp } from './clean-up';
import { contentTypeFor } from './content-type';
import { type Caller, withinPrefix } from './access';
import { DriveError, conflict, invalid, notFound } from './errors';
import { ROOT, nameOf, parentOf } from './paths';
import type { DriveNode, FileNode, FileRecords, JobStore, MultipartStore, NodeStore, ObjectStore, StoredPart, UploadJournal, UploadSession, UploadSessionStore, WriteCondition } from './ports';
import type { TrashPolicy } from './trash';
import { RecordMayStand, RecordTaken, commitFiles, conditionFailed, holds } from './upload';
import { type SessionState, sessionState } from './protocol/states';
import { FolderBeingMoved } from './folders';
import { multipartEtag, partSizeFor, unquote } from './multipart-rules';

const MiB = 1024 * 1024;
/**
 * Part URLs in the start answer; the rest come from `partUrlsPage`, a page at a time. Signing is CPU work
 * (about 0.3 ms a URL) and each URL is about 2 KB with a Lambda role's session token, so neither a start nor
 * a page grows with the file.
 */
export const FIRST_PART_URLS = 100;
/** The most part URLs one page gives. */
export const MAX_PART_URLS_PAGE = 1000;
/** Part URLs a page gives unless asked for more. */
export const DEFAULT_PART_URLS_PAGE = 50;
/**
 * Part URLs signed for one rate-limit token: a page of parts costs one token per this many URLs asked for,
 * so that signing (CPU in the function) is bounded per key and minute, whatever the page size.
 */
export const PART_URLS_PER_TOKEN = 50;
/** The longest a session may last: the bucket's lifecycle rule aborts multipart uploads a day after they start. */
export const MAX_UPLOAD_EXPIRY_SECONDS = 24 * 3600;
/** S3's largest object. */
export const S3_MAX_OBJECT_BYTES = 5 * 1024 * 1024 * MiB;

export interface LargeUploadDeps {
  nodes: NodeStore;
  objects: ObjectStore;
  parts: MultipartStore;
  sessions: UploadSessionStore;
  /** Where a failed completion notes the jobs that remove the folders it made (`removeUnused`). */
  jobs?: JobStore;
  /**
   * With trash on (`trashPolicy`), what a completion replaces goes into the trash (`records`), as an upload's
   * does (its step 7); the journal is what that step and its undo read (trash notes, withdrawn writers).
   */
  records?: FileRecords;
  trashPolicy?: TrashPolicy;
  journal?: UploadJournal;
}

export interface LargeUploadLimits {
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
  /** How long a session (and its part URLs) lasts. */
  expirySeconds: number;
}

/** What a client starts with: where the file goes, how large it is, and optionally its type; and the key starting it. */
export interface LargeUploadRequest {
  path: string;
  size: number;
  contentType?: string;
  /** The id of the key that starts it: the session is that key's (`sessionVisibleTo`). */
  createdBy?: string;
  /** A minted key's rule and subject: keys minted later under both may carry the session on (`sessionVisibleTo`). */
  createdUnder?: { trustId: string; subject: string };
  /**
   * The file's `if_match` / `if_none_match`, as `conditionOf` read it: checked now (a `412` before any part is
   * sent), kept in the session, and held again by the completion (`completeUpload`).
   */
  condition?: WriteCondition;
}

/** Presigned URLs for a run of an upload's parts, from part `first` on, and the part the next run starts at. */
export interface PartUrls {
  first: number;
  urls: string[];
  /** The first part after these; undefined when these reach the last part. */
  next?: number;
}

export interface StartedUpload {
  session: UploadSession;
  /** The first `FIRST_PART_URLS` parts' URLs. */
  parts: PartUrls;
}

/**
 * Opens a multipart upload for a file of `request.size` bytes at `request.path`: refuses a file over the
 * limit (413), a destination a folder or a file above it holds (409), or one whose condition the file there
 * already fails (412, nothing begun), then returns presigned URLs for the first parts. Nothing is listed
 * until `completeUpload`.
 */
export async function startUpload(deps: LargeUploadDeps, drive: string, request: LargeUploadRequest, limits: LargeUploadLimits): Promise<StartedUpload> {
  if (request.size > limits.maxFileBytes) {
    throw new DriveError('payload_too_large', `size ${request.size} is larger than ${limits.maxFileBytes} bytes, the largest file this drive accepts`);
  }
  const fileId = randomUUID();
  await checkDestination(deps.nodes, drive, request.path, request.condition, fileId);

  const now = new Date();
  const partSize = partSizeFor(request.size);
  const contentType = contentTypeFor(nameOf(request.path), request.contentType);
  const objectKey = `${drive}/${fileId}`;
  const multipartId = await deps.parts.begin(objectKey, contentType);
  try {
    const session: UploadSession = {
      id: randomUUID(),
      drive,
      path: request.path,
      size: request.size,
      contentType,
      fileId,
      objectKey,
      multipartId,
      partSize,
      partCount: Math.ceil(request.size / partSize),
      ...(request.createdBy ? { createdBy: request.createdBy } : {}),
      ...(request.createdUnder ? { createdUnder: request.createdUnder } : {}),
      ...(request.condition ? { condition: request.condition } : {}),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + limits.expirySeconds * 1000).toISOString(),
    };
    const parts = await signParts(deps.parts, session, 1, FIRST_PART_URLS, now.getTime());
    await deps.sessions.put(session);
    return { session, parts };
  } catch (error) {
    await cleanUp(() => deps.parts.abort(objectKey, multipartId), () => ({ keys: [objectKey], uploadId: multipartId }));
    throw error;
  }
}

/** Whether the caller may see an upload session; one it may not is answered as one that does not exist. */
export type SessionVisible = (session: UploadSession) => boolean;

/** The one answer to a session that is not there, or not there for this key: which of the two is not told. */
const noSession = (id: string) => notFound(`no upload session ${id} (finished, aborted, expired, or never started)`);

/**
 * URLs for at most `limit` parts of the upload `id` of `drive`, from part `first` on, valid until the session
 * ends: the pages after the start's, or fresh URLs for parts whose URLs a client lost. 404 for no such
 * session (or another drive's, one expired, or one `visible` refuses), 422 for a part the upload does not have.
 */
export async function partUrlsPage(
  deps: Pick<LargeUploadDeps, 'parts' | 'sessions'>,
  drive: string,
  id: string,
  first: number,
  limit: number,
  visible: SessionVisible = () => true,
): Promise<{ session: UploadSession; parts: PartUrls }> {
  const session = await deps.sessions.get(drive, id);
  if (!session || Date.parse(session.expiresAt) <= Date.now() || !visible(session)) throw noSession(id);
  if (first > session.partCount) throw invalid(`from must be a part of this upload, 1 to ${session.partCount} (got ${first})`);
  return { session, parts: await signParts(deps.parts, session, first, limit, Date.now()) };
}

/** Signs parts `first` to at most `first + limit - 1` of `session`, each URL valid until the session expires. */
async function signParts(parts: MultipartStore, session: UploadSession, first: number, limit: number, now: number): Promise<PartUrls> {
  const count = Math.min(limit, session.partCount - first + 1);
  const expiresIn = Math.max(1, Math.floor((Date.parse(session.expiresAt) - now) / 1000));
  const urls = await parts.partUrls(session.objectKey, session.multipartId, first, count, expiresIn);
  const next = first + count;
  return { first, urls, ...(next <= session.partCount ? { next } : {}) };
}

/** How long a completion or abort holds its session: past the function's timeout, so a dead holder's claim lapses. */
export const CLAIM_LEASE_MS = 60_000;

/**
 * Finishes the upload `id` of `drive` with the parts the client sent: checks them against what the object
 * store holds (every part, each of the planned size, ETags matching) and the destination again, assembles
 * the object, confirms its size, then writes the file's record as an upload does. The session ends only
 * when the file is stored or cannot be: a part list or destination the client can fix, or a failure after
 * the object is assembled, keep it, and `complete` may be called again.
 *
 * The session's condition (`if_match` / `if_none_match`) is checked with the destination before assembly and
 * held by the record's write (`commitFiles`, `putFile`'s condition), so a file replaced or made at the path
 * at any moment after the start fails it. A `412` ends the session and deletes its parts or the object
 * assembled from them: nothing of the upload stays, and no retry could meet a condition the session fixes.
 */
export async function completeUpload(
  deps: LargeUploadDeps,
  drive: string,
  id: string,
  sent: readonly { number: number; etag: string }[],
  /** Whether the caller may see the session (another key's is 404, as one that never was). */
  visible: SessionVisible = () => true,
  /** `replace: false`: a file at the path fails the completion instead of being replaced. */
  options: { replace?: boolean } = {},
): Promise<FileNode> {
  const session = await claimSession(deps.sessions, drive, id, visible);
  const condition = conditionAt(session.condition, options.replace);
  let ended = false;
  // Whether a release may remove `recording`: from its mark (set just before a record is written) until the
  // write, and after a commit that withdrew whole, no record of this session stands.
  let recordFree = false;
  const markRecording = async () => {
    recordFree = true;
    await deps.sessions.markRecording(id);
  };
  /** Ends the session for good (its bytes already dealt with). */
  const end = async () => {
    ended = true;
    await cleanUp(() => deps.sessions.remove(id));
  };
  try {
    if (Date.parse(session.expiresAt) <= Date.now()) {
      await discardUpload(deps, session);
      await end();
      throw notFound(`upload session ${id} expired at ${session.expiresAt}; start a new one`);
    }
    const assembled = await assemble(deps, session, sent, condition, markRecording).catch(async (error: unknown) => {
      // Refused before assembly: the parts go with the session.
      if (error instanceof DriveError && error.code === 'precondition_failed') {
        await discardUpload(deps, session);
        await end();
      }
      throw error;
    });
    if (assembled === undefined) {
      await end();
      throw notFound(`upload session ${id} no longer exists in storage; start a new one`);
    }
    const { size, etag, state } = assembled;
    if (state.state === 'assembled' && state.record === 'unknown') {
      // An earlier completion may have stored the file and not ended the session (it died, or the end failed).
      // Its record standing at the path is that outcome; gone, it may have been deleted, moved or replaced since
      // (into the trash, say), so writing it again would bring back what another request took away.
      const standing = await deps.nodes.get(drive, session.path);
      await end();
      if (standing?.kind === 'file' && standing.id === session.fileId) return standing;
      throw conflict(`upload session ${id} was completed before and its file is no longer at ${session.path} (deleted, moved or replaced since, or its completion was cut short); start a new upload to store it again`, [session.path]);
    }
    // Assembled now, or by a completion that left no record; marked `recording` since.
    if (size !== session.size) {
      await cleanUp(() => deps.objects.deleteMany([session.objectKey]), () => ({ keys: [session.objectKey] }));
      await end();
      throw invalid(`the parts hold ${size} bytes, not the ${session.size} this upload was started with; start a new one`);
    }
    const file: FileNode = {
      kind: 'file',
      id: session.fileId,
      path: session.path,
      size,
      contentType: session.contentType,
      createdAt: new Date().toISOString(),
      objectKey: session.objectKey,
      etag,
      // Until the session ends, an expiry may judge its object by this path: no move meanwhile (ports.ts).
      pending: session.id,
    };
    try {
      // The assembled bytes stay on a failure: the session still names them, and a retry commits them.
      await commitFiles(deps, drive, [file], { keepBytes: true, replace: options.replace, conditions: [condition] });
    } catch (error) {
      // Another request took the record this completion wrote: the object is its to free (or to keep, for a
      // writer that may put the record back), and the session ends so that no retry records it again. A move
      // of a folder above is waited out: the object and the session stay for the next try. A failed condition
      // (the write refused it: no record of ours was written) ends it as a conflict does. A record of ours that
      // may stand (`RecordMayStand`) keeps both, and the session stays `recording`: a retry only confirms it.
      if (error instanceof RecordTaken) {
        await end();
      } else if (error instanceof RecordMayStand) {
        recordFree = false;
      } else if (error instanceof DriveError && (error.code === 'precondition_failed' || (error.code === 'conflict' && !(error instanceof FolderBeingMoved)))) {
        await cleanUp(() => deps.objects.deleteMany([session.objectKey]), () => ({ keys: [session.objectKey] }));
        await end();
      }
      throw error;
    }
    await end();
    return file;
  } finally {
    if (!ended) await cleanUp(() => deps.sessions.release(id, recordFree));
  }
}

/** Abandons the upload `id` of `drive`: its parts (or an object assembled but never recorded) are deleted. */
export async function abortUpload(deps: LargeUploadDeps, drive: string, id: string, visible: SessionVisible = () => true): Promise<void> {
  const session = await claimSession(deps.sessions, drive, id, visible);
  try {
    await discardUpload(deps, session);
  } catch (error) {
    await cleanUp(() => deps.sessions.release(id));
    throw error;
  }
  await deps.sessions.remove(id);
}

/**
 * Deletes what `session` left in the object store that no record can name: the multipart upload and its
 * parts. An object a completion assembled stays: a completion that stored the file and then failed to end its
 * session (a clean-up) answered 200, and its file may since have gone into the trash, been put back by another
 * writer's walk (naming that writer's journal entry in `pending`, not the session) or moved, where nothing here
 * can tell that the object is still named. The scheduled consistency check deletes it once nothing names it,
 * as it does one whose session expired (docs/large-files.md).
 */
export async function discardUpload(deps: Pick<LargeUploadDeps, 'parts'>, session: UploadSession): Promise<void> {
  await deps.parts.abort(session.objectKey, session.multipartId);
}

/**
 * Which sessions `caller` may see: those its key started (within its folder), or any of its drive for an
 * admin key. A session from before sessions named their key is seen by any key whose folder holds its path.
 * A session a minted key started is also seen by a key minted under the same trust rule for the same token
 * subject: a job that exchanges its token again mid-upload holds a new key but is the same job.
 * To any other key a session does not exist: not even a `403` tells it one is there.
 */
export function sessionVisibleTo(caller: Pick<Caller, 'keyId' | 'role' | 'prefix' | 'trustId' | 'subject'>): SessionVisible {
  const sameJob = (under: UploadSession['createdUnder']) => under !== undefined && under.trustId === caller.trustId && under.subject === caller.subject;
  return (session) =>
    caller.role === 'admin' || (withinPrefix(caller, session.path) && ((session.createdBy ?? caller.keyId) === caller.keyId || sameJob(session.createdUnder)));
}

/** Who starts a session: the key, and for a minted key its rule and subject (`sessionVisibleTo`). */
export function sessionOwner(caller: Pick<Caller, 'keyId' | 'trustId' | 'subject'>): Pick<LargeUploadRequest, 'createdBy' | 'createdUnder'> {
  return {
    createdBy: caller.keyId,
    ...(caller.trustId !== undefined && caller.subject !== undefined ? { createdUnder: { trustId: caller.trustId, subject: caller.subject } } : {}),
  };
}

/**
 * Claims the session `id` of `drive` for a completion or abort. A session the caller may not see is read
 * first and refused before any claim: a claim would tell its holder's `409` apart, and hold the owner off.
 */
async function claimSession(sessions: UploadSessionStore, drive: string, id: string, visible: SessionVisible): Promise<UploadSession> {
  const seen = await sessions.get(drive, id);
  if (!seen || !visible(seen)) throw noSession(id);
  const claimed = await sessions.claim(drive, id, CLAIM_LEASE_MS);
  if (!claimed) throw noSession(id);
  if (claimed === 'busy') throw new DriveError('conflict', `upload session ${id} is being completed or aborted by another request; wait for it, or try again in a minute`, {}, 'upload_busy');
  return claimed;
}

/**
 * The condition a completion holds: the session's, but for a key that may not replace (`upload-only`), whose
 * `if_none_match` asks nothing more than its writes always do (its refusal stays the `409` it was), as on
 * `POST /drive/upload` (`conditionOf`).
 */
function conditionAt(condition: WriteCondition | undefined, replace: boolean | undefined): WriteCondition | undefined {
  return replace === false && condition && 'ifNoneMatch' in condition ? undefined : condition;
}

/**
 * The size and content hash of the object `session` assembles, and the session's state as found
 * (`sessionState`): checks the client's list and the destination (and `condition`), then has the store
 * assemble the parts it holds (with its own ETags). If the upload is gone from the store, an earlier attempt
 * assembled it: that object's, or undefined if there is none. Unless that state is `unknown` (no record will be
 * written), `markRecording` runs beside the read of the object: the mark stands before any record's write.
 */
async function assemble(
  deps: LargeUploadDeps,
  session: UploadSession,
  sent: readonly { number: number; etag: string }[],
  condition: WriteCondition | undefined,
  markRecording: () => Promise<void>,
): Promise<{ size: number; etag: string; state: SessionState } | undefined> {
  const stored = await deps.parts.listParts(session.objectKey, session.multipartId);
  if (!stored) {
    const state = sessionState(false, session);
    const head = state.state === 'assembled' && state.record === 'unknown' ? await deps.parts.head(session.objectKey) : await beside(deps.parts.head(session.objectKey), markRecording());
    return head && { ...head, state };
  }
  const parts = checkParts(session, sent, stored);
  await checkDestination(deps.nodes, session.drive, session.path, condition, session.fileId);
  const outcome = await deps.parts.complete(session.objectKey, session.multipartId, parts);
  if (outcome === 'rejected') throw invalid('storage refused the parts: one was uploaded again after this request checked them; complete again with its new ETag');
  const head = await beside(deps.parts.head(session.objectKey), markRecording());
  return head && { size: head.size, etag: multipartEtag(parts), state: sessionState(true, session) };
}

/** `first`'s value once `second` has settled too (a failure of either thrown after both): nothing left in flight. */
async function beside<T>(first: Promise<T>, second: Promise<unknown>): Promise<T> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return a.value;
}

/** Checks the client's part list against the session's plan and the parts storage holds; returns those, in order. */
function checkParts(session: UploadSession, sent: readonly { number: number; etag: string }[], stored: readonly StoredPart[]): StoredPart[] {
  const byNumber = new Map(stored.map((part) => [part.number, part]));
  const seen = new Set<number>();
  sent.forEach((part, i) => {
    if (part.number > session.partCount) throw invalid(`parts[${i}].number is ${part.number}, but this upload has ${session.partCount} parts`);
    if (seen.has(part.number)) throw invalid(`parts[${i}].number ${part.number} is listed twice`);
    seen.add(part.number);
    const held = byNumber.get(part.number);
    if (!held) throw invalid(`part ${part.number} (parts[${i}]) has not been uploaded`);
    if (unquote(held.etag) !== unquote(part.etag)) {
      throw invalid(`parts[${i}].etag does not match part ${part.number} as stored; send the ETag its upload returned, or upload it again`);
    }
    const expected = part.number < session.partCount ? session.partSize : session.size - session.partSize * (session.partCount - 1);
    if (held.size !== expected) throw invalid(`part ${part.number} holds ${held.size} bytes; it must hold ${expected} (part_size ${session.partSize}, size ${session.size})`);
  });
  const missing = Array.from({ length: session.partCount }, (_, i) => i + 1).filter((n) => !seen.has(n));
  if (missing.length > 0) throw invalid(`parts is missing ${missing.length === 1 ? 'part' : 'parts'} ${summarize(missing)}; list every part, 1 to ${session.partCount}`);
  return [...sent].sort((a, b) => a.number - b.number).map((part) => byNumber.get(part.number)!);
}

/**
 * Refuses a destination that a folder holds (409) or that lies below a file (409), reading upwards until a
 * folder (or the root) vouches for everything above it, then one whose file fails `condition` (412, as
 * `POST /drive/upload` words it; the file with id `fileId`, the upload's own record, passes). No call is
 * added for the condition: it is judged on the read of the destination. The write at completion checks again.
 */
async function checkDestination(nodes: NodeStore, drive: string, path: string, condition?: WriteCondition, fileId = ''): Promise<void> {
  const node: DriveNode | undefined = await nodes.get(drive, path);
  if (node?.kind === 'folder') throw conflict(`${path} is a folder, so a file cannot be stored there`, [path]);
  for (let folder = parentOf(path); folder !== ROOT; folder = parentOf(folder)) {
    const above = await nodes.get(drive, folder);
    if (above?.kind === 'folder') break;
    if (above) throw conflict(`${folder} is a file, so nothing can be stored below it`, [folder]);
  }
  if (!holds(condition, node, fileId)) throw conditionFailed([path], [condition], [0]);
}

function summarize(numbers: number[]): string {
  return numbers.length <= 10 ? numbers.join(', ') : `${numbers.slice(0, 10).join(', ')} and ${numbers.length - 10} more`;
}

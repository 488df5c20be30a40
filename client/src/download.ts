import { ContentEtagHash, etagForm, partsOf } from './content-etag';
import { DriveError, abortReason, errorFromResponse } from './errors';
import type { Transport } from './transport';
import { discard } from './transport';
import type { DirectDownload } from './types';

/** A file being downloaded: its bytes as a stream, and what its headers say. */
export interface Download {
  /** The file's bytes; a connection lost midway is resumed where it stopped (`Range` + `If-Range`). */
  body: ReadableStream<Uint8Array>;
  size: number;
  /** The `ETag` header, quotes included. */
  etag: string;
  contentType: string | undefined;
  lastModified: string | undefined;
  /** The bytes come straight from S3 by a presigned URL (the download route's `307`), not through the API. */
  direct: boolean;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Times a lost connection is resumed before the stream fails. Default 5. */
  maxResumes?: number;
  /**
   * A file larger than this is read straight from S3 by a presigned URL instead of through the API, whose
   * stream slows after 10 MB in AWS: the first request carries `redirect_above`, so the API answers such a
   * file with the URL and any other with its bytes, one request either way. Default: the client's
   * `directDownloadBytes`; `Infinity` (or none) reads every file through the API.
   */
  directAbove?: number;
}

/**
 * Opens a download of the file at `path`. Downloads are reads, so every attempt is safe to repeat; a body
 * cut off midway is resumed from the next byte with `If-Range` on the first answer's ETag, so the pieces
 * are one version of the file, and a file replaced meanwhile fails the stream (`changed_during_download`)
 * rather than mixing versions. With `directAbove`, the one request carries `redirect_above`: the API answers
 * a larger file with the `307` of a presigned URL, read straight from S3, and any other with its bytes.
 */
export async function openDownload(transport: Transport, path: string, options: DownloadOptions = {}): Promise<Download> {
  const { signal } = options;
  const maxResumes = options.maxResumes ?? 5;
  const url = transport.url('/drive/download', { path });
  const above = redirectAbove(options.directAbove);
  // The first request asks for the redirect only above the threshold; a resume asks for bytes, whatever the size.
  const first = above === undefined ? url : transport.url('/drive/download', { path, redirect_above: above });
  const { response } = await transport.send({ method: 'GET', url: first, bucket: 'download', signal, ...(above === undefined ? {} : { redirect: 'manual' as const }) });
  if (response.status === 307) return openDirectDownload(transport, path, options, await linkOf(response, path, `GET /drive/download?redirect_above=${above} of ${path}`));
  if (!response.ok) throw await errorFromResponse(response, `GET /drive/download of ${path}`);
  const length = response.headers.get('content-length');
  const size = length === null ? NaN : Number(length);
  const etag = response.headers.get('etag') ?? '';

  /** The rest of the same version from `offset` on: `Range` pinned by `If-Range`, so a replaced file answers 200. */
  const resume = async (offset: number): Promise<Reader> => {
    const again = await transport.send({ method: 'GET', url, bucket: 'download', headers: { Range: `bytes=${offset}-`, 'If-Range': etag }, signal });
    const res = again.response;
    if (res.status === 206 && res.headers.get('content-range')?.startsWith(`bytes ${offset}-`)) return readerOf(res);
    if (res.status === 200) {
      await discard(res);
      throw new DriveError('changed_during_download', `${path} was replaced while it was being downloaded; download it again`, 200);
    }
    throw await errorFromResponse(res, `GET /drive/download of ${path} from byte ${offset}`);
  };

  // Without an ETag there is nothing to pin a resume to: a break fails the stream.
  const body = resumableBody(path, readerOf(response), size, resume, { signal, maxResumes: etag ? maxResumes : 0 });
  return {
    body,
    size,
    etag,
    contentType: response.headers.get('content-type') ?? undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
    direct: false,
  };
}

/** `directAbove` as the `redirect_above` the API takes, or undefined where no file can be above it (`Infinity`). */
function redirectAbove(directAbove: number | undefined): string | undefined {
  if (directAbove === undefined || !(directAbove < Number.MAX_SAFE_INTEGER)) return undefined;
  return String(Math.max(0, Math.floor(directAbove)));
}

/** `GET /drive/download?redirect=true`: the key's role, folder and rate limit checked, a presigned URL of the file's bytes. */
export async function directDownloadOf(transport: Transport, path: string, signal?: AbortSignal): Promise<DirectDownload> {
  const url = transport.url('/drive/download', { path, redirect: 'true' });
  // Not followed: the URL is S3's, and takes no API key.
  const { response } = await transport.send({ method: 'GET', url, bucket: 'download', redirect: 'manual', signal });
  const what = `GET /drive/download?redirect=true of ${path}`;
  if (response.status !== 307) {
    if (response.ok) await discard(response);
    throw response.ok ? new DriveError('unexpected_response', `${what} answered ${response.status}, not 307`, response.status) : await errorFromResponse(response, what);
  }
  return linkOf(response, path, what);
}

/** The presigned URL a `307` of the download route gives (`what` names the request), checked to be of the file asked for. */
async function linkOf(response: Response, path: string, what: string): Promise<DirectDownload> {
  const link = ((await response.json()) as { data: DirectDownload }).data;
  // The API answers with the path's canonical form (NFC, functions/core/paths.ts), so a name given in NFD, as
  // macOS gives them, is the same file. The check stays: an answer for another file is a broken server or proxy.
  if (link.path !== path.normalize('NFC') || typeof link.url !== 'string' || !Number.isInteger(link.size)) {
    throw new DriveError('unexpected_response', `${what} answered a URL of ${link.path}`, 307);
  }
  return link;
}

/**
 * Reads the file at `path` straight from S3: `link`, a presigned URL from the API, by a GET with `If-Match` on
 * the ETag the API authorised, so S3 serves those bytes or none. The answer's length and ETag must be the
 * authorised ones, and the bytes must hash to that ETag (MD5, or S3's multipart form) when the stream ends.
 * A connection lost midway resumes from the next byte with a fresh URL (the last may have expired), provided
 * the file is still that version; otherwise the stream fails with `changed_during_download`.
 */
async function openDirectDownload(transport: Transport, path: string, options: DownloadOptions, link: DirectDownload): Promise<Download> {
  const { signal } = options;
  const maxResumes = options.maxResumes ?? 5;
  const { size } = link;
  const form = etagForm(link.etag);
  // A record from before content hashes carries its id, which S3's ETag is not: size and key pin it then.
  const pinned = form === 'none' ? undefined : `"${link.etag}"`;
  const hash = form === 'none' ? undefined : new ContentEtagHash(size, form, partsOf(link.etag));
  const replaced = (status: number) => new DriveError('changed_during_download', `${path} was replaced or deleted while it was being downloaded; download it again`, status);

  /** A fresh URL of the same version, or `changed_during_download` if the record now names another. */
  const fresh = async (): Promise<string> => {
    const again = await directDownloadOf(transport, path, signal);
    if (again.etag !== link.etag || again.size !== size) throw replaced(307);
    return again.url;
  };

  /**
   * GETs `url` from `offset` on; the answer must be the authorised version's bytes from there. A URL storage
   * refuses (`403`: the signing credentials expired before the URL did) is replaced by a fresh one, once: a
   * fresh URL refused too is an error, not a loop.
   */
  const read = async (url: string, offset: number, refreshed = false): Promise<Response> => {
    const headers: Record<string, string> = { ...(pinned ? { 'If-Match': pinned } : {}), ...(offset > 0 ? { Range: `bytes=${offset}-` } : {}) };
    const { response } = await transport.send({ method: 'GET', url, headers, signal });
    if (response.status === 403) {
      if (!refreshed) {
        await discard(response);
        return read(await fresh(), offset, true);
      }
      const refused = await errorFromResponse(response, `GET of ${path} from storage${offset > 0 ? ` from byte ${offset}` : ''}`);
      throw new DriveError('unexpected_response', `storage refused a fresh URL of ${path} right after refusing the last one (403), so it was not an expired URL; ${refused.message}`, 403);
    }
    // 412: the key holds other bytes than those authorised; 404: they were deleted (the file replaced or removed).
    if (response.status === 412 || response.status === 404) {
      await discard(response);
      throw replaced(response.status);
    }
    const whole = offset === 0 && response.status === 200;
    const rest = offset > 0 && response.status === 206 && response.headers.get('content-range') === `bytes ${offset}-${size - 1}/${size}`;
    if (!whole && !rest) throw await errorFromResponse(response, `GET of ${path} from storage${offset > 0 ? ` from byte ${offset}` : ''}`);
    const length = Number(response.headers.get('content-length'));
    const etag = response.headers.get('etag');
    if (length !== size - offset || (pinned !== undefined && etag !== pinned)) {
      await response.body?.cancel().catch(() => undefined);
      throw new DriveError('unexpected_response', `storage answered ${length} bytes under ETag ${etag} for ${path}; the API authorised ${size - offset} under ${pinned ?? 'its key'}`, response.status);
    }
    return response;
  };

  let first: Response;
  try {
    first = await read(link.url, 0);
  } catch (error) {
    if (!(error instanceof DriveError && error.code === 'changed_during_download' && error.status === 412)) throw error;
    // Drive never rewrites a key, so storage refusing the If-Match while the record still names this version
    // means the object was stored under another ETag than Drive recorded (a local data dir from before the
    // local S3 gave assembled objects S3's `-N` form). Nothing is read yet, so the API's stream, which serves
    // the record's bytes under the record's ETag, reads it instead. A record that moved on: the file was replaced.
    const again = await directDownloadOf(transport, path, signal);
    if (again.etag !== link.etag || again.size !== size) throw error;
    return openDownload(transport, path, { ...options, directAbove: undefined });
  }
  const body = resumableBody(path, readerOf(first), size, async (offset) => readerOf(await read(await fresh(), offset)), {
    signal,
    maxResumes,
    seen: (chunk) => hash?.update(chunk),
    ended: () => {
      const computed = hash?.digest();
      if (computed !== undefined && computed !== link.etag) {
        throw new DriveError('unexpected_response', `the ${size} bytes of ${path} read from storage hash to ${computed}, not to their ETag ${link.etag}`, 200);
      }
    },
  });
  return {
    body,
    size,
    etag: `"${link.etag}"`,
    contentType: first.headers.get('content-type') ?? undefined,
    lastModified: first.headers.get('last-modified') ?? undefined,
    direct: true,
  };
}

type Reader = ReadableStreamDefaultReader<Uint8Array>;

/**
 * The body of a download of `size` bytes (NaN: unknown, and the body's end is the file's), read from `reader`.
 * A read that fails, or a body that ends short, is resumed from the next byte by `resume(offset)`, which
 * gives a reader of the rest or throws why there is none; after `maxResumes` of them (or once `signal` is
 * aborted) the stream fails. `seen` sees each chunk in order; `ended` may still fail the stream at its end.
 */
function resumableBody(
  path: string,
  reader: Reader,
  size: number,
  resume: (offset: number) => Promise<Reader>,
  options: { signal?: AbortSignal; maxResumes: number; seen?: (chunk: Uint8Array) => void; ended?: () => void },
): ReadableStream<Uint8Array> {
  const { signal, maxResumes, seen, ended } = options;
  let offset = 0;
  let resumes = 0;
  const resumeAfter = async (cause: unknown) => {
    if (signal?.aborted) throw abortReason(signal);
    if (resumes++ >= maxResumes) throw new DriveError('network_error', `download of ${path} broke off at byte ${offset} of ${size}`, 0, { cause });
    reader = await resume(offset);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        let chunk: Awaited<ReturnType<Reader['read']>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          await resumeAfter(error);
          continue;
        }
        if (chunk.done) {
          if (offset < size) {
            await resumeAfter(new Error(`the body ended after ${offset} of ${size} bytes`));
            continue;
          }
          ended?.();
          return controller.close();
        }
        offset += chunk.value.length;
        seen?.(chunk.value);
        return controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function readerOf(response: Response): Reader {
  const body = response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  return body.getReader();
}

import { DriveError, abortReason, errorFromResponse } from './errors';
import type { Transport } from './transport';
import { discard } from './transport';

/** A file being downloaded: its bytes as a stream, and what its headers say. */
export interface Download {
  /** The file's bytes; a connection lost midway is resumed where it stopped (`Range` + `If-Range`). */
  body: ReadableStream<Uint8Array>;
  size: number;
  /** The `ETag` header, quotes included. */
  etag: string;
  contentType: string | undefined;
  lastModified: string | undefined;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Times a lost connection is resumed before the stream fails. Default 5. */
  maxResumes?: number;
}

/**
 * Opens a download of the file at `path`. Downloads are reads, so every attempt is safe to repeat; a body
 * cut off midway is resumed from the next byte with `If-Range` on the first answer's ETag, so the pieces
 * are one version of the file, and a file replaced meanwhile fails the stream (`changed_during_download`)
 * rather than mixing versions.
 */
export async function openDownload(transport: Transport, path: string, options: DownloadOptions = {}): Promise<Download> {
  const { signal } = options;
  const maxResumes = options.maxResumes ?? 5;
  const url = transport.url('/drive/download', { path });
  const { response } = await transport.send({ method: 'GET', url, bucket: 'download', signal });
  if (!response.ok) throw await errorFromResponse(response, `GET /drive/download of ${path}`);
  const length = response.headers.get('content-length');
  const size = length === null ? NaN : Number(length);
  const etag = response.headers.get('etag') ?? '';
  let reader = readerOf(response);
  let offset = 0;
  let resumes = 0;

  const resume = async (cause: unknown) => {
    if (signal?.aborted) throw abortReason(signal);
    if (resumes++ >= maxResumes || !etag) throw new DriveError('network_error', `download of ${path} broke off at byte ${offset} of ${size}`, 0, { cause });
    const again = await transport.send({ method: 'GET', url, bucket: 'download', headers: { Range: `bytes=${offset}-`, 'If-Range': etag }, signal });
    const res = again.response;
    if (res.status === 206 && res.headers.get('content-range')?.startsWith(`bytes ${offset}-`)) {
      reader = readerOf(res);
      return;
    }
    if (res.status === 200) {
      await discard(res);
      throw new DriveError('changed_during_download', `${path} was replaced while it was being downloaded; download it again`, 200);
    }
    throw await errorFromResponse(res, `GET /drive/download of ${path} from byte ${offset}`);
  };

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          await resume(error);
          continue;
        }
        if (chunk.done) {
          if (offset >= size || !Number.isFinite(size)) return controller.close();
          await resume(new Error(`the body ended after ${offset} of ${size} bytes`));
          continue;
        }
        offset += chunk.value.length;
        return controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return {
    body,
    size,
    etag,
    contentType: response.headers.get('content-type') ?? undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
  };
}

function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  const body = response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  return body.getReader();
}

import { createHash } from 'node:crypto';
import { Drive } from '../../src/drive';
import { DriveError } from '../../src/errors';
import { FakeClock, type SeenRequest, fakeFetch, jsonResponse, redirects } from '../support/fakes';

const content = Buffer.from('direct bytes from storage, straight from S3 at its own speed');
const MD5 = createHash('md5').update(content).digest('hex');
const STORAGE = 'http://s3.test/bucket/d/6f1c2a4e';

/** A body that sends `bytes` and then breaks, as a dropped connection does. */
function breakingBody(bytes: Buffer): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new TypeError('terminated'));
      sent = true;
      controller.enqueue(new Uint8Array(bytes));
    },
  });
}

interface Server {
  /** The file's bytes as storage holds them, and the ETag the API authorises (by the API answer's index). */
  stored?: Buffer;
  etagAt?: (i: number) => string;
  /** Storage answers: break the i-th storage body after this many bytes. */
  cutAt?: number[];
  /** A storage status to answer instead of the bytes. */
  storageStatus?: number;
}

/** The API (the plain download, redirect=true and redirect_above) and storage, as one fetch. */
function serve(server: Server = {}) {
  const stored = server.stored ?? content;
  let apiCalls = 0;
  let storageCalls = 0;
  return fakeFetch((request: SeenRequest) => {
    if (request.url.origin === 'http://drive.test') {
      const i = apiCalls++;
      const etag = server.etagAt?.(i) ?? MD5;
      if (redirects(request.url, content.length)) {
        const url = `${STORAGE}?X-Amz-Signature=${i}`;
        const data = { url, expires_at: '2026-03-02T09:35:00.000Z', path: request.url.searchParams.get('path'), size: content.length, etag, content_type: 'text/plain' };
        return jsonResponse(307, { data }, { Location: url, 'RateLimit-Limit': '500', 'RateLimit-Remaining': '400', 'RateLimit-Reset': '1' });
      }
      return new Response(new Uint8Array(content), { status: 200, headers: { ETag: `"${etag}"`, 'Content-Length': String(content.length), 'Content-Type': 'text/plain' } });
    }
    const i = storageCalls++;
    if (server.storageStatus) return new Response('<Error><Code>PreconditionFailed</Code></Error>', { status: server.storageStatus, headers: { 'Content-Type': 'application/xml' } });
    const ifMatch = request.headers.get('if-match');
    if (ifMatch !== null && ifMatch !== `"${createHash('md5').update(stored).digest('hex')}"`) return new Response('<Error><Code>PreconditionFailed</Code></Error>', { status: 412 });
    const range = /^bytes=(\d+)-$/.exec(request.headers.get('range') ?? '');
    const from = range ? Number(range[1]) : 0;
    const rest = stored.subarray(from);
    const cut = server.cutAt?.[i];
    const headers: Record<string, string> = { ETag: `"${createHash('md5').update(stored).digest('hex')}"`, 'Content-Length': String(rest.length), 'Content-Type': 'text/plain' };
    if (from > 0) headers['Content-Range'] = `bytes ${from}-${stored.length - 1}/${stored.length}`;
    return new Response(cut === undefined ? new Uint8Array(rest) : breakingBody(rest.subarray(0, cut)), { status: from > 0 ? 206 : 200, headers });
  });
}

const driveWith = (fetcher: typeof fetch, directDownloadBytes = 10) => new Drive({ baseUrl: 'http://drive.test', apiKey: 'k', fetch: fetcher, clock: new FakeClock(), directDownloadBytes });

async function read(body: ReadableStream<Uint8Array>): Promise<Buffer> {
  return Buffer.from(await new Response(body).arrayBuffer());
}

describe('Class: Drive, direct downloads (redirect=true)', () => {
  it('reads a file over directDownloadBytes from storage, with If-Match on the authorised ETag and no API key', async () => {
    // Prepare
    const fetcher = serve();

    // Act
    const download = await driveWith(fetcher).download('/f.txt');
    const bytes = await read(download.body);

    // Assess
    expect(bytes.equals(content)).toBe(true);
    expect(download).toMatchObject({ size: content.length, etag: `"${MD5}"`, contentType: 'text/plain', direct: true });
    // One request to the API, which decided on the size it read: the URL came in the answer to it.
    const [api, storage] = fetcher.requests;
    expect([api.url.searchParams.get('redirect_above'), api.url.searchParams.get('redirect')]).toEqual(['10', null]);
    expect(storage.url.href).toBe(`${STORAGE}?X-Amz-Signature=0`);
    expect([storage.headers.get('if-match'), storage.headers.get('authorization')]).toEqual([`"${MD5}"`, null]);
    expect(fetcher.requests).toHaveLength(2);
  });

  it('reads a file at or under directDownloadBytes through the API, in one request that offered the redirect', async () => {
    const fetcher = serve();
    const download = await driveWith(fetcher, content.length).download('/f.txt');
    expect((await read(download.body)).equals(content)).toBe(true);
    expect(download.direct).toBe(false);
    expect(fetcher.requests.map((request) => request.url.searchParams.get('redirect_above'))).toEqual([String(content.length)]);
  });

  it('offers no redirect with directDownloadBytes Infinity, and sends a fractional or negative one as a whole number of bytes', async () => {
    const sent = async (directDownloadBytes: number) => {
      const fetcher = serve();
      await read((await driveWith(fetcher, directDownloadBytes).download('/f.txt')).body);
      return fetcher.requests[0].url.searchParams.get('redirect_above');
    };
    expect([await sent(Infinity), await sent(12.9), await sent(-5)]).toEqual([null, '12', '0']);
  });

  it('reads a big file through the API when the server answers redirect_above with the bytes (one that does not know it)', async () => {
    // Prepare: the API of before redirect_above, which ignores a query parameter it does not know.
    const fetcher = fakeFetch((request) => {
      if (request.url.origin === 'http://s3.test') throw new Error('no URL was given, so storage is not asked');
      return new Response(new Uint8Array(content), { status: 200, headers: { ETag: `"${MD5}"`, 'Content-Length': String(content.length) } });
    });

    // Act
    const download = await driveWith(fetcher).download('/f.txt');

    // Assess
    expect((await read(download.body)).equals(content)).toBe(true);
    expect(download.direct).toBe(false);
    expect(fetcher.requests).toHaveLength(1);
  });

  it('refuses the URL of another file than the one asked for (unexpected_response)', async () => {
    const fetcher = fakeFetch(() => jsonResponse(307, { data: { url: STORAGE, expires_at: '2026-03-02T09:35:00.000Z', path: '/other.txt', size: content.length, etag: MD5, content_type: 'text/plain' } }, { Location: STORAGE }));
    await expect(driveWith(fetcher).download('/f.txt')).rejects.toMatchObject({ code: 'unexpected_response', message: 'GET /drive/download?redirect_above=10 of /f.txt answered a URL of /other.txt' });
    expect(fetcher.requests).toHaveLength(1);
  });

  it('resumes a storage body that breaks off with a fresh URL, from the next byte, still pinned by If-Match', async () => {
    const fetcher = serve({ cutAt: [10, 7] });
    const download = await driveWith(fetcher).download('/f.txt');
    expect((await read(download.body)).equals(content)).toBe(true);
    const storage = fetcher.requests.filter((request) => request.url.origin === 'http://s3.test');
    expect(storage.map((request) => [request.url.searchParams.get('X-Amz-Signature'), request.headers.get('range'), request.headers.get('if-match')])).toEqual([
      ['0', null, `"${MD5}"`],
      ['1', 'bytes=10-', `"${MD5}"`],
      ['2', 'bytes=17-', `"${MD5}"`],
    ]);
  });

  it('fails with changed_during_download when a resume finds the file replaced', async () => {
    // API answer 0 is the first URL's; by answer 1, the fresh URL's, the record names another version.
    const fetcher = serve({ cutAt: [10], etagAt: (i) => (i < 1 ? MD5 : 'ffffffffffffffffffffffffffffffff') });
    const download = await driveWith(fetcher).download('/f.txt');
    await expect(read(download.body)).rejects.toMatchObject({ code: 'changed_during_download' });
  });

  it('fails with changed_during_download when storage refuses the If-Match (412) or has no such key (404)', async () => {
    // 412: the record names another version by the time the client asks again (API answer 0: the old one).
    const replaced = serve({ storageStatus: 412, etagAt: (i) => (i < 1 ? MD5 : 'ffffffffffffffffffffffffffffffff') });
    await expect(driveWith(replaced).download('/f.txt')).rejects.toMatchObject({ code: 'changed_during_download', status: 412 });
    await expect(driveWith(serve({ storageStatus: 404 })).download('/f.txt')).rejects.toMatchObject({ code: 'changed_during_download', status: 404 });
  });

  it('reads through the API when storage refuses the If-Match (412) but the record still names that version', async () => {
    // Storage holds the object under another ETag than Drive recorded (an older local data dir): not a replacement.
    const download = await driveWith(serve({ storageStatus: 412 })).download('/f.txt');
    expect(download).toMatchObject({ etag: `"${MD5}"`, direct: false });
    expect((await read(download.body)).equals(content)).toBe(true);
  });

  it('fails the stream when the bytes do not hash to the authorised ETag, though S3 claimed it', async () => {
    // Prepare: storage holds other bytes of the same length, and (wrongly) answers the authorised ETag.
    const other = Buffer.from(content);
    other[5] ^= 0xff;
    const fetcher = fakeFetch((request) => {
      if (request.url.origin === 'http://s3.test') return new Response(new Uint8Array(other), { status: 200, headers: { ETag: `"${MD5}"`, 'Content-Length': String(other.length) } });
      return serve().call(undefined, request.url.href, { method: request.method, headers: request.headers });
    });

    // Act
    const download = await driveWith(fetcher).download('/f.txt');

    // Assess
    const failure = await read(download.body).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DriveError);
    expect(failure).toMatchObject({ code: 'unexpected_response', message: expect.stringContaining(`not to their ETag ${MD5}`) });
  });

  it('refuses an answer of another length or ETag than the API authorised', async () => {
    const fetcher = fakeFetch((request) => {
      if (request.url.origin === 'http://s3.test') return new Response(new Uint8Array(content.subarray(1)), { status: 200, headers: { ETag: `"${MD5}"`, 'Content-Length': String(content.length - 1) } });
      return serve().call(undefined, request.url.href, { method: request.method, headers: request.headers });
    });
    await expect(driveWith(fetcher).download('/f.txt')).rejects.toMatchObject({ code: 'unexpected_response' });
  });

  it('passes on the API\'s refusal of the redirect (a confined key, 403) as it is', async () => {
    const fetcher = fakeFetch((request) => {
      if (request.url.searchParams.get('redirect') === 'true') return jsonResponse(403, { error: { code: 'forbidden', message: 'path /b/f.txt is outside /a, the only folder this key may reach' } });
      return new Response(new Uint8Array(content), { status: 200, headers: { ETag: `"${MD5}"`, 'Content-Length': String(content.length) } });
    });
    await expect(driveWith(fetcher).directDownload('/b/f.txt')).rejects.toMatchObject({ code: 'forbidden', status: 403 });
  });
});

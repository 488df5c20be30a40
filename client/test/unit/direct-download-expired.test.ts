import { createHash } from 'node:crypto';
import { Drive } from '../../src/drive';
import { FakeClock, type SeenRequest, fakeFetch, jsonResponse, redirects } from '../support/fakes';

// docs/api.md, Direct downloads: "A signing Lambda's role credentials may expire sooner than 300 s in rare
// cases; the URL then answers 403 and the client asks again." The client must then ask for a new URL.

const content = Buffer.from('direct bytes from storage, straight from S3 at its own speed');
const MD5 = createHash('md5').update(content).digest('hex');
const STORAGE = 'http://s3.test/bucket/d/6f1c2a4e';
const EXPIRED = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>';

it('asks the API for a new URL when storage refuses the first one as expired (403), and reads the file', async () => {
  let urls = 0;
  const fetcher = fakeFetch((request: SeenRequest) => {
    if (request.url.origin === 'http://drive.test') {
      if (redirects(request.url, content.length)) {
        const url = `${STORAGE}?X-Amz-Signature=${urls++}`;
        const data = { url, expires_at: '2026-03-02T09:35:00.000Z', path: request.url.searchParams.get('path'), size: content.length, etag: MD5, content_type: 'text/plain' };
        return jsonResponse(307, { data }, { Location: url });
      }
      return new Response(new Uint8Array(content), { status: 200, headers: { ETag: `"${MD5}"`, 'Content-Length': String(content.length), 'Content-Type': 'text/plain' } });
    }
    // The first URL was signed with credentials that have since expired; the second is good.
    if (request.url.searchParams.get('X-Amz-Signature') === '0') return new Response(EXPIRED, { status: 403, headers: { 'Content-Type': 'application/xml' } });
    return new Response(new Uint8Array(content), { status: 200, headers: { ETag: `"${MD5}"`, 'Content-Length': String(content.length), 'Content-Type': 'text/plain' } });
  });
  const drive = new Drive({ baseUrl: 'http://drive.test', apiKey: 'k', fetch: fetcher, clock: new FakeClock(), directDownloadBytes: 10 });

  const download = await drive.download('/f.txt');

  expect(Buffer.from(await new Response(download.body).arrayBuffer()).equals(content)).toBe(true);
  expect(urls).toBe(2);
});

it('fails with a clear error, after one fresh URL, when storage refuses every URL (403)', async () => {
  let urls = 0;
  const fetcher = fakeFetch((request: SeenRequest) => {
    if (request.url.origin === 'http://drive.test') {
      if (redirects(request.url, content.length)) {
        const url = `${STORAGE}?X-Amz-Signature=${urls++}`;
        const data = { url, expires_at: '2026-03-02T09:35:00.000Z', path: request.url.searchParams.get('path'), size: content.length, etag: MD5, content_type: 'text/plain' };
        return jsonResponse(307, { data }, { Location: url });
      }
      return new Response(new Uint8Array(content), { status: 200, headers: { ETag: `"${MD5}"`, 'Content-Length': String(content.length), 'Content-Type': 'text/plain' } });
    }
    return new Response(EXPIRED, { status: 403, headers: { 'Content-Type': 'application/xml' } });
  });
  const drive = new Drive({ baseUrl: 'http://drive.test', apiKey: 'k', fetch: fetcher, clock: new FakeClock(), directDownloadBytes: 10 });

  await expect(drive.download('/f.txt')).rejects.toMatchObject({ code: 'unexpected_response', status: 403, message: expect.stringMatching(/refused a fresh URL of \/f\.txt right after refusing the last one \(403\).*ExpiredToken/) });
  expect(urls).toBe(2);
});

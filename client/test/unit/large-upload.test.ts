import { createHash } from 'node:crypto';
import { Drive } from '../../src/drive';
import { multipartEtag } from '../../src/content-etag';
import { PreconditionFailedError } from '../../src/errors';
import { FakeClock, type SeenRequest, fakeFetch, jsonResponse, networkFailure } from '../support/fakes';

const BASE = 'http://drive.test';
const PART = 8 * 1024 * 1024;

/** 20 MiB + 5 bytes: parts of 8, 8 and 4 MiB + 5. */
const bytes = Buffer.alloc(2 * PART + 4 * 1024 * 1024 + 5, 7);
const partBytes = [bytes.subarray(0, PART), bytes.subarray(PART, 2 * PART), bytes.subarray(2 * PART)];
const partEtag = (i: number) => `"${createHash('md5').update(partBytes[i]).digest('hex')}"`;
const fileEtag = multipartEtag(partBytes.map((part) => createHash('md5').update(part).digest()));

const session = {
  upload_id: 'up-1',
  path: '/big.bin',
  size: bytes.length,
  part_size: PART,
  parts: [1, 2, 3].map((number) => ({ number, url: `http://s3.test/bucket/obj?partNumber=${number}&X-Amz-Signature=s` })),
  expires_at: '2026-01-01T01:00:00.000Z',
};
const file = { id: 'f1', name: 'big.bin', path: '/big.bin', url: `${BASE}/drive/download?path=/big.bin`, size: bytes.length, created_at: '2026-01-01T00:00:00.000Z' };

type Route = (request: SeenRequest, calls: number) => Response | Promise<Response> | undefined;

/** A fake API and S3: each route answers by its default unless `overrides` answers first. */
function fakeServer(overrides: Record<string, Route> = {}) {
  const calls: Record<string, number> = {};
  const fetcher = fakeFetch(async (request) => {
    const key = request.url.host === 's3.test' ? `PUT part ${request.url.searchParams.get('partNumber')}` : `${request.method} ${request.url.pathname}`;
    calls[key] = (calls[key] ?? 0) + 1;
    const answer = await overrides[key]?.(request, calls[key]);
    if (answer) return answer;
    if (key === 'POST /drive/uploads') return jsonResponse(200, { data: session });
    if (key.startsWith('PUT part')) {
      const number = Number(request.url.searchParams.get('partNumber'));
      expect(Buffer.from(await request.body!.arrayBuffer()).equals(partBytes[number - 1])).toBe(true);
      return new Response(null, { status: 200, headers: { ETag: partEtag(number - 1) } });
    }
    if (key === 'POST /drive/uploads/up-1/complete') return jsonResponse(200, { data: file });
    if (key === 'DELETE /drive/uploads/up-1') return jsonResponse(200, { data: { upload_id: 'up-1', aborted: true } });
    return jsonResponse(404, { error: { code: 'not_found', message: `no route ${key}` } });
  });
  return { fetcher, calls };
}

const driveWith = (fetcher: typeof fetch) => new Drive({ baseUrl: BASE, apiKey: 'k', fetch: fetcher, clock: new FakeClock() });

describe('Class: Drive, large files', () => {
  it('sends a file over 4 MiB in parts straight to storage (no API key), then completes with every part’s ETag', async () => {
    // Prepare
    const { fetcher, calls } = fakeServer();

    // Act
    const stored = await driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) });

    // Assess
    expect(stored).toEqual(file);
    const start = fetcher.requests.find((r) => r.url.pathname === '/drive/uploads')!;
    expect(JSON.parse(await start.body!.text())).toEqual({ path: '/big.bin', size: bytes.length });
    const puts = fetcher.requests.filter((r) => r.url.host === 's3.test');
    expect(puts.map((r) => r.headers.get('authorization'))).toEqual([null, null, null]);
    const complete = fetcher.requests.find((r) => r.url.pathname.endsWith('/complete'))!;
    expect(JSON.parse(await complete.body!.text())).toEqual({ parts: [1, 2, 3].map((number) => ({ number, etag: partEtag(number - 1) })) });
    expect(calls['DELETE /drive/uploads/up-1']).toBeUndefined();
  });

  it('asks for the URLs past the start\'s a page at a time, from the part the start names as next', async () => {
    // Prepare: the start gives part 1's URL only; parts 2 and 3 come from the parts route.
    const { fetcher, calls } = fakeServer({
      'POST /drive/uploads': () => jsonResponse(200, { data: { ...session, part_count: 3, parts: session.parts.slice(0, 1), next_part: 2 } }),
      'GET /drive/uploads/up-1/parts': (request) => {
        expect([request.url.searchParams.get('from'), request.url.searchParams.get('limit')]).toEqual(['2', '1000']);
        return jsonResponse(200, { data: { upload_id: 'up-1', parts: session.parts.slice(1), next_part: null } });
      },
    });

    // Act
    const stored = await driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) });

    // Assess
    expect(stored).toEqual(file);
    expect(calls['GET /drive/uploads/up-1/parts']).toBe(1);
    expect([calls['PUT part 1'], calls['PUT part 2'], calls['PUT part 3']]).toEqual([1, 1, 1]);
  });

  it('aborts the session when a page of part URLs cannot be had', async () => {
    const { fetcher, calls } = fakeServer({
      'POST /drive/uploads': () => jsonResponse(200, { data: { ...session, part_count: 3, parts: session.parts.slice(0, 1), next_part: 2 } }),
      'GET /drive/uploads/up-1/parts': () => jsonResponse(404, { error: { code: 'not_found', message: 'upload session up-1 does not exist, or has ended' } }),
    });
    await expect(driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) })).rejects.toMatchObject({ code: 'not_found' });
    expect(calls['DELETE /drive/uploads/up-1']).toBe(1);
  });

  it('refuses a session whose part count does not fit the file', async () => {
    const { fetcher, calls } = fakeServer({ 'POST /drive/uploads': () => jsonResponse(200, { data: { ...session, part_count: 4, parts: session.parts.slice(0, 1), next_part: 2 } }) });
    await expect(driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) })).rejects.toMatchObject({ code: 'unexpected_response' });
    expect(calls['DELETE /drive/uploads/up-1']).toBe(1);
  });

  it('retries a part that fails on its own, without sending the others again', async () => {
    const { fetcher, calls } = fakeServer({ 'PUT part 2': (_, n) => (n <= 2 ? new Response('<Error><Code>SlowDown</Code></Error>', { status: 503 }) : undefined) });
    await driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) });
    expect([calls['PUT part 1'], calls['PUT part 2'], calls['PUT part 3']]).toEqual([1, 3, 1]);
  });

  it('aborts the session when a part cannot be sent, and fails the file with storage’s status', async () => {
    const { fetcher, calls } = fakeServer({ 'PUT part 3': () => new Response('<Error><Code>AccessDenied</Code></Error>', { status: 403 }) });
    const report = await driveWith(fetcher).uploadMany([{ path: '/big.bin', data: new Blob([bytes]) }]);
    expect(report.failed[0].error).toMatchObject({ code: 'unexpected_response', status: 403 });
    expect(calls['DELETE /drive/uploads/up-1']).toBe(1);
    expect(calls['POST /drive/uploads/up-1/complete']).toBeUndefined();
  });

  it('waits while the session is being completed by an earlier attempt (409), then takes the answer', async () => {
    const { fetcher, calls } = fakeServer({
      'POST /drive/uploads/up-1/complete': (_, n) =>
        n === 1 ? jsonResponse(409, { error: { code: 'conflict', message: 'upload session up-1 is being completed or aborted by another request; wait for it', reason: 'upload_busy' } }) : undefined,
    });
    expect(await driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) })).toEqual(file);
    expect(calls['POST /drive/uploads/up-1/complete']).toBe(2);
  });

  it('does not wait on a 409 that is a conflict of the destination (a folder took the path): the file fails', async () => {
    const { fetcher } = fakeServer({ 'POST /drive/uploads/up-1/complete': () => jsonResponse(409, { error: { code: 'conflict', message: '/big.bin is a folder, so a file cannot be stored there' } }) });
    await expect(driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) })).rejects.toMatchObject({ code: 'conflict', status: 409 });
  });

  it('after a completion whose answer was lost, takes a 404 as success if the listing shows the file with these parts’ ETag', async () => {
    // Prepare: the first complete stores the file but its answer is lost; the session is gone for the retry.
    const { fetcher, calls } = fakeServer({
      'POST /drive/uploads/up-1/complete': (_, n) => {
        if (n === 1) throw networkFailure('ECONNRESET');
        return jsonResponse(404, { error: { code: 'not_found', message: 'no upload session up-1' } });
      },
      'GET /drive/list': (request) => {
        expect(request.url.searchParams.get('folder')).toBe('/');
        expect(request.url.searchParams.get('include')).toBe('etag');
        const { url: _url, ...entry } = file;
        return jsonResponse(200, { data: { folder: '/', files: [{ ...entry, etag: fileEtag }], folders: [] } });
      },
    });

    // Act
    const stored = await driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) });

    // Assess
    expect(stored).toEqual(file);
    expect(calls['GET /drive/list']).toBe(1);
  });

  it('after a lost answer, looks for the file a page of the folder at a time, and stops at the page past its path', async () => {
    const { url: _url, ...entry } = file;
    const { fetcher, calls } = fakeServer({
      'POST /drive/uploads/up-1/complete': (_, n) => {
        if (n === 1) throw networkFailure('ECONNRESET');
        return jsonResponse(404, { error: { code: 'not_found', message: 'no upload session up-1' } });
      },
      'GET /drive/list': (request, n) => {
        expect([request.url.searchParams.get('limit'), request.url.searchParams.get('cursor')]).toEqual(['1000', n === 1 ? null : 'page-2']);
        // The first page ends before /big.bin; the second passes it without holding it.
        const files = n === 1 ? [{ ...entry, path: '/a.bin', name: 'a.bin', etag: fileEtag }] : [{ ...entry, path: '/c.bin', name: 'c.bin', etag: fileEtag }];
        return jsonResponse(200, { data: { folder: '/', files, folders: [], next_cursor: `page-${n + 1}` } });
      },
    });
    await expect(driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) })).rejects.toMatchObject({ code: 'not_found' });
    expect(calls['GET /drive/list']).toBe(2);
  });

  it('after a lost answer, a 404 with a different file at the path (another ETag) is a failure', async () => {
    const { fetcher } = fakeServer({
      'POST /drive/uploads/up-1/complete': (_, n) => {
        if (n === 1) throw networkFailure('ECONNRESET');
        return jsonResponse(404, { error: { code: 'not_found', message: 'no upload session up-1' } });
      },
      'GET /drive/list': () => jsonResponse(200, { data: { folder: '/', files: [{ ...file, etag: 'ffffffffffffffffffffffffffffffff-3' }], folders: [] } }),
    });
    await expect(driveWith(fetcher).upload({ path: '/big.bin', data: new Blob([bytes]) })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('sends ifMatch / ifNoneMatch with the session\'s start, as if_match / if_none_match, and asks nothing else first (no HEAD)', async () => {
    const { fetcher } = fakeServer();
    for (const condition of [{ ifMatch: '"abc"' }, { ifNoneMatch: '*' as const }]) {
      const report = await driveWith(fetcher).uploadMany([{ path: '/big.bin', data: new Blob([bytes]), ...condition }]);
      expect(report.uploaded).toHaveLength(1);
    }
    const starts = fetcher.requests.filter((r) => r.url.pathname === '/drive/uploads');
    expect(await Promise.all(starts.map(async (r) => JSON.parse(await r.body!.text()) as unknown))).toEqual([
      { path: '/big.bin', size: bytes.length, if_match: '"abc"' },
      { path: '/big.bin', size: bytes.length, if_none_match: '*' },
    ]);
    expect(fetcher.requests.filter((r) => r.method === 'HEAD')).toEqual([]);
  });

  it('a 412 at the start fails the file with a PreconditionFailedError before any part is sent', async () => {
    const message = '/big.bin (if_match "abc": no file with that ETag is there); nothing of this upload is stored';
    const { fetcher, calls } = fakeServer({ 'POST /drive/uploads': () => jsonResponse(412, { error: { code: 'precondition_failed', message } }) });
    const report = await driveWith(fetcher).uploadMany([{ path: '/big.bin', data: new Blob([bytes]), ifMatch: 'abc' }]);
    expect(report.failed[0].error).toBeInstanceOf(PreconditionFailedError);
    expect(report.failed[0].error).toMatchObject({ status: 412, message });
    expect(calls['PUT part 1']).toBeUndefined();
  });

  it('a 412 at completion (the file replaced meanwhile) fails the file with a PreconditionFailedError; the session is not waited on', async () => {
    const { fetcher, calls } = fakeServer({
      'POST /drive/uploads/up-1/complete': () => jsonResponse(412, { error: { code: 'precondition_failed', message: 'the condition failed for /big.bin' } }),
    });
    const report = await driveWith(fetcher).uploadMany([{ path: '/big.bin', data: new Blob([bytes]), ifMatch: 'abc' }]);
    expect(report.failed[0].error).toBeInstanceOf(PreconditionFailedError);
    expect(calls['POST /drive/uploads/up-1/complete']).toBe(1);
  });

  it('aborts the session when the signal fires mid-upload, then rejects with the abort', async () => {
    const controller = new AbortController();
    const { fetcher, calls } = fakeServer({
      'PUT part 2': () => {
        controller.abort();
        return undefined;
      },
    });
    await expect(driveWith(fetcher).uploadMany([{ path: '/big.bin', data: new Blob([bytes]) }], { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls['DELETE /drive/uploads/up-1']).toBe(1);
    expect(calls['POST /drive/uploads/up-1/complete']).toBeUndefined();
  });
});

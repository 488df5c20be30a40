import { Drive } from '../../src/drive';
import { FakeClock, type SeenRequest, fakeFetch, jsonResponse, networkFailure } from '../support/fakes';

const BASE = 'http://drive.test';

/** The destinations of an upload request, read from its metadata part. */
async function destinationsOf(request: SeenRequest): Promise<string[]> {
  const text = await request.body!.text();
  const metadata = /name="metadata"\r\n\r\n(.*)\r\n/.exec(text)![1];
  return (JSON.parse(metadata) as { path: string }[]).map((entry) => entry.path);
}

const stored = (path: string) => ({ id: `id-${path}`, name: path.slice(path.lastIndexOf('/') + 1), path, url: `${BASE}/drive/download?path=${path}`, size: 1, created_at: '2026-01-01T00:00:00.000Z' });

function driveWith(fetcher: typeof fetch, options: Partial<ConstructorParameters<typeof Drive>[0]> = {}) {
  return new Drive({ baseUrl: BASE, apiKey: 'k', fetch: fetcher, clock: new FakeClock(), ...options });
}

describe('Class: Drive', () => {
  describe('Method: uploadMany', () => {
    it('packs small files into one request and reports each stored file', async () => {
      // Prepare
      const fetcher = fakeFetch(async (request) => jsonResponse(200, { data: (await destinationsOf(request)).map(stored) }));
      const items = Array.from({ length: 10 }, (_, i) => ({ path: `/a/${i}.txt`, data: `file ${i}` }));

      // Act
      const report = await driveWith(fetcher).uploadMany(items);

      // Assess
      expect(fetcher.requests).toHaveLength(1);
      expect(report.failed).toEqual([]);
      expect(report.uploaded.map((u) => u.file.path).sort()).toEqual(items.map((item) => item.path).sort());
    });

    it('splits a batch the server refuses for one file until that file alone fails, and stores the rest', async () => {
      // Prepare: a folder sits at /a/13.txt; the server refuses any request that holds it, storing nothing.
      const fetcher = fakeFetch(async (request) => {
        const paths = await destinationsOf(request);
        if (paths.includes('/a/13.txt')) return jsonResponse(409, { error: { code: 'conflict', message: '/a/13.txt is a folder' } });
        return jsonResponse(200, { data: paths.map(stored) });
      });
      const items = Array.from({ length: 64 }, (_, i) => ({ path: `/a/${i}.txt`, data: 'x' }));
      const files: string[] = [];

      // Act
      const report = await driveWith(fetcher).uploadMany(items, { onFile: (outcome) => files.push(outcome.item.path) });

      // Assess: halving 64 down to 1 is 6 levels, two requests each, after the first.
      expect(report.failed.map((f) => [f.item.path, f.error.code, f.error.status])).toEqual([['/a/13.txt', 'conflict', 409]]);
      expect(report.uploaded).toHaveLength(63);
      expect(fetcher.requests).toHaveLength(1 + 2 * 6);
      expect(files).toHaveLength(64);
    });

    it('fails a whole batch on a refusal that is not about one file (401), without splitting it', async () => {
      const fetcher = fakeFetch(() => jsonResponse(401, { error: { code: 'unauthorized', message: 'the API key is not valid' } }));
      const report = await driveWith(fetcher).uploadMany(Array.from({ length: 8 }, (_, i) => ({ path: `/${i}`, data: 'x' })));
      expect(report.failed).toHaveLength(8);
      expect(report.failed[0].error).toMatchObject({ code: 'unauthorized', status: 401, message: 'the API key is not valid' });
      expect(fetcher.requests).toHaveLength(1);
    });

    it('fails the later of two items with one destination before sending, so the server cannot refuse their batch', async () => {
      const fetcher = fakeFetch(async (request) => jsonResponse(200, { data: (await destinationsOf(request)).map(stored) }));
      const report = await driveWith(fetcher).uploadMany([
        { path: '/same', data: 'one' },
        { path: '/same', data: 'two' },
      ]);
      expect(report.uploaded).toHaveLength(1);
      expect(report.failed.map((f) => f.error.code)).toEqual(['validation_error']);
    });

    it('fails a local file that does not exist as local_file_error, and uploads the others', async () => {
      const fetcher = fakeFetch(async (request) => jsonResponse(200, { data: (await destinationsOf(request)).map(stored) }));
      const report = await driveWith(fetcher).uploadMany([
        { path: '/gone', file: '/no/such/file' },
        { path: '/here', data: 'x' },
      ]);
      expect(report.failed.map((f) => [f.item.path, f.error.code])).toEqual([['/gone', 'local_file_error']]);
      expect(report.uploaded.map((u) => u.file.path)).toEqual(['/here']);
    });

    it('reports progress in files and bytes', async () => {
      const fetcher = fakeFetch(async (request) => jsonResponse(200, { data: (await destinationsOf(request)).map(stored) }));
      const seen: { filesDone: number; bytesDone: number; bytesTotal: number }[] = [];
      await driveWith(fetcher, { maxFilesPerRequest: 2 }).uploadMany(
        [
          { path: '/a', data: 'aaaa' },
          { path: '/b', data: 'bb' },
          { path: '/c', data: 'c' },
        ],
        { onProgress: (p) => seen.push({ filesDone: p.filesDone, bytesDone: p.bytesDone, bytesTotal: p.bytesTotal }) },
      );
      expect(seen.at(-1)).toEqual({ filesDone: 3, bytesDone: 7, bytesTotal: 7 });
    });
  });

  describe('Method: deleteFolder', () => {
    it('resolves with alreadyGone when a retry after a lost answer finds the folder gone (404)', async () => {
      const fetcher = fakeFetch((_, i) => {
        if (i === 0) throw networkFailure('ECONNRESET');
        return jsonResponse(404, { error: { code: 'not_found', message: 'no folder /x' } });
      });
      expect(await driveWith(fetcher).deleteFolder('/x', { recursive: true })).toEqual({ deleted: true, path: '/x', files_deleted: 0, alreadyGone: true });
      expect(fetcher.requests.map((r) => r.url.search)).toEqual(['?path=%2Fx&recursive=true', '?path=%2Fx&recursive=true']);
    });

    it('rejects with not_found when the first and only answer is 404', async () => {
      const fetcher = fakeFetch(() => jsonResponse(404, { error: { code: 'not_found', message: 'no folder /x' } }));
      await expect(driveWith(fetcher).deleteFolder('/x')).rejects.toMatchObject({ code: 'not_found', status: 404, message: 'no folder /x' });
    });
  });

  describe('Method: deleteFiles', () => {
    it('sends the paths as a JSON body, 1,000 a request, and gathers the answers', async () => {
      const paths = Array.from({ length: 1500 }, (_, i) => `/f/${i}`);
      const fetcher = fakeFetch(async (request) => {
        const { paths: sent } = JSON.parse(await request.body!.text()) as { paths: string[] };
        return jsonResponse(200, { data: { deleted: sent.slice(1), not_found: sent.slice(0, 1) } });
      });
      const result = await driveWith(fetcher).deleteFiles(paths);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(['DELETE /drive/files', 'DELETE /drive/files']);
      expect({ deleted: result.deleted.length, notFound: result.not_found, alreadyGone: result.already_gone }).toEqual({ deleted: 1498, notFound: ['/f/0', '/f/1000'], alreadyGone: [] });
    });

    it('calls the paths a retry after a lost answer finds empty already gone, not missing', async () => {
      const fetcher = fakeFetch((_, i) => {
        if (i === 0) throw networkFailure('ECONNRESET');
        return jsonResponse(200, { data: { deleted: [], not_found: ['/a.txt'] } });
      });
      expect(await driveWith(fetcher).deleteFiles(['/a.txt'])).toEqual({ deleted: [], not_found: [], already_gone: ['/a.txt'] });
    });
  });

  describe('Method: createLink', () => {
    it('posts the path and expires_in (seconds) and returns the link', async () => {
      // Prepare
      const link = { id: 'a'.repeat(64), url: `${BASE}/s/${'t'.repeat(43)}`, path: '/r.pdf', expires_at: '2026-01-08T00:00:00.000Z' };
      const fetcher = fakeFetch(() => jsonResponse(200, { data: link }));

      // Act
      const made = await driveWith(fetcher).createLink('/r.pdf', { expiresIn: 604_800 });

      // Assess
      expect(made).toEqual(link);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(['POST /drive/links']);
      expect(JSON.parse(await fetcher.requests[0].body!.text())).toEqual({ path: '/r.pdf', expires_in: 604_800 });
    });

    it('leaves expires_in to the server when not given, and passes a refusal on as a DriveError', async () => {
      const fetcher = fakeFetch(() => jsonResponse(403, { error: { code: 'forbidden', message: 'this key is upload-only, which may not share files by link' } }));
      await expect(driveWith(fetcher).createLink('/r.pdf')).rejects.toMatchObject({ code: 'forbidden', status: 403 });
      expect(JSON.parse(await fetcher.requests[0].body!.text())).toEqual({ path: '/r.pdf' });
    });
  });

  describe('Method: listLinks', () => {
    it('follows next_cursor through every page, for one path', async () => {
      // Prepare
      const entry = (id: string) => ({ id, path: '/r.pdf', created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-02T00:00:00.000Z' });
      const fetcher = fakeFetch((request) =>
        jsonResponse(200, { data: request.url.searchParams.get('cursor') ? { links: [entry('b')], next_cursor: null } : { links: [entry('a')], next_cursor: 'c1' } }),
      );

      // Act
      const links = await driveWith(fetcher).listLinks('/r.pdf');

      // Assess
      expect(links.map((link) => link.id)).toEqual(['a', 'b']);
      expect(fetcher.requests.map((r) => r.url.search)).toEqual(['?path=%2Fr.pdf', '?path=%2Fr.pdf&cursor=c1']);
    });
  });

  describe('Method: revokeLink', () => {
    it('revokes by id, and resolves when a retry after a lost answer finds the link gone (404)', async () => {
      const fetcher = fakeFetch((_, i) => {
        if (i === 0) throw networkFailure('ECONNRESET');
        return jsonResponse(404, { error: { code: 'not_found', message: 'no link in this drive' } });
      });
      expect(await driveWith(fetcher).revokeLink('f'.repeat(64))).toEqual({ id: 'f'.repeat(64), revoked: true });
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([`DELETE /drive/links/${'f'.repeat(64)}`, `DELETE /drive/links/${'f'.repeat(64)}`]);
    });

    it('rejects with not_found when the first and only answer is 404', async () => {
      const fetcher = fakeFetch(() => jsonResponse(404, { error: { code: 'not_found', message: 'no link in this drive' } }));
      await expect(driveWith(fetcher).revokeLink('x')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    });
  });

  describe('Method: stat', () => {
    it('reads size and ETag from HEAD, and names a bodiless 404 not_found', async () => {
      const fetcher = fakeFetch((request) =>
        request.url.searchParams.get('path') === '/f' ? new Response(null, { status: 200, headers: { 'Content-Length': '12', ETag: '"abc-2"' } }) : new Response(null, { status: 404 }),
      );
      const drive = driveWith(fetcher);
      expect(await drive.stat('/f')).toMatchObject({ size: 12, etag: 'abc-2' });
      await expect(drive.stat('/g')).rejects.toMatchObject({ code: 'not_found', status: 404 });
      expect(fetcher.requests.map((r) => r.method)).toEqual(['HEAD', 'HEAD']);
    });
  });

  describe('Methods: listTrash, restore, purge, purgePath', () => {
    const restoreJob = (status: 'running' | 'done', filesRestored: number, end: object = {}) => ({
      id: 'j2', type: 'restore-folder', status, path: '/gone', to: '/back', files_restored: filesRestored,
      created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:01.000Z', url: `${BASE}/drive/jobs/j2`, result: null, ...end,
    });

    it('asks for a page of the trash with path, limit and cursor, and purges by id and by path', async () => {
      const page = { items: [], next_cursor: null, usage: { items: 0, files: 0, bytes: 0 } };
      const fetcher = fakeFetch((request) => jsonResponse(200, { data: request.method === 'GET' ? page : { purged: true } }));
      const drive = driveWith(fetcher);

      expect(await drive.listTrash('/r', { limit: 2, cursor: 'c1' })).toEqual(page);
      await drive.purge('a/b');
      await drive.purgePath('/r');

      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`)).toEqual(['GET /drive/trash?path=%2Fr&limit=2&cursor=c1', 'DELETE /drive/trash/a%2Fb', 'DELETE /drive/trash?path=%2Fr']);
    });

    it('posts the id with to and overwrite only when given, and passes a refusal on as a DriveError', async () => {
      const message = '/back is taken; pass "overwrite": true to replace the file there';
      const fetcher = fakeFetch((_, i) => (i === 0 ? jsonResponse(200, { data: stored('/a.txt') }) : jsonResponse(409, { error: { code: 'conflict', message } })));
      const drive = driveWith(fetcher);

      expect(await drive.restore('t1')).toEqual(stored('/a.txt'));
      await expect(drive.restore('t1', { to: '/back', overwrite: false })).rejects.toMatchObject({ code: 'conflict', status: 409, message });
      expect(await Promise.all(fetcher.requests.map(async (r) => JSON.parse(await r.body!.text())))).toEqual([{ id: 't1' }, { id: 't1', to: '/back', overwrite: false }]);
    });

    it('follows a folder restore’s 202 job to its end, telling onProgress each read, and resolves with its result', async () => {
      const folder = { id: 'd1', name: 'back', path: '/back' };
      const answers = [
        jsonResponse(202, { data: { job: restoreJob('running', 0) } }, { Location: `${BASE}/drive/jobs/j2` }),
        jsonResponse(200, { data: { job: restoreJob('done', 30, { result: folder }) } }),
      ];
      const fetcher = fakeFetch((_, i) => answers[i]);
      const seen: number[] = [];

      const restored = await driveWith(fetcher).restore('t2', { to: '/back', onProgress: (job) => seen.push(job.files_restored) });

      expect(restored).toEqual(folder);
      expect(seen).toEqual([0, 30]);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(['POST /drive/trash/restore', 'GET /drive/jobs/j2']);
    });

    it('follows an emptying’s 202 job to its end, telling onProgress each read, and resolves with its result', async () => {
      const emptyJob = (status: 'running' | 'done', filesPurged: number, result: object | null = null) => ({
        id: 'j3', type: 'empty-trash', status, path: '/r', files_purged: filesPurged,
        created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:01.000Z', url: `${BASE}/drive/jobs/j3`, result,
      });
      const emptied = { purged: true, path: '/r', items: 3, files: 40, bytes: 4096 };
      const answers = [
        jsonResponse(202, { data: { job: emptyJob('running', 10) } }, { Location: `${BASE}/drive/jobs/j3` }),
        jsonResponse(200, { data: { job: emptyJob('running', 25) } }),
        jsonResponse(200, { data: { job: emptyJob('done', 40, emptied) } }),
      ];
      const fetcher = fakeFetch((_, i) => answers[i]);
      const seen: number[] = [];

      const answer = await driveWith(fetcher).purgePath('/r', { onProgress: (job) => seen.push(job.files_purged) });

      expect(answer).toEqual(emptied);
      expect(seen).toEqual([10, 25, 40]);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`)).toEqual(['DELETE /drive/trash?path=%2Fr', 'GET /drive/jobs/j3', 'GET /drive/jobs/j3']);
    });

    it('rejects with the error of a restore job that stopped short', async () => {
      const message = 'the restore stopped: /back was deleted or moved by another request meanwhile; what was not restored is still in the trash';
      const answers = [
        jsonResponse(202, { data: { job: restoreJob('running', 0) } }),
        jsonResponse(200, { data: { job: restoreJob('done', 4, { error: { code: 'conflict', message } }) } }),
      ];
      const fetcher = fakeFetch((_, i) => answers[i]);

      await expect(driveWith(fetcher).restore('t2')).rejects.toMatchObject({ name: 'DriveError', code: 'conflict', status: 409, message });
    });
  });

  describe('Method: move', () => {
    const fileEntry = { id: 'f1', name: 'b.txt', path: '/to/b.txt', size: 3, created_at: '2026-01-01T00:00:00.000Z' };
    const moveJob = (status: 'running' | 'done', filesMoved: number, end: object = {}) => ({
      id: 'j1', type: 'move-folder', status, path: '/from', to: '/to', files_moved: filesMoved,
      created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:01.000Z', url: `${BASE}/drive/jobs/j1`, result: null, ...end,
    });

    it('posts from and to as JSON and resolves with the entry at its new path', async () => {
      // Prepare
      const fetcher = fakeFetch(() => jsonResponse(200, { data: fileEntry }));

      // Act
      const moved = await driveWith(fetcher).move('/a/b.txt', '/to/b.txt');

      // Assess
      expect(moved).toEqual(fileEntry);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(['POST /drive/move']);
      expect(fetcher.requests[0].headers.get('content-type')).toBe('application/json');
      expect(JSON.parse(await fetcher.requests[0].body!.text())).toEqual({ from: '/a/b.txt', to: '/to/b.txt' });
    });

    it('sends overwrite when asked, and passes a refusal on as a DriveError', async () => {
      const fetcher = fakeFetch(() => jsonResponse(409, { error: { code: 'conflict', message: '/to is a folder; a file cannot replace a folder' } }));

      await expect(driveWith(fetcher).move('/a.txt', '/to', { overwrite: true })).rejects.toMatchObject({ code: 'conflict', status: 409, message: '/to is a folder; a file cannot replace a folder' });
      expect(JSON.parse(await fetcher.requests[0].body!.text())).toEqual({ from: '/a.txt', to: '/to', overwrite: true });
    });

    it('follows a 202 job to its end, telling onProgress each read, and resolves with its result', async () => {
      // Prepare
      const folder = { id: 'd1', name: 'to', path: '/to' };
      const answers = [
        jsonResponse(202, { data: { job: moveJob('running', 0) } }, { Location: `${BASE}/drive/jobs/j1` }),
        jsonResponse(200, { data: { job: moveJob('running', 40) } }),
        jsonResponse(200, { data: { job: moveJob('done', 120, { result: folder }) } }),
      ];
      const fetcher = fakeFetch((_, i) => answers[i]);
      const clock = new FakeClock();
      const seen: number[] = [];

      // Act
      const moved = await driveWith(fetcher, { clock }).move('/from', '/to', { onProgress: (job) => seen.push(job.files_moved) });

      // Assess
      expect(moved).toEqual(folder);
      expect(seen).toEqual([0, 40, 120]);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(['POST /drive/move', 'GET /drive/jobs/j1', 'GET /drive/jobs/j1']);
      expect(clock.sleeps).toEqual([250, 500]);
    });

    it('rejects with the error of a job that stopped short', async () => {
      const message = 'the move stopped: a path in /to was taken by another request meanwhile; what had moved is there, the rest is still in /from';
      const answers = [
        jsonResponse(202, { data: { job: moveJob('running', 0) } }),
        jsonResponse(200, { data: { job: moveJob('done', 7, { result: null, error: { code: 'conflict', message } }) } }),
      ];
      const fetcher = fakeFetch((_, i) => answers[i]);

      await expect(driveWith(fetcher).move('/from', '/to')).rejects.toMatchObject({ name: 'DriveError', code: 'conflict', status: 409, message });
    });

    it('resolves with the entry at `to` when a retry after a lost answer finds nothing at `from` (404)', async () => {
      // Prepare
      const fetcher = fakeFetch((request, i) => {
        if (i === 0) throw networkFailure('ECONNRESET');
        if (request.url.pathname === '/drive/move') return jsonResponse(404, { error: { code: 'not_found', message: 'no file or folder at /a/b.txt' } });
        return jsonResponse(200, { data: { folder: '/to', files: [fileEntry], folders: [], next_cursor: null } });
      });

      // Act
      const moved = await driveWith(fetcher).move('/a/b.txt', '/to/b.txt');

      // Assess
      expect(moved).toEqual(fileEntry);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(['POST /drive/move', 'POST /drive/move', 'GET /drive/list']);
      expect(fetcher.requests[2].url.searchParams.get('folder')).toBe('/to');
    });

    it('rejects with not_found when the retry finds nothing at `to` either, and when the first and only answer is 404', async () => {
      const notFound = () => jsonResponse(404, { error: { code: 'not_found', message: 'no file or folder at /a.txt' } });
      const retried = fakeFetch((request, i) => {
        if (i === 0) throw networkFailure('ECONNRESET');
        return request.url.pathname === '/drive/move' ? notFound() : jsonResponse(200, { data: { folder: '/', files: [], folders: [], next_cursor: null } });
      });
      const once = fakeFetch(notFound);

      await expect(driveWith(retried).move('/a.txt', '/b.txt')).rejects.toMatchObject({ code: 'not_found', status: 404 });
      await expect(driveWith(once).move('/a.txt', '/b.txt')).rejects.toMatchObject({ code: 'not_found', status: 404 });
      expect(once.requests).toHaveLength(1);
    });
  });

  describe('Method: copy', () => {
    const copyJob = (status: 'running' | 'done', filesCopied: number, end: object = {}) => ({
      id: 'j2', type: 'copy-folder', status, path: '/from', to: '/copy', files_copied: filesCopied,
      created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:01.000Z', url: `${BASE}/drive/jobs/j2`, result: null, ...end,
    });

    it('posts from, to and overwrite to /drive/copy and resolves with the new entry', async () => {
      const copied = { id: 'f2', name: 'c.txt', path: '/c.txt', size: 3, created_at: '2026-01-02T00:00:00.000Z' };
      const fetcher = fakeFetch(() => jsonResponse(200, { data: copied }));

      expect(await driveWith(fetcher).copy('/a.txt', '/c.txt', { overwrite: false })).toEqual(copied);
      expect(fetcher.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual(['POST /drive/copy']);
      expect(JSON.parse(await fetcher.requests[0].body!.text())).toEqual({ from: '/a.txt', to: '/c.txt', overwrite: false });
    });

    it('follows a 202 copy job to its result, and rejects with the error of one that stopped short', async () => {
      const folder = { id: 'd2', name: 'copy', path: '/copy' };
      const done = [jsonResponse(202, { data: { job: copyJob('running', 0) } }), jsonResponse(200, { data: { job: copyJob('done', 9, { result: folder }) } })];
      const stopped = [jsonResponse(202, { data: { job: copyJob('running', 0) } }), jsonResponse(200, { data: { job: copyJob('done', 3, { error: { code: 'conflict', message: 'the copy stopped' } }) } })];
      const seen: number[] = [];

      expect(await driveWith(fakeFetch((_, i) => done[i])).copy('/from', '/copy', { onProgress: (job) => seen.push(job.files_copied) })).toEqual(folder);
      expect(seen).toEqual([0, 9]);
      await expect(driveWith(fakeFetch((_, i) => stopped[i])).copy('/from', '/copy')).rejects.toMatchObject({ code: 'conflict', status: 409, message: 'the copy stopped' });
    });

    it('never reads the listing to confirm a copy: a retry that answers 409 is passed on', async () => {
      const fetcher = fakeFetch((_, i) => {
        if (i === 0) throw networkFailure('ECONNRESET');
        return jsonResponse(409, { error: { code: 'conflict', message: '/c.txt is taken' } });
      });

      await expect(driveWith(fetcher).copy('/a.txt', '/c.txt')).rejects.toMatchObject({ code: 'conflict', status: 409 });
      expect(fetcher.requests.map((r) => r.url.pathname)).toEqual(['/drive/copy', '/drive/copy']);
    });
  });
});

import { Drive } from '../../src/drive';
import { DriveError, PreconditionFailedError, errorFromResponse } from '../../src/errors';
import { fileCost, uploadForm } from '../../src/upload-form';
import { FakeClock, type SeenRequest, fakeFetch, jsonResponse } from '../support/fakes';

// The client's side of conditions on writes (issue 26): ifMatch / ifNoneMatch sent in each file's metadata
// entry and a move's or copy's body, and a 412 read as a PreconditionFailedError.

const BASE = 'http://drive.test';
const drive = (fetcher: typeof fetch) => new Drive({ baseUrl: BASE, apiKey: 'k', fetch: fetcher, clock: new FakeClock() });

async function metadataOf(request: SeenRequest): Promise<{ path: string; if_match?: string; if_none_match?: string }[]> {
  const text = await request.body!.text();
  return JSON.parse(/name="metadata"\r\n\r\n(.*)\r\n/.exec(text)![1]) as { path: string }[];
}

const stored = (path: string) => ({ id: `id-${path}`, name: path.slice(path.lastIndexOf('/') + 1), path, url: `${BASE}/drive/download?path=${path}`, size: 1, created_at: '2026-01-01T00:00:00.000Z' });

describe('conditions in the client', () => {
  it('writes each file\'s condition into its metadata entry, and counts it in the body\'s size', async () => {
    const files = [
      { path: '/a', data: new Blob(['A']), size: 1, ifMatch: 'abc' },
      { path: '/b', data: new Blob(['B']), size: 1, ifNoneMatch: '*' as const },
      { path: '/c', data: new Blob(['C']), size: 1 },
    ];
    const { body } = uploadForm(files);
    const text = await body.text();
    expect(/name="metadata"\r\n\r\n(.*)\r\n/.exec(text)![1]).toBe('[{"path":"/a","if_match":"abc"},{"path":"/b","if_none_match":"*"},{"path":"/c"}]');
    expect(fileCost(files[0]).metadataBytes).toBe('{"path":"/a","if_match":"abc"}'.length + 1);
  });

  it('fails only the files whose condition failed (412, a PreconditionFailedError), storing the rest', async () => {
    const fetcher = fakeFetch(async (request) => {
      const entries = await metadataOf(request);
      if (entries.some((entry) => entry.if_match === 'stale')) return jsonResponse(412, { error: { code: 'precondition_failed', message: 'the condition failed for /a/5.txt' } });
      return jsonResponse(200, { data: entries.map((entry) => stored(entry.path)) });
    });
    const items = Array.from({ length: 8 }, (_, i) => ({ path: `/a/${i}.txt`, data: 'x', ...(i === 5 ? { ifMatch: 'stale' } : { ifNoneMatch: '*' as const }) }));
    const report = await drive(fetcher).uploadMany(items);
    expect(report.uploaded).toHaveLength(7);
    expect(report.failed.map((f) => [f.item.path, f.error.code, f.error.status, f.error instanceof PreconditionFailedError])).toEqual([['/a/5.txt', 'precondition_failed', 412, true]]);
  });

  it.each(['move', 'copy'] as const)('sends %s\'s ifMatch as if_match, and rejects with a PreconditionFailedError on 412', async (kind) => {
    const fetcher = fakeFetch(() => jsonResponse(412, { error: { code: 'precondition_failed', message: 'the condition failed for /a' } }));
    const error = await drive(fetcher)[kind]('/a', '/b', { ifMatch: '"abc"' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreconditionFailedError);
    expect(error).toBeInstanceOf(DriveError);
    expect(error).toMatchObject({ code: 'precondition_failed', status: 412, message: 'the condition failed for /a' });
    expect(JSON.parse(await fetcher.requests[0].body!.text())).toEqual({ from: '/a', to: '/b', if_match: '"abc"' });
  });

  it('reads a 412 without a body (a HEAD) as precondition_failed too', async () => {
    const error = await errorFromResponse(new Response(null, { status: 412 }), 'HEAD /drive/download');
    expect(error).toBeInstanceOf(PreconditionFailedError);
    expect(error.code).toBe('precondition_failed');
  });
});

import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DriveClient, type ErrorJson, type FileEntryJson, type FileJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { expectFsckClean, putFiles, textAt } from '../support/seeding';

// Conditions on writes and reads (issue 26): an upload's `if_match` / `if_none_match` per file, a move's or
// copy's `if_match` on its source, a download's `If-Match`. A failed condition is `412 precondition_failed`
// naming the paths, and nothing of the request is stored.

const ADMIN = 'cond-admin-f6UrpcrOhwuH2C8YgGgAiPrZeO';
const PUSHER = 'cond-pusher-CPmWEFPSAyKFHbhBD0xtiQ3p6';

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: [`c:${ADMIN}:admin`, `c:${PUSHER}:upload-only`].join(','), DRIVE_RATE_LIMITS: 'off' });
  drive = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
/** The bytes `putFiles` stores at `path`, and their ETag. */
const seeded = (path: string) => md5(`bytes of ${path}`);

function upload(client: DriveClient, files: { path: string; data: string; if_match?: string; if_none_match?: string }[]) {
  return json<{ data: FileJson[] } & ErrorJson>(
    client.upload(
      files.map((file) => ({ data: file.data, filename: 'x' })),
      files.map(({ data: _data, ...target }) => target),
    ),
  );
}

function transfer(kind: 'move' | 'copy', body: unknown) {
  return json<{ data: FileEntryJson } & ErrorJson>(drive.request('POST', `/drive/${kind}`, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
}

/** Whatever is stored (object keys and records), to show a refused request changed nothing. */
const stored = async () => {
  const { objectKeys, nodeItems } = await storedState(host.dataDir);
  return { objectKeys: objectKeys.sort(), nodeItems: nodeItems.map((item) => JSON.stringify(item)).sort() };
};

describe('POST /drive/upload with a condition', () => {
  it('if_match with a stale ETag is 412 and stores nothing (one file)', async () => {
    await putFiles(drive, ['/c1/a.txt']);
    const before = await stored();
    const res = await upload(drive, [{ path: '/c1/a.txt', data: 'new', if_match: md5('something else') }]);
    expect(res.status).toBe(412);
    expect(res.body.error).toMatchObject({
      code: 'precondition_failed',
      message: `the condition failed for /c1/a.txt (if_match "${md5('something else')}": no file with that ETag is there); nothing of this upload is stored`,
    });
    expect(await stored()).toEqual(before);
    expect(await textAt(drive, '/c1/a.txt')).toBe('bytes of /c1/a.txt');
  });

  it('if_match with a stale ETag is 412 and stores nothing (the third of three files: the first two withdrawn)', async () => {
    await putFiles(drive, ['/c2/a.txt', '/c2/c.txt']);
    const before = await stored();
    const res = await upload(drive, [
      { path: '/c2/a.txt', data: 'A', if_match: seeded('/c2/a.txt') },
      { path: '/c2/new/b.txt', data: 'B', if_none_match: '*' },
      { path: '/c2/c.txt', data: 'C', if_match: `"${md5('stale')}"` },
    ]);
    expect(res.status).toBe(412);
    expect(res.body.error.message).toBe(`the condition failed for /c2/c.txt (if_match "${md5('stale')}": no file with that ETag is there); nothing of this upload is stored`);
    // The request's journal entry stays open for the sweep, as a 409's does; no record or byte of it stands.
    const after = await stored();
    expect(after.objectKeys).toEqual(before.objectKeys);
    expect(after.nodeItems).toEqual(before.nodeItems);
    expect(await textAt(drive, '/c2/a.txt')).toBe('bytes of /c2/a.txt');
  });

  it('names every path whose condition failed', async () => {
    await putFiles(drive, ['/c3/a.txt', '/c3/b.txt']);
    const res = await upload(drive, [
      { path: '/c3/a.txt', data: 'A', if_none_match: '*' },
      { path: '/c3/b.txt', data: 'B', if_match: 'abc' },
      { path: '/c3/c.txt', data: 'C', if_match: 'def' },
    ]);
    expect(res.status).toBe(412);
    expect(res.body.error.message).toBe(
      'the condition failed for /c3/a.txt (if_none_match "*": a file is there), /c3/b.txt (if_match "abc": no file with that ETag is there), /c3/c.txt (if_match "def": no file with that ETag is there); nothing of this upload is stored',
    );
  });

  it('replaces with the current ETag, quoted as the download gives it or bare as a listing does', async () => {
    await putFiles(drive, ['/c4/a.txt']);
    const etag = (await drive.download({ path: '/c4/a.txt' })).headers.get('etag')!;
    expect(etag).toBe(`"${seeded('/c4/a.txt')}"`);
    expect((await upload(drive, [{ path: '/c4/a.txt', data: 'v1', if_match: etag }])).status).toBe(200);
    expect((await upload(drive, [{ path: '/c4/a.txt', data: 'v2', if_match: md5('v1') }])).status).toBe(200);
    expect(await textAt(drive, '/c4/a.txt')).toBe('v2');
    // The ETag it replaced is gone: the same condition again fails.
    expect((await upload(drive, [{ path: '/c4/a.txt', data: 'v3', if_match: md5('v1') }])).status).toBe(412);
  });

  it('if_none_match stores where no file is, and is 412 on an existing file', async () => {
    expect((await upload(drive, [{ path: '/c5/n.txt', data: 'first', if_none_match: '*' }])).status).toBe(200);
    const before = await stored();
    const res = await upload(drive, [{ path: '/c5/n.txt', data: 'second', if_none_match: '*' }]);
    expect(res.status).toBe(412);
    expect(res.body.error.message).toBe('the condition failed for /c5/n.txt (if_none_match "*": a file is there); nothing of this upload is stored');
    expect(await stored()).toEqual(before);
    expect(await textAt(drive, '/c5/n.txt')).toBe('first');
  });

  it('if_match where no file is: 412; a folder at the path is the 409 it always was', async () => {
    expect((await upload(drive, [{ path: '/c6/none.txt', data: 'x', if_match: md5('x') }])).status).toBe(412);
    await putFiles(drive, ['/c6/dir/f.txt']);
    const res = await upload(drive, [{ path: '/c6/dir', data: 'x', if_match: md5('x') }]);
    expect(res.status).toBe(409);
  });

  it('refuses bad conditions before storing anything', async () => {
    const before = await stored();
    const both = await upload(drive, [{ path: '/c7/a.txt', data: 'x', if_match: 'abc', if_none_match: '*' }]);
    expect(both.status).toBe(400);
    expect(both.body.error).toMatchObject({ code: 'bad_request', message: 'metadata[0] has both if_match and if_none_match; give one: if_match to replace only that version, if_none_match to store only where no file is' });
    const empty = await upload(drive, [{ path: '/c7/a.txt', data: 'x', if_match: '' }]);
    expect(empty.status).toBe(422);
    expect(empty.body.error.message).toMatch(/^metadata\[0\]\.if_match /);
    const long = await upload(drive, [{ path: '/c7/a.txt', data: 'x', if_match: 'a'.repeat(256) }]);
    expect(long.status).toBe(422);
    expect(long.body.error.message).toMatch(/^metadata\[0\]\.if_match /);
    expect((await upload(drive, [{ path: '/c7/a.txt', data: 'x', if_match: 'a'.repeat(255) }])).status).toBe(412);
    const weak = await upload(drive, [{ path: '/c7/a.txt', data: 'x', if_match: 'W/"abc"' }]);
    expect(weak.status).toBe(422);
    expect(weak.body.error.message).toBe('metadata[0].if_match must be a file\'s ETag, like "9e107d9d372bb6826bd81d3542a419d6" (quotes optional; no weak W/ tag), got "W/\\"abc\\""');
    const star = await upload(drive, [{ path: '/c7/a.txt', data: 'x', if_none_match: 'abc' }]);
    expect(star.status).toBe(422);
    expect(star.body.error.message).toMatch(/^metadata\[0\]\.if_none_match must be "\*"/);
    expect(await stored()).toEqual(before);
  });

  it('an upload-only key, which never replaces, may not send if_match (403); its if_none_match is its 409 as before', async () => {
    const pusher = new DriveClient(host.url, PUSHER);
    const res = await upload(pusher, [{ path: '/c8/a.txt', data: 'x', if_match: 'abc' }]);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('metadata[0].if_match asks to replace a file, and this key may not replace files');
    expect((await upload(pusher, [{ path: '/c8/a.txt', data: 'x', if_none_match: '*' }])).status).toBe(200);
    expect((await upload(pusher, [{ path: '/c8/a.txt', data: 'y', if_none_match: '*' }])).status).toBe(409);
  });
});

describe('POST /drive/uploads (large files) with a condition', () => {
  interface Session {
    upload_id: string;
    part_size: number;
    parts: { number: number; url: string }[];
  }
  const post = (client: DriveClient, route: string, body: unknown) =>
    json<{ data: Session & FileJson } & ErrorJson>(client.request('POST', route, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
  const start = (body: Record<string, unknown>, client = drive) => post(client, '/drive/uploads', body);
  const complete = (id: string, parts: unknown) => post(drive, `/drive/uploads/${id}/complete`, { parts });
  /** PUTs `data` to the session's part URLs (one part: these files are smaller than a part) and returns the part list. */
  async function sendParts(session: Session, data: Buffer): Promise<{ number: number; etag: string }[]> {
    expect(session.parts).toHaveLength(1);
    const res = await fetch(session.parts[0].url, { method: 'PUT', body: data });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    return [{ number: 1, etag: res.headers.get('etag')! }];
  }
  /** Multipart uploads the embedded S3 still holds parts for. */
  const pendingUploads = () => readdir(join(host.dataDir, 's3', 'drive-files', '._S3rver_uploads')).catch(() => []);
  const big = (fill: number) => Buffer.alloc(256 * 1024, fill);

  it('a stale if_match is 412 at the start, before any part is sent: the message upload gives, no session, nothing stored', async () => {
    await putFiles(drive, ['/l1/a.bin']);
    const before = await stored();
    const res = await start({ path: '/l1/a.bin', size: 256 * 1024, if_match: md5('stale') });
    expect(res.status).toBe(412);
    expect(res.body.error).toMatchObject({
      code: 'precondition_failed',
      message: `the condition failed for /l1/a.bin (if_match "${md5('stale')}": no file with that ETag is there); nothing of this upload is stored`,
    });
    const none = await start({ path: '/l1/a.bin', size: 256 * 1024, if_none_match: '*' });
    expect(none.status).toBe(412);
    expect(none.body.error.message).toBe('the condition failed for /l1/a.bin (if_none_match "*": a file is there); nothing of this upload is stored');
    expect(await stored()).toEqual(before);
    expect(await pendingUploads()).toEqual([]);
  });

  it('the current ETag (quoted) goes through: the file replaces the version it named', async () => {
    await putFiles(drive, ['/l2/a.bin']);
    const started = await start({ path: '/l2/a.bin', size: 256 * 1024, if_match: `"${seeded('/l2/a.bin')}"` });
    expect(started.status).toBe(200);
    const done = await complete(started.body.data.upload_id, await sendParts(started.body.data, big(2)));
    expect(done.status).toBe(200);
    expect(await textAt(drive, '/l2/a.bin')).toBe(big(2).toString());
  });

  it('a file replaced between the start and the completion: 412 at completion, nothing of the upload stored, the session ended', async () => {
    await putFiles(drive, ['/l3/a.bin']);
    const started = await start({ path: '/l3/a.bin', size: 256 * 1024, if_match: seeded('/l3/a.bin') });
    expect(started.status).toBe(200);
    const session = started.body.data;
    const parts = await sendParts(session, big(3));
    expect(await pendingUploads()).toHaveLength(1);
    // Someone else replaces the file while the job sends its parts.
    expect((await upload(drive, [{ path: '/l3/a.bin', data: 'someone else' }])).status).toBe(200);
    const before = await stored();

    const res = await complete(session.upload_id, parts);
    expect(res.status).toBe(412);
    expect(res.body.error).toMatchObject({
      code: 'precondition_failed',
      message: `the condition failed for /l3/a.bin (if_match "${seeded('/l3/a.bin')}": no file with that ETag is there); nothing of this upload is stored`,
    });
    expect(await stored()).toEqual(before);
    expect(await textAt(drive, '/l3/a.bin')).toBe('someone else');
    // Ended: its parts are gone and it completes no more.
    expect(await pendingUploads()).toEqual([]);
    expect((await complete(session.upload_id, parts)).status).toBe(404);
  });

  it('if_none_match: a file stored at the path after the start makes the completion 412, and the other file stays', async () => {
    const started = await start({ path: '/l4/n.bin', size: 256 * 1024, if_none_match: '*' });
    expect(started.status).toBe(200);
    const session = started.body.data;
    const parts = await sendParts(session, big(4));
    expect((await upload(drive, [{ path: '/l4/n.bin', data: 'first here' }])).status).toBe(200);
    const before = await stored();

    const res = await complete(session.upload_id, parts);
    expect(res.status).toBe(412);
    expect(res.body.error.message).toBe('the condition failed for /l4/n.bin (if_none_match "*": a file is there); nothing of this upload is stored');
    expect(await stored()).toEqual(before);
    expect(await textAt(drive, '/l4/n.bin')).toBe('first here');
    expect(await pendingUploads()).toEqual([]);

    // Where nothing stands, it stores.
    const fresh = await start({ path: '/l4/m.bin', size: 256 * 1024, if_none_match: '*' });
    expect((await complete(fresh.body.data.upload_id, await sendParts(fresh.body.data, big(5)))).status).toBe(200);
  });

  it('refuses bad conditions as upload does, before any session: both 400, a weak or empty ETag 422, if_none_match other than * 422, if_match from an upload-only key 403', async () => {
    const before = await stored();
    const both = await start({ path: '/l5/a.bin', size: 10, if_match: 'abc', if_none_match: '*' });
    expect(both.status).toBe(400);
    expect(both.body.error).toMatchObject({ code: 'bad_request', message: 'the body has both if_match and if_none_match; give one: if_match to replace only that version, if_none_match to store only where no file is' });
    const weak = await start({ path: '/l5/a.bin', size: 10, if_match: 'W/"abc"' });
    expect(weak.status).toBe(422);
    expect(weak.body.error.message).toBe('if_match must be a file\'s ETag, like "9e107d9d372bb6826bd81d3542a419d6" (quotes optional; no weak W/ tag), got "W/\\"abc\\""');
    expect((await start({ path: '/l5/a.bin', size: 10, if_match: '' })).status).toBe(422);
    expect((await start({ path: '/l5/a.bin', size: 10, if_none_match: 'abc' })).status).toBe(422);
    const pusher = new DriveClient(host.url, PUSHER);
    const forbidden = await start({ path: '/l5/a.bin', size: 10, if_match: 'abc' }, pusher);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.message).toBe('if_match asks to replace a file, and this key may not replace files');
    expect(await stored()).toEqual(before);
    expect(await pendingUploads()).toEqual([]);
  });
});

describe('POST /drive/move and /drive/copy with if_match', () => {
  it.each(['move', 'copy'] as const)('%s: a stale if_match is 412 and nothing is changed; the current one goes through', async (kind) => {
    const from = `/t-${kind}/a.txt`;
    await putFiles(drive, [from]);
    const before = await stored();
    const res = await transfer(kind, { from, to: `/t-${kind}/b.txt`, if_match: md5('stale') });
    expect(res.status).toBe(412);
    expect(res.body.error).toMatchObject({ code: 'precondition_failed', message: `the condition failed for ${from} (if_match "${md5('stale')}": the file there has another ETag); nothing was ${kind === 'move' ? 'moved' : 'copied'}` });
    expect(await stored()).toEqual(before);
    const done = await transfer(kind, { from, to: `/t-${kind}/b.txt`, if_match: `"${seeded(from)}"` });
    expect(done.status).toBe(200);
    expect(await textAt(drive, `/t-${kind}/b.txt`)).toBe(`bytes of ${from}`);
  });

  it.each(['move', 'copy'] as const)('%s: if_match on a folder is 400, nothing done; a bad ETag 422', async (kind) => {
    await putFiles(drive, [`/f-${kind}/d/a.txt`]);
    const before = await stored();
    const res = await transfer(kind, { from: `/f-${kind}/d`, to: `/f-${kind}/e`, if_match: 'abc' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`if_match names a file's ETag, and /f-${kind}/d is a folder, which has none; send no if_match to move or copy a folder`);
    expect((await transfer(kind, { from: `/f-${kind}/d/a.txt`, to: `/f-${kind}/b.txt`, if_match: '' })).status).toBe(422);
    expect((await transfer(kind, { from: `/f-${kind}/d/a.txt`, to: `/f-${kind}/b.txt`, if_match: 'a"b' })).status).toBe(422);
    expect(await stored()).toEqual(before);
  });
});

describe('GET and HEAD /drive/download with If-Match', () => {
  const path = '/dl/a.txt';
  const get = (headers: Record<string, string>, query = '', method = 'GET') => drive.request(method, `/drive/download?path=${encodeURIComponent(path)}${query}`, { headers });

  beforeAll(() => putFiles(drive, [path]));

  it('answers the file when If-Match names its ETag (quoted, in a list, bare, or *), 412 otherwise', async () => {
    const etag = `"${seeded(path)}"`;
    for (const value of [etag, `"x", ${etag}`, seeded(path), '*']) expect((await get({ 'If-Match': value })).status).toBe(200);
    for (const value of ['"x"', `W/${etag}`, 'not a tag', '""']) {
      const res = await get({ 'If-Match': value });
      expect(res.status).toBe(412);
      expect(res.headers.get('etag')).toBe(etag);
      expect(((await res.json()) as ErrorJson).error.code).toBe('precondition_failed');
    }
    const head = await get({ 'If-Match': '"x"' }, '', 'HEAD');
    expect(head.status).toBe(412);
    expect(await head.text()).toBe('');
  });

  it('weighs If-Match before If-None-Match (RFC 9110 13.2.2)', async () => {
    const etag = `"${seeded(path)}"`;
    expect((await get({ 'If-Match': etag, 'If-None-Match': etag })).status).toBe(304);
    expect((await get({ 'If-Match': '"x"', 'If-None-Match': etag })).status).toBe(412);
  });

  it('answers 412 for redirect=true and redirect_above before signing any URL', async () => {
    expect((await get({ 'If-Match': '"x"' }, '&redirect=true')).status).toBe(412);
    expect((await get({ 'If-Match': '"x"' }, '&redirect_above=0')).status).toBe(412);
    const redirected = await fetch(`${host.url}/drive/download?path=${encodeURIComponent(path)}&redirect=true`, {
      headers: { Authorization: `Bearer ${ADMIN}`, 'If-Match': `"${seeded(path)}"` },
      redirect: 'manual',
    });
    expect(redirected.status).toBe(307);
  });

  it('is 404 for no file, whatever If-Match says', async () => {
    expect((await drive.request('GET', '/drive/download?path=/dl/none.txt', { headers: { 'If-Match': '*' } })).status).toBe(404);
  });
});

describe('after it all', () => {
  it('fsck finds nothing to report', async () => {
    await expectFsckClean(host.dataDir);
  });
});

import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { CompleteMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { mapLimit } from '../../functions/core/concurrency';
import { DriveClient, type ErrorJson, type FileJson, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, setUploadExpiry, startHost, stopHost, storedState, untilHost } from '../support/local-host';
import { restoreItem, trashPage } from '../support/trash';
import { localCredentials } from '../../lib/local/emulators';

const KEY_A = 'large-a-key-29hVHaTbDrEgNFVFcigNCYZW';
const KEY_B = 'large-b-key-29hVHaTbDrEgNFVFcigNCYZW';
const MiB = 1024 * 1024;

interface StartJson {
  upload_id: string;
  path: string;
  size: number;
  part_size: number;
  parts: { number: number; url: string }[];
  expires_at: string;
}
type Part = { number: number; etag: string };

let host: RunningHost;
let drive: DriveClient;
let other: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `a:${KEY_A},b:${KEY_B}`, DRIVE_RATE_LIMITS: 'upload=1000' });
  drive = new DriveClient(host.url, KEY_A);
  other = new DriveClient(host.url, KEY_B);
});

afterAll(() => stopHost(host));

function start(client: DriveClient, body: unknown) {
  return json<{ data: StartJson } & ErrorJson>(client.request('POST', '/drive/uploads', { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
}

function complete(client: DriveClient, id: string, parts: unknown) {
  return json<{ data: FileJson } & ErrorJson>(
    client.request('POST', `/drive/uploads/${id}/complete`, { body: JSON.stringify({ parts }), headers: { 'Content-Type': 'application/json' } }),
  );
}

function abort(client: DriveClient, id: string) {
  return json<{ data: { upload_id: string; aborted: boolean } } & ErrorJson>(client.request('DELETE', `/drive/uploads/${id}`));
}

/** PUTs `bytes` to a presigned part URL, as `curl -T` would, and returns the part's ETag. */
async function putPart(url: string, bytes: Uint8Array): Promise<string> {
  const res = await fetch(url, { method: 'PUT', body: bytes });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const etag = res.headers.get('etag');
  expect(etag).toMatch(/^"[0-9a-f]+"$/);
  return etag!;
}

/** Sends every part of `data` for `session`, four at a time. */
function putAll(session: StartJson, data: Buffer): Promise<Part[]> {
  return mapLimit(session.parts, 4, async ({ number, url }) => ({
    number,
    etag: await putPart(url, data.subarray((number - 1) * session.part_size, number * session.part_size)),
  }));
}

async function expectFsckClean(): Promise<void> {
  expect(await runFsck(host.dataDir)).toEqual({ code: 0, output: expect.stringContaining('clean') });
}

/** Multipart uploads s3rver still holds parts for (its upload folders). */
async function pendingUploads(dataDir: string): Promise<string[]> {
  return readdir(join(dataDir, 's3', 'drive-files', '._S3rver_uploads')).catch(() => []);
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('large uploads: presigned multipart (an extension of the spec)', () => {
  it('takes a 43 MiB file in six parts sent straight to storage; the record appears only on completion; every byte downloads back', async () => {
    // Six parts, the last a short one: as many boundaries as the ranges below cross (200 MiB bought nothing more).
    const data = randomBytes(43 * MiB);
    const started = await start(drive, { folder: '/backups', name: 'db.tar', size: data.length, content_type: 'application/x-tar' });
    expect(started.status).toBe(200);
    const session = started.body.data;
    expect(session).toMatchObject({ path: '/backups/db.tar', size: data.length, part_size: 8 * MiB });
    expect(session.upload_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(session.parts.map((p) => p.number)).toEqual(Array.from({ length: 6 }, (_, i) => i + 1));
    expect(Date.parse(session.expires_at)).toBeGreaterThan(Date.now() + 50 * 60_000);

    const parts = await putAll(session, data);
    const before = await json<{ data: ListingJson } & ErrorJson>(drive.list({ folder: '/backups' }));
    expect(before.status).toBe(404); // nothing listed, not even the folder, until completion

    const done = await complete(drive, session.upload_id, [...parts].reverse()); // any order
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ name: 'db.tar', path: '/backups/db.tar', size: data.length, url: `${host.url}/drive/download?path=/backups/db.tar` });
    expect(new Date(done.body.data.created_at).toISOString()).toBe(done.body.data.created_at);

    const listed = await json<{ data: ListingJson }>(drive.list({ folder: '/backups', include: 'etag' }));
    // S3's ETag of a multipart object, computed here from the bytes: the MD5 of the parts' MD5s, then "-6".
    const partDigests = Buffer.concat(session.parts.map(({ number }) => createHash('md5').update(data.subarray((number - 1) * session.part_size, number * session.part_size)).digest()));
    const etag = `${createHash('md5').update(partDigests).digest('hex')}-6`;
    expect(listed.body.data.files).toEqual([expect.objectContaining({ id: done.body.data.id, size: data.length, etag })]);
    const download = await drive.download({ path: '/backups/db.tar' });
    expect(download.headers.get('content-type')).toBe('application/x-tar');
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(data.length);
    expect(sha256(bytes)).toBe(sha256(data));

    // Sized first with HEAD, then read by ranges: across part boundaries, the last byte, open and suffix ranges.
    const head = await drive.request('HEAD', '/drive/download?path=/backups/db.tar');
    expect(head.headers.get('content-length')).toBe(String(data.length));
    const P = 8 * MiB;
    const ranges: [string, number, number][] = [
      ['0-0', 0, 1],
      [`${P - 10}-${P + 9}`, P - 10, P + 10],
      [`${3 * P}-${5 * P - 1}`, 3 * P, 5 * P],
      [`${data.length - 1}-`, data.length - 1, data.length],
      [`${5 * P + 5}-`, 5 * P + 5, data.length],
      ['-1000', data.length - 1000, data.length],
      [`${40 * MiB}-${300 * MiB}`, 40 * MiB, data.length],
    ];
    for (const [range, from, to] of ranges) {
      const res = await drive.request('GET', '/drive/download?path=/backups/db.tar', { headers: { Range: `bytes=${range}` } });
      expect({ range, status: res.status, contentRange: res.headers.get('content-range') }).toEqual({ range, status: 206, contentRange: `bytes ${from}-${to - 1}/${data.length}` });
      expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(data.subarray(from, to)));
    }
    expect(await pendingUploads(host.dataDir)).toEqual([]);
    await expectFsckClean();
  });

  it('gives a file that fits in one part a single URL', async () => {
    const data = randomBytes(1000);
    const { body } = await start(drive, { path: '/small/one.bin', size: data.length });
    expect(body.data.parts).toHaveLength(1);
    const done = await complete(drive, body.data.upload_id, await putAll(body.data, data));
    expect(done.status).toBe(200);
    expect(Buffer.from(await (await drive.download({ path: '/small/one.bin' })).arrayBuffer()).equals(data)).toBe(true);
  });

  it('replaces a file at the destination and keeps the old version in the trash, as an upload does', async () => {
    await drive.upload([{ data: 'old', filename: 'r.txt' }], [{ path: '/replace/r.txt' }]);
    const data = randomBytes(2048);
    const { body } = await start(drive, { path: '/replace/r.txt', size: data.length });
    const done = await complete(drive, body.data.upload_id, await putAll(body.data, data));
    expect(done.status).toBe(200);
    expect(Buffer.from(await (await drive.download({ path: '/replace/r.txt' })).arrayBuffer()).equals(data)).toBe(true);
    const { items } = (await trashPage(drive, { path: '/replace' })).body.data;
    expect(items).toEqual([expect.objectContaining({ type: 'file', path: '/replace/r.txt', size: 3, reason: 'replaced' })]);
    const back = await restoreItem(drive, { id: items[0].id, to: '/replace/old.txt' });
    expect(back.status).toBe(200);
    expect(await (await drive.download({ path: '/replace/old.txt' })).text()).toBe('old');
    await expectFsckClean();
  });

  it('abort ends the session and deletes its parts; nothing is left', async () => {
    const data = randomBytes(9 * MiB);
    const { body } = await start(drive, { path: '/aborted/a.bin', size: data.length });
    await putPart(body.data.parts[0].url, data.subarray(0, 8 * MiB));
    expect(await pendingUploads(host.dataDir)).toHaveLength(1);

    const aborted = await abort(drive, body.data.upload_id);
    expect(aborted).toEqual({ status: 200, body: { data: { upload_id: body.data.upload_id, aborted: true } } });
    expect(await pendingUploads(host.dataDir)).toEqual([]);
    expect((await complete(drive, body.data.upload_id, [{ number: 1, etag: '"x"' }])).status).toBe(404);
    expect((await abort(drive, body.data.upload_id)).status).toBe(404);
    expect((await json<ErrorJson>(drive.list({ folder: '/aborted' }))).status).toBe(404);
    await expectFsckClean();
  });

  it('refuses a file over the size limit with 413 before anything is stored', async () => {
    const res = await start(drive, { path: '/huge.bin', size: 6 * 1024 * 1024 * MiB });
    expect(res.status).toBe(413);
    expect(res.body.error).toEqual({ code: 'payload_too_large', message: expect.stringContaining('5497558138880 bytes'), request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await pendingUploads(host.dataDir)).toEqual([]);
  });

  it.each([
    ['no body', undefined, 400, 'bad_request', 'JSON'],
    ['no destination', { size: 10 }, 400, 'bad_request', 'path'],
    ['folder without name', { folder: '/x', size: 10 }, 400, 'bad_request', 'name'],
    ['no size', { path: '/x.bin' }, 400, 'bad_request', 'size'],
    ['a size that is not a number', { path: '/x.bin', size: '10' }, 400, 'bad_request', 'size'],
    ['a size of 0', { path: '/x.bin', size: 0 }, 422, 'validation_error', 'size'],
    ['a fractional size', { path: '/x.bin', size: 1.5 }, 422, 'validation_error', 'size'],
    ['a relative path', { path: 'x.bin', size: 10 }, 422, 'validation_error', 'path'],
    ['a ".." segment', { folder: '/a/..', name: 'x', size: 10 }, 422, 'validation_error', 'folder'],
    ['a name with "/"', { name: 'a/b', size: 10 }, 422, 'validation_error', 'name'],
    ['a content_type with a line break', { path: '/x.bin', size: 10, content_type: 'text/html\r\nX-Evil: 1' }, 422, 'validation_error', 'content_type'],
    ['an unknown field', { path: '/x.bin', size: 10, sise: 10 }, 400, 'bad_request', 'sise'],
    ['a content_type with a vertical tab', { path: '/x.bin', size: 10, content_type: 'text/plain\v;a=b' }, 422, 'validation_error', 'content_type'],
    ['a content_type with a line separator', { path: '/x.bin', size: 10, content_type: 'text/plain\u2028;a=b' }, 422, 'validation_error', 'content_type'],
    ['a content_type with a control character quoted', { path: '/x.bin', size: 10, content_type: 'text/plain;a="\u0001"' }, 422, 'validation_error', 'content_type'],
    ['a content_type with non-ASCII', { path: '/x.bin', size: 10, content_type: 'text/plain;a="é"' }, 422, 'validation_error', 'content_type'],
  ])('refuses a start with %s', async (_, body, status, code, names) => {
    const res = await json<ErrorJson>(
      drive.request('POST', '/drive/uploads', { body: body === undefined ? undefined : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    );
    expect(res.status).toBe(status);
    expect(res.body.error).toEqual({ code, message: expect.stringContaining(names), request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it('refuses a destination held by a folder or below a file, at the start', async () => {
    await drive.createFolder({ path: '/conflicts/folder' });
    await drive.upload([{ data: 'f', filename: 'file' }], [{ path: '/conflicts/file' }]);
    for (const path of ['/conflicts/folder', '/conflicts/file/below.bin', '/conflicts/file/deeper/below.bin']) {
      const res = await start(drive, { path, size: 10 });
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 409, code: 'conflict' });
    }
  });

  it('refuses at completion a destination a folder took meanwhile, before assembling the parts', async () => {
    const data = randomBytes(100);
    const before = (await storedState(host.dataDir)).objectKeys;
    const { body } = await start(drive, { path: '/late-conflict/x', size: data.length });
    const parts = await putAll(body.data, data);
    await drive.createFolder({ path: '/late-conflict/x' });

    const res = await complete(drive, body.data.upload_id, parts);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('/late-conflict/x is a folder');
    // The parts wait for a fix (the session stays); abort then leaves nothing, as if it never started.
    expect(await pendingUploads(host.dataDir)).toHaveLength(1);
    expect((await abort(drive, body.data.upload_id)).status).toBe(200);
    expect((await storedState(host.dataDir)).objectKeys).toEqual(before);
    await expectFsckClean();
  });

  it('refuses bad part lists with a message naming the part, and keeps the session for a corrected list', async () => {
    const data = randomBytes(8 * MiB + 100);
    const { body } = await start(drive, { path: '/parts/p.bin', size: data.length });
    expect(body.data.parts).toHaveLength(2);
    const [first, second] = body.data.parts;
    const etag1 = await putPart(first.url, data.subarray(0, 8 * MiB));
    const id = body.data.upload_id;

    const cases: [unknown, number, string][] = [
      [[{ number: 1, etag: etag1 }], 422, 'missing part 2'],
      [[{ number: 1, etag: etag1 }, { number: 2, etag: '"abc"' }], 422, 'part 2 (parts[1]) has not been uploaded'],
      [[{ number: 1, etag: etag1 }, { number: 1, etag: etag1 }], 422, 'parts[1].number 1 is listed twice'],
      [[{ number: 1, etag: etag1 }, { number: 3, etag: '"abc"' }], 422, 'parts[1].number is 3, but this upload has 2 parts'],
      [[{ number: 1, etag: '"0123"' }], 422, 'parts[0].etag does not match part 1'],
      [[{ number: 0, etag: etag1 }], 422, 'parts[0].number'],
      [[{ number: '1', etag: etag1 }], 400, 'parts[0].number must be a number'],
      [[{ number: 1 }], 400, 'parts[0].etag must be a string'],
      [[], 422, 'parts must list every uploaded part'],
      ['all of them', 400, 'parts is required'],
    ];
    for (const [parts, status, message] of cases) {
      const res = await complete(drive, id, parts);
      expect({ parts, status: res.status, message: res.body.error?.message }).toEqual({ parts, status, message: expect.stringContaining(message) });
    }

    // A last part of the wrong length: the parts hold other bytes than `size` says.
    const short = await putPart(second.url, data.subarray(8 * MiB, 8 * MiB + 99));
    const wrongSize = await complete(drive, id, [{ number: 1, etag: etag1 }, { number: 2, etag: short }]);
    expect(wrongSize.status).toBe(422);
    expect(wrongSize.body.error.message).toContain('part 2 holds 99 bytes; it must hold 100');

    // Sent again, right: the session was kept through every refusal.
    const etag2 = await putPart(second.url, data.subarray(8 * MiB));
    const done = await complete(drive, id, [{ number: 1, etag: etag1 }, { number: 2, etag: etag2 }]);
    expect(done.status).toBe(200);
    expect(sha256(Buffer.from(await (await drive.download({ path: '/parts/p.bin' })).arrayBuffer()))).toBe(sha256(data));
    await expectFsckClean();
  });

  it('lets one of two racing completions store the file; the other is refused (409 while it runs, 404 after)', async () => {
    for (let round = 0; round < 5; round++) {
      const data = randomBytes(1000 + round);
      const { body } = await start(drive, { path: `/raced/${round}.bin`, size: data.length });
      const parts = await putAll(body.data, data);
      const results = await Promise.all([complete(drive, body.data.upload_id, parts), complete(drive, body.data.upload_id, parts), abort(drive, body.data.upload_id)]);
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.every((s) => [200, 404, 409].includes(s))).toBe(true);
      const stored = await drive.download({ path: `/raced/${round}.bin` });
      if (results[2].status === 200) expect(stored.status).toBe(404); // the abort won
      else expect(Buffer.from(await stored.arrayBuffer()).equals(data)).toBe(true);
    }
    expect(await pendingUploads(host.dataDir)).toEqual([]);
    await expectFsckClean();
  });

  it("answers another drive's key with 404 on complete and abort, leaving the session to its owner", async () => {
    const data = randomBytes(10);
    const { body } = await start(drive, { path: '/isolated/x.bin', size: data.length });
    const parts = await putAll(body.data, data);

    for (const res of [await complete(other, body.data.upload_id, parts), await abort(other, body.data.upload_id)]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await json<ErrorJson>(other.list({ folder: '/isolated' }))).status).toBe(404);
    expect((await complete(drive, body.data.upload_id, parts)).status).toBe(200);
    expect((await json<ErrorJson>(other.download({ path: '/isolated/x.bin' }))).status).toBe(404);
  });

  it('answers an upload_id this API never issued with 404', async () => {
    for (const id of ['nope', '00000000-0000-0000-0000-000000000000', 'x'.repeat(3000)]) {
      const res = await complete(drive, id, [{ number: 1, etag: '"x"' }]);
      expect({ id: id.slice(0, 40), status: res.status, code: res.body.error?.code }).toEqual({ id: id.slice(0, 40), status: 404, code: 'not_found' });
    }
  });

  it('needs a key on every route', async () => {
    const anonymous = new DriveClient(host.url, 'not-a-key');
    const id = '00000000-0000-0000-0000-000000000000';
    for (const res of [await start(anonymous, { path: '/x', size: 1 }), await complete(anonymous, id, []), await abort(anonymous, id), await partsPage(anonymous, id, {})]) {
      expect(res.status).toBe(401);
    }
  });
});

function partsPage(client: DriveClient, id: string, query: Record<string, string>) {
  return json<{ data: StartJson & { part_count: number; next_part: number | null } } & ErrorJson>(client.request('GET', `/drive/uploads/${id}/parts?${new URLSearchParams(query)}`));
}

describe('part URLs a page at a time', () => {
  it('starts with the first 100 part URLs and gives the rest from GET /drive/uploads/{id}/parts, up to S3\'s 10,000 parts', async () => {
    // 10,000 parts of 8 MiB: no bytes are sent, only URLs signed.
    const { status, body } = await start(drive, { path: '/paged-parts/huge.bin', size: 10_000 * 8 * MiB });
    expect(status).toBe(200);
    const session = body.data as StartJson & { part_count: number; next_part: number | null };
    expect({ part_size: session.part_size, part_count: session.part_count, urls: session.parts.length, next_part: session.next_part }).toEqual({ part_size: 8 * MiB, part_count: 10_000, urls: 100, next_part: 101 });
    expect(session.parts.map((part) => part.number)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));

    const numbers: number[] = [];
    let from: number | null = session.next_part;
    while (from !== null) {
      const page = await partsPage(drive, session.upload_id, { from: String(from), limit: '1000' });
      expect(page.status).toBe(200);
      expect(page.body.data.parts.length).toBeLessThanOrEqual(1000);
      for (const part of page.body.data.parts) {
        expect(Number(new URL(part.url).searchParams.get('partNumber'))).toBe(part.number);
        numbers.push(part.number);
      }
      from = page.body.data.next_part;
    }
    expect(numbers).toEqual(Array.from({ length: 9_900 }, (_, i) => i + 101));

    // Without a limit, a page of 50 (one upload token's worth of signing).
    const defaults = await partsPage(drive, session.upload_id, {});
    expect({ first: defaults.body.data.parts[0].number, count: defaults.body.data.parts.length, next: defaults.body.data.next_part }).toEqual({ first: 1, count: 50, next: 51 });
    expect((await abort(drive, session.upload_id)).status).toBe(200);
    expect((await partsPage(drive, session.upload_id, {})).status).toBe(404);
  });

  it('stores a file whose parts were sent to URLs from a later page', async () => {
    const data = randomBytes(8 * MiB + 10);
    const { body } = await start(drive, { path: '/paged-parts/two.bin', size: data.length });
    const again = await partsPage(drive, body.data.upload_id, { from: '2', limit: '1' });
    expect(again.body.data.parts.map((part) => part.number)).toEqual([2]);
    expect(again.body.data.next_part).toBeNull();
    const parts = [
      { number: 1, etag: await putPart(body.data.parts[0].url, data.subarray(0, 8 * MiB)) },
      { number: 2, etag: await putPart(again.body.data.parts[0].url, data.subarray(8 * MiB)) },
    ];
    expect((await complete(drive, body.data.upload_id, parts)).status).toBe(200);
    const res = await drive.download({ path: '/paged-parts/two.bin' });
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(data));
    await expectFsckClean();
  });

  it.each([
    ['from=0', { from: '0' }, 'from must be a whole number'],
    ['from=3 of 2 parts', { from: '3' }, 'from must be a part of this upload, 1 to 2'],
    ['limit=0', { limit: '0' }, 'limit must be a whole number from 1 to 1,000'],
    ['limit=1001', { limit: '1001' }, 'limit must be a whole number from 1 to 1,000'],
    ['limit=1e3', { limit: '1e3' }, 'limit must be a whole number'],
  ])('refuses %s with 422, naming the parameter', async (_, query, message) => {
    const { body } = await start(drive, { path: '/paged-parts/bad.bin', size: 8 * MiB + 1 });
    const res = await partsPage(drive, body.data.upload_id, query);
    expect({ status: res.status, message: res.body.error?.message }).toEqual({ status: 422, message: expect.stringContaining(message) });
    await abort(drive, body.data.upload_id);
  });

  it("answers another drive's session, or one this API never issued, with 404", async () => {
    const { body } = await start(drive, { path: '/paged-parts/mine.bin', size: 8 * MiB + 1 });
    expect((await partsPage(other, body.data.upload_id, {})).status).toBe(404);
    expect((await partsPage(drive, '00000000-0000-0000-0000-000000000000', {})).status).toBe(404);
    await abort(drive, body.data.upload_id);
  });
});

describe('large uploads and the rate limit', () => {
  let limited: RunningHost;

  beforeAll(async () => {
    limited = await startHost({ DRIVE_API_KEYS: `a:${KEY_A}`, DRIVE_RATE_LIMITS: 'upload=3' });
  });

  afterAll(() => stopHost(limited));

  it('counts the large-upload routes against the upload bucket', async () => {
    const client = new DriveClient(limited.url, KEY_A);
    const id = '00000000-0000-0000-0000-000000000000';
    const statuses = [
      (await start(client, { path: '/rl.bin', size: 1 })).status,
      (await json(client.upload([{ data: 'x', filename: 'rl.txt' }]))).status,
      (await abort(client, id)).status,
    ];
    expect(statuses).toEqual([200, 200, 404]);
    // Three a minute, all taken: every route of the bucket is refused now.
    for (const res of [await start(client, { path: '/rl.bin', size: 1 }), await complete(client, id, []), await abort(client, id), await json<ErrorJson>(client.upload([{ data: 'x', filename: 'rl.txt' }]))]) {
      expect(res.status).toBe(429);
      expect(res.body.error.code).toBe('rate_limited');
    }
    expect((await json(client.list())).status).toBe(200);
  });
});

describe('large uploads that nobody finishes', () => {
  let expiring: RunningHost;

  beforeAll(async () => {
    // The session's expiry is moved behind the API's back once its parts are in: a 1 s expiry would race the
    // parts' own upload on a slow machine (their URLs expire with the session).
    expiring = await startHost({ DRIVE_API_KEYS: `a:${KEY_A}`, DRIVE_LOCAL_SWEEP_SECONDS: '1' });
  });

  afterAll(() => stopHost(expiring));

  it('end at their expiry: the session is gone, as TTL removes it, and completing is refused', async () => {
    const client = new DriveClient(expiring.url, KEY_A);
    const data = randomBytes(100);
    const { body } = await start(client, { path: '/expired.bin', size: data.length });
    const parts = await putAll(body.data, data);
    expect(await pendingUploads(expiring.dataDir)).toHaveLength(1);
    await setUploadExpiry(expiring.dataDir, body.data.upload_id, new Date(Date.now() - 1000));

    const swept = () => expiring.output().includes('TTL removed 1 expired item of the uploads table');
    await untilHost(expiring, swept, 'the sweep');

    expect(expiring.output()).toContain('TTL removed 1 expired item of the uploads table');
    expect((await complete(client, body.data.upload_id, parts)).status).toBe(404);
    // As in AWS, the parts stay until the bucket's lifecycle rule aborts the upload, a day after its start.
    expect(await pendingUploads(expiring.dataDir)).toHaveLength(1);
    expect(await runFsck(expiring.dataDir)).toEqual({ code: 0, output: expect.stringContaining('clean') });
  });
});

describe('an object that a failed completion assembled', () => {
  let checked: RunningHost;

  beforeAll(async () => {
    // The scheduled consistency check every second, counting objects of any age and repairing: what it does
    // daily in AWS with `fsckRepair` on.
    checked = await startHost({ DRIVE_API_KEYS: `a:${KEY_A}`, DRIVE_LOCAL_SWEEP_SECONDS: '1', DRIVE_LOCAL_FSCK_SECONDS: '1', DRIVE_FSCK_GRACE_MINUTES: '0', DRIVE_FSCK_REPAIR: 'true' });
  });

  afterAll(() => stopHost(checked));

  /** The host's JSON log lines from the `from`th on. */
  const linesOf = (from: number) =>
    checked
      .output()
      .split('\n')
      .slice(from)
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  // A wait on the log's state, not on a time: the check runs each second however slow the machine, and needs
  // two runs to delete an orphan; Jest's timeout is only the backstop for a check that never comes.
  async function waitFor(found: () => boolean): Promise<void> {
    while (!found()) await new Promise((r) => setTimeout(r, 250));
  }

  it('outlives its session, which the expiry only removes, until the scheduled consistency check deletes it', async () => {
    const client = new DriveClient(checked.url, KEY_A);
    // A file beside it: the check deletes nothing while the table holds no file record (its brake).
    expect((await json(client.upload([{ data: 'kept', filename: 'kept.txt' }]))).status).toBe(200);
    const data = randomBytes(100);
    const { body } = await start(client, { path: '/assembled.bin', size: data.length });
    const parts = await putAll(body.data, data);
    // S3 assembles the object, then the completion fails before it records the file (a timeout, a throttled write).
    const endpoints = JSON.parse(await readFile(join(checked.dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
    const credentials = await localCredentials(checked.dataDir);
    const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'us-east-1', credentials });
    const s3 = new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', credentials, forcePathStyle: true });
    try {
      const session = (await dynamodb.send(new GetItemCommand({ TableName: endpoints.uploadsTable, Key: { id: { S: body.data.upload_id } } }))).Item!;
      const objectKey = session.objectKey.S!;
      await s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: endpoints.bucket,
          Key: objectKey,
          UploadId: session.multipartId.S!,
          MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.number, ETag: part.etag })) },
        }),
      );

      // While its session lasts, the object is in flight: a check that ran since leaves it.
      const assembled = checked.output().split('\n').length - 1;
      await waitFor(() => linesOf(assembled).some((line) => line.message === 'consistency check clean'));
      expect((await storedState(checked.dataDir)).objectKeys).toContain(objectKey);

      // Expiry removes the session and nothing more; the next check finds the object an orphan and deletes it.
      // Lines are counted from before the expiry: a check can run, and repair, between the sweep's line and
      // this test's next look at the output.
      const beforeExpiry = checked.output().split('\n').length - 1;
      await setUploadExpiry(checked.dataDir, body.data.upload_id, new Date(Date.now() - 1000));
      await waitFor(() => checked.output().includes('TTL removed 1 expired item of the uploads table'));
      await waitFor(() => linesOf(beforeExpiry).some((line) => (line.repaired as { deletedObjects?: number } | undefined)?.deletedObjects === 1));
      expect((await storedState(checked.dataDir)).objectKeys).not.toContain(objectKey);
      expect((await complete(client, body.data.upload_id, parts)).status).toBe(404);
    } finally {
      dynamodb.destroy();
      s3.destroy();
    }
  });
});

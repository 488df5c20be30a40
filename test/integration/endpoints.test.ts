import { createHash, randomBytes } from 'node:crypto';
import { DriveClient, type DeletedJson, type ErrorJson, type FileJson, type FolderJson, type ListingJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';
import { FINAL_DELETES } from '../support/trash';

const KEY = 'endpoints-test-key-oFGRbyvwuP5fmk1g';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `endpoints:${KEY}`, DRIVE_RATE_LIMITS: 'off', ...FINAL_DELETES });
  drive = new DriveClient(host.url, KEY);
});

afterAll(() => stopHost(host));

async function upload(files: Parameters<DriveClient['upload']>[0], metadata?: unknown) {
  return json<{ data: FileJson[] }>(drive.upload(files, metadata));
}

async function downloadBytes(query: Record<string, string>): Promise<Buffer> {
  const res = await drive.download(query);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('POST /drive/upload', () => {
  it('returns one File per uploaded file with every field of spec section 2', async () => {
    const { status, body } = await upload([{ data: 'hello', filename: 'fields.txt' }]);

    expect(status).toBe(200);
    expect(body.data).toHaveLength(1);
    const file = body.data[0];
    expect(Object.keys(file).sort()).toEqual(['created_at', 'id', 'name', 'path', 'size', 'url']);
    expect(file).toMatchObject({ name: 'fields.txt', path: '/fields.txt', size: 5 });
    expect(typeof file.id).toBe('string');
    expect(file.created_at).toMatch(ISO_UTC);
    expect(file.url).toBe(`${host.url}/drive/download?path=/fields.txt`);
    const viaUrl = await fetch(file.url, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(await viaUrl.text()).toBe('hello');
  });

  it('resolves each file by the five destination rules, in priority order', async () => {
    const files = ['p', 'fn', 'f', 'n', 'none'].map((tag) => ({ data: `rule-${tag}`, filename: `original-${tag}.txt` }));
    const metadata = [
      { path: '/rules/by-path.txt', folder: '/ignored', name: 'ignored.txt' },
      { folder: '/rules/both', name: 'named.txt' },
      { folder: '/rules/folder-only' },
      { name: 'rules-name-only.txt' },
      {},
    ];

    const { status, body } = await upload(files, metadata);

    expect(status).toBe(200);
    expect(body.data.map((f) => f.path)).toEqual([
      '/rules/by-path.txt',
      '/rules/both/named.txt',
      '/rules/folder-only/original-f.txt',
      '/rules-name-only.txt',
      '/original-none.txt',
    ]);
    for (const [i, file] of body.data.entries()) {
      expect((await downloadBytes({ path: file.path })).toString()).toBe(`rule-${['p', 'fn', 'f', 'n', 'none'][i]}`);
    }
  });

  it('stores each file at the root under its filename when metadata is omitted', async () => {
    const { body } = await upload([
      { data: 'a', filename: 'root-a.txt' },
      { data: 'b', filename: 'root-b.txt' },
    ]);
    expect(body.data.map((f) => f.path)).toEqual(['/root-a.txt', '/root-b.txt']);
  });

  it('creates the missing parent folders of a destination', async () => {
    await upload([{ data: 'deep', filename: 'deep.txt' }], [{ folder: '/parents/x/y' }]);

    const { body } = await json<{ data: ListingJson }>(drive.list({ folder: '/parents', recursive: 'true' }));
    expect(body.data.folders.map((f) => f.path)).toEqual(['/parents/x', '/parents/x/y']);
  });

  it('replaces a file at the same path: new id, new bytes, old bytes deleted', async () => {
    const first = await upload([{ data: 'version one', filename: 'replace.txt' }], [{ path: '/replace/me.txt' }]);
    const second = await upload([{ data: 'version two!', filename: 'replace.txt' }], [{ path: '/replace/me.txt' }]);

    expect(second.status).toBe(200);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect((await downloadBytes({ path: '/replace/me.txt' })).toString()).toBe('version two!');
    const { body } = await json<{ data: ListingJson }>(drive.list({ folder: '/replace' }));
    expect(body.data.files).toEqual([expect.objectContaining({ path: '/replace/me.txt', size: 12, id: second.body.data[0].id })]);
    const { objectKeys } = await storedState(host.dataDir);
    expect(objectKeys).toContain(`endpoints/${second.body.data[0].id}`);
    expect(objectKeys).not.toContain(`endpoints/${first.body.data[0].id}`);
  });

  it('keeps every byte value and megabytes of random data intact', async () => {
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const random = randomBytes(3 * 1024 * 1024 + 17);

    const { status, body } = await upload(
      [
        { data: everyByte, filename: 'bytes.bin' },
        { data: random, filename: 'random.bin', type: 'application/octet-stream' },
      ],
      [{ folder: '/binary' }, { folder: '/binary' }],
    );

    expect(status).toBe(200);
    expect(body.data.map((f) => f.size)).toEqual([256, random.length]);
    expect((await downloadBytes({ path: '/binary/bytes.bin' })).equals(everyByte)).toBe(true);
    expect((await downloadBytes({ folder: '/binary', name: 'random.bin' })).equals(random)).toBe(true);
  });

  it('stores unicode names NFC-normalised and serves them back', async () => {
    const decomposed = 'Cafe\u0301 日本語 ✓.txt';
    const { body } = await upload([{ data: 'unicode', filename: decomposed }], [{ folder: '/ünï' }]);

    expect(body.data[0].name).toBe(decomposed.normalize('NFC'));
    expect(body.data[0].path).toBe(`/ünï/${decomposed.normalize('NFC')}`);
    expect((await downloadBytes({ path: `/ünï/${decomposed}` })).toString()).toBe('unicode');
  });

  it('keeps every byte of concurrent uploads', async () => {
    const payloads = Array.from({ length: 12 }, (_, i) => randomBytes(64 * 1024 + i));

    const results = await Promise.all(payloads.map((data, i) => upload([{ data, filename: `c${i}.bin` }], [{ folder: '/concurrent' }])));

    expect(results.map((r) => r.status)).toEqual(payloads.map(() => 200));
    for (const [i, data] of payloads.entries()) {
      expect((await downloadBytes({ path: `/concurrent/c${i}.bin` })).equals(data)).toBe(true);
    }
  });
});

describe('GET /drive/download', () => {
  beforeAll(async () => {
    await upload(
      [
        { data: '{"a":1}', filename: 'data.json', type: 'application/json' },
        { data: 'png-ish', filename: 'image.png' },
        { data: 'x', filename: 'naïve résumé.pdf' },
      ],
      [{ folder: '/dl' }, { folder: '/dl' }, { folder: '/dl' }],
    );
  });

  it('sends the raw bytes with the file type and an attachment disposition', async () => {
    const res = await drive.download({ path: '/dl/data.json' });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="data.json"; filename*=UTF-8''data.json`);
    expect(await res.text()).toBe('{"a":1}');
  });

  it('sends an empty file with its status and headers', async () => {
    await upload([{ data: '', filename: 'empty.txt' }], [{ folder: '/dl' }]);

    const res = await drive.download({ path: '/dl/empty.txt' });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('0');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="empty.txt"; filename*=UTF-8''empty.txt`);
    expect(await res.text()).toBe('');
  });

  it('takes the type from the extension when the part had none', async () => {
    const res = await drive.download({ folder: '/dl', name: 'image.png' });
    expect(res.headers.get('content-type')).toBe('image/png');
  });

  it('carries a non-ASCII filename per RFC 6266: ASCII fallback and UTF-8 filename*', async () => {
    const res = await drive.download({ path: '/dl/naïve résumé.pdf' });
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="naive resume.pdf"; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.pdf`,
    );
  });

  it('serves a name with a backslash under its whole name', async () => {
    await upload([{ data: 'bs', filename: 'x' }], [{ folder: '/dl', name: 'a\\b.txt' }]);
    const res = await drive.download({ folder: '/dl', name: 'a\\b.txt' });
    expect(await res.text()).toBe('bs');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="a_b.txt"; filename*=UTF-8''a%5Cb.txt`);
  });

  it.each([
    ['neither form', {}],
    ['name without folder', { name: 'data.json' }],
    ['folder without name', { folder: '/dl' }],
    ['path together with name', { path: '/dl/data.json', name: 'data.json', folder: '/dl' }],
  ])('answers 400 bad_request for %s', async (_, query) => {
    const { status, body } = await json<ErrorJson>(drive.download(query));
    expect(status).toBe(400);
    expect(body.error.code).toBe('bad_request');
  });

  it('answers 404 not_found when no file is at the target, or a folder is', async () => {
    const queries: Record<string, string>[] = [{ path: '/dl/missing.txt' }, { folder: '/nowhere', name: 'x' }, { path: '/dl' }, { path: '/' }];
    for (const query of queries) {
      const { status, body } = await json<ErrorJson>(drive.download(query));
      expect(status).toBe(404);
      expect(body.error.code).toBe('not_found');
    }
  });

  it('answers 422 validation_error naming the parameter for a malformed path', async () => {
    const { status, body } = await json<ErrorJson>(drive.download({ path: 'relative/x.txt' }));
    expect(status).toBe(422);
    expect(body.error).toEqual({ code: 'validation_error', message: expect.stringContaining('path'), request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });
});

describe('GET /drive/list', () => {
  beforeAll(async () => {
    await upload(
      ['b.txt', 'a.txt', 'B.txt'].map((filename) => ({ data: filename, filename })),
      [{ folder: '/ls' }, { folder: '/ls' }, { folder: '/ls/sub/deeper' }],
    );
    await drive.createFolder({ path: '/ls/empty' });
  });

  it('lists the direct files and folders of a folder, ordered by path bytes, without url', async () => {
    const { status, body } = await json<{ data: ListingJson }>(drive.list({ folder: '/ls' }));

    expect(status).toBe(200);
    expect(body.data.folder).toBe('/ls');
    expect(body.data.files.map((f) => f.path)).toEqual(['/ls/a.txt', '/ls/b.txt']);
    expect(Object.keys(body.data.files[0]).sort()).toEqual(['created_at', 'id', 'name', 'path', 'size']);
    expect(body.data.files[0]).toMatchObject({ name: 'a.txt', size: 5 });
    expect(body.data.folders).toEqual([
      { id: expect.any(String), name: 'empty', path: '/ls/empty' },
      { id: expect.any(String), name: 'sub', path: '/ls/sub' },
    ]);
  });

  it('lists every nested file and folder with recursive=true', async () => {
    const { body } = await json<{ data: ListingJson }>(drive.list({ folder: '/ls/', recursive: 'true' }));

    expect(body.data.folder).toBe('/ls');
    expect(body.data.files.map((f) => f.path)).toEqual(['/ls/a.txt', '/ls/b.txt', '/ls/sub/deeper/B.txt']);
    expect(body.data.folders.map((f) => f.path)).toEqual(['/ls/empty', '/ls/sub', '/ls/sub/deeper']);
  });

  it('lists the root when folder is omitted', async () => {
    const { status, body } = await json<{ data: ListingJson }>(drive.list());
    expect(status).toBe(200);
    expect(body.data.folder).toBe('/');
    expect(body.data.folders.map((f) => f.path)).toContain('/ls');
  });

  it('answers 404 for a folder that does not exist', async () => {
    const { status, body } = await json<ErrorJson>(drive.list({ folder: '/ls/missing' }));
    expect(status).toBe(404);
    expect(body.error.code).toBe('not_found');
  });

  it('answers 422 naming recursive when it is not a boolean', async () => {
    const { status, body } = await json<ErrorJson>(drive.list({ recursive: 'yes' }));
    expect(status).toBe(422);
    expect(body.error.message).toContain('recursive');
  });

  it('adds each file\'s content MD5 as etag with include=etag (an extension), the download\'s ETag', async () => {
    const { body } = await json<{ data: ListingJson }>(drive.list({ folder: '/ls', recursive: 'true', include: 'etag' }));

    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    expect(body.data.files.map((f) => [f.path, (f as { etag?: string }).etag])).toEqual([
      ['/ls/a.txt', md5('a.txt')],
      ['/ls/b.txt', md5('b.txt')],
      ['/ls/sub/deeper/B.txt', md5('B.txt')],
    ]);
    const download = await drive.download({ path: '/ls/a.txt' });
    expect(download.headers.get('etag')).toBe(`"${md5('a.txt')}"`);
    await download.arrayBuffer();

    const wrong = await json<ErrorJson>(drive.list({ folder: '/ls', include: 'url' }));
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.message).toContain('include');
  });
});

describe('POST /drive/folders', () => {
  it('creates the folder and its missing parents', async () => {
    const { status, body } = await json<{ data: FolderJson }>(drive.createFolder({ path: '/mk/a/b' }));

    expect(status).toBe(200);
    expect(Object.keys(body.data).sort()).toEqual(['created_at', 'id', 'path']);
    expect(body.data.path).toBe('/mk/a/b');
    expect(body.data.created_at).toMatch(ISO_UTC);
    const listing = await json<{ data: ListingJson }>(drive.list({ folder: '/mk', recursive: 'true' }));
    expect(listing.body.data.folders.map((f) => f.path)).toEqual(['/mk/a', '/mk/a/b']);
  });

  it('returns the existing folder when it already exists', async () => {
    const first = await json<{ data: FolderJson }>(drive.createFolder({ path: '/mk/again' }));
    const second = await json<{ data: FolderJson }>(drive.createFolder({ path: '/mk/again/' }));
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
  });

  it('answers 409 conflict where a file is, or below a file', async () => {
    await upload([{ data: 'f', filename: 'file.txt' }], [{ folder: '/mk' }]);
    for (const path of ['/mk/file.txt', '/mk/file.txt/below']) {
      const { status, body } = await json<ErrorJson>(drive.createFolder({ path }));
      expect(status).toBe(409);
      expect(body.error.code).toBe('conflict');
    }
  });

  it.each([
    ['invalid JSON', '{"path":', 400, 'bad_request'],
    ['a missing path', '{}', 400, 'bad_request'],
    ['a non-string path', '{"path": 7}', 400, 'bad_request'],
    ['a relative path', '{"path": "mk/rel"}', 422, 'validation_error'],
    ['a ".." segment', '{"path": "/mk/../etc"}', 422, 'validation_error'],
    ['the root', '{"path": "/"}', 422, 'validation_error'],
  ])('rejects %s', async (_, body, status, code) => {
    const res = await json<ErrorJson>(drive.createFolder(body));
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toMatch(/path|JSON/);
  });
});

describe('DELETE /drive/folders', () => {
  it('answers 422 naming path when it is missing', async () => {
    const { status, body } = await json<ErrorJson>(drive.deleteFolder({}));
    expect(status).toBe(422);
    expect(body.error).toEqual({ code: 'validation_error', message: expect.stringContaining('path'), request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it('answers 404 for a folder that does not exist', async () => {
    const { status, body } = await json<ErrorJson>(drive.deleteFolder({ path: '/rm-missing' }));
    expect(status).toBe(404);
    expect(body.error.code).toBe('not_found');
  });

  it('refuses to delete the root', async () => {
    const { status } = await json<ErrorJson>(drive.deleteFolder({ path: '/', recursive: 'true' }));
    expect(status).toBe(422);
  });

  it('deletes an empty folder', async () => {
    await drive.createFolder({ path: '/rm-empty' });
    const { status, body } = await json<{ data: DeletedJson }>(drive.deleteFolder({ path: '/rm-empty' }));
    expect(status).toBe(200);
    expect(body.data).toEqual({ deleted: true, path: '/rm-empty', files_deleted: 0 });
    expect((await drive.list({ folder: '/rm-empty' })).status).toBe(404);
  });

  it('answers 409 for a non-empty folder without recursive=true and deletes nothing', async () => {
    await upload([{ data: 'keep', filename: 'keep.txt' }], [{ folder: '/rm-full' }]);

    const { status, body } = await json<ErrorJson>(drive.deleteFolder({ path: '/rm-full', recursive: 'false' }));

    expect(status).toBe(409);
    expect(body.error.code).toBe('conflict');
    expect((await downloadBytes({ path: '/rm-full/keep.txt' })).toString()).toBe('keep');
  });

  it('deletes a tree with recursive=true, counts nested files and leaves nothing in S3 or DynamoDB', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `f${i}.txt`);
    const folders = ['/tree', '/tree/a', '/tree/a/b', '/tree/c'];
    await upload(
      names.map((filename) => ({ data: filename, filename })),
      names.map((_, i) => ({ folder: folders[i % folders.length] })),
    );
    await drive.createFolder({ path: '/tree/empty/leaf' });
    const before = await storedState(host.dataDir);

    const { status, body } = await json<{ data: DeletedJson }>(drive.deleteFolder({ path: '/tree', recursive: 'true' }));

    expect(status).toBe(200);
    expect(body.data).toEqual({ deleted: true, path: '/tree', files_deleted: 30 });
    const after = await storedState(host.dataDir);
    expect(after.nodeItems.filter((item) => item.path.S!.startsWith('/tree'))).toEqual([]);
    expect(before.objectKeys.length - after.objectKeys.length).toBe(30);
    expect((await drive.list({ folder: '/tree' })).status).toBe(404);
  });
});

describe('routing', () => {
  it('answers an unknown route with a JSON 404', async () => {
    const { status, body } = await json<ErrorJson>(drive.request('GET', '/drive/nothing'));
    expect(status).toBe(404);
    expect(body.error.code).toBe('not_found');
  });
});

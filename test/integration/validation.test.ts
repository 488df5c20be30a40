import { connect } from 'node:net';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/aws-limits';
import { DriveClient, type ErrorJson, type ListingJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storeBehindTheApi, storedState } from '../support/local-host';

const KEY = 'validation-key-AbJ9eQiGKwZ4ujW4Oc7R';

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `validation:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
  drive = new DriveClient(host.url, KEY);
});

afterAll(() => stopHost(host));

/** Asserts the error and that the drive still holds nothing. */
async function expectRejected(response: Promise<Response>, status: number, code: string, names: string): Promise<void> {
  const { status: actual, body } = await json<ErrorJson>(response);
  expect({ status: actual, code: body.error.code }).toEqual({ status, code });
  expect(body.error.message).toContain(names);
  const { objectKeys, nodeItems } = await storedState(host.dataDir);
  expect(objectKeys).toEqual([]);
  expect(nodeItems).toEqual([]);
}

const file = (filename = 'ok.txt') => ({ data: 'data', filename });

describe('POST /drive/upload rejects bad input and stores nothing', () => {
  it.each([
    ['metadata that is not JSON', [file()], '[{"path": ', 400, 'bad_request', 'metadata'],
    ['metadata that is not an array', [file()], '{"path": "/a.txt"}', 400, 'bad_request', 'metadata'],
    ['metadata entries that are not objects', [file()], '["/a.txt"]', 400, 'bad_request', 'metadata[0]'],
    ['a metadata field that is not a string', [file()], '[{"path": 5}]', 400, 'bad_request', 'metadata[0].path'],
    ['an unknown metadata field', [file()], '[{"filename": "x"}]', 400, 'bad_request', 'metadata[0].filename'],
    ['fewer metadata entries than files', [file('a'), file('b')], '[{}]', 400, 'bad_request', 'metadata'],
    ['more metadata entries than files', [file()], '[{}, {}]', 400, 'bad_request', 'metadata'],
    ['two files to one destination', [file('a'), file('b')], '[{"path": "/same"}, {"path": "/same"}]', 422, 'validation_error', 'files[1]'],
    ['a file where another file needs a folder', [file('a'), file('b')], '[{"path": "/x"}, {"path": "/x/y"}]', 422, 'validation_error', 'files[0]'],
    ['a relative path', [file()], '[{"path": "a.txt"}]', 422, 'validation_error', 'metadata[0].path'],
    ['a ".." segment', [file()], '[{"path": "/a/../b.txt"}]', 422, 'validation_error', 'metadata[0].path'],
    ['an empty segment', [file()], '[{"path": "/a//b.txt"}]', 422, 'validation_error', 'metadata[0].path'],
    ['a control character', [file()], '[{"path": "/a\\u0007.txt"}]', 422, 'validation_error', 'metadata[0].path'],
    ['a path over 1024 bytes', [file()], JSON.stringify([{ path: `/${'d/'.repeat(600)}x` }]), 422, 'validation_error', 'metadata[0].path'],
    ['a path over 64 levels deep', [file()], JSON.stringify([{ folder: `/${'d/'.repeat(64)}` }]), 422, 'validation_error', 'metadata[0].folder'],
    ['a segment over 255 bytes', [file()], JSON.stringify([{ name: 'é'.repeat(128) }]), 422, 'validation_error', 'metadata[0].name'],
    ['a name with "/"', [file()], '[{"name": "a/b.txt"}]', 422, 'validation_error', 'metadata[0].name'],
    ['the root as a file path', [file()], '[{"path": "/"}]', 422, 'validation_error', 'metadata[0].path'],
    ['a filename with "/"', [file('dir/evil.txt')], undefined, 422, 'validation_error', 'files[0]'],
    ['a filename of ".."', [file('..')], undefined, 422, 'validation_error', 'files[0]'],
    ['a lone surrogate', [file()], '[{"path": "/x\\ud800.txt"}]', 422, 'validation_error', 'metadata[0].path'],
    ['a folder and name together over 1024 bytes', [file()], JSON.stringify([{ folder: `/${'f'.repeat(250)}/${'g'.repeat(250)}/${'h'.repeat(250)}/${'i'.repeat(250)}`, name: 'n'.repeat(100) }]), 422, 'validation_error', 'metadata[0].folder'],
    ['a bad destination after a good one', [file('good.txt'), file('bad')], '[{}, {"folder": "nope"}]', 422, 'validation_error', 'metadata[1].folder'],
  ])('%s', async (_, files, metadata, status, code, names) => {
    await expectRejected(drive.upload(files, metadata), status, code, names);
  });

  it('a request without a files part', async () => {
    const form = new FormData();
    form.append('metadata', '[]');
    await expectRejected(drive.request('POST', '/drive/upload', { body: form }), 400, 'bad_request', 'files');
  });

  it('a files part that is not a file', async () => {
    const form = new FormData();
    form.append('files', 'just text');
    await expectRejected(drive.request('POST', '/drive/upload', { body: form }), 400, 'bad_request', 'files');
  });

  it('more files than one request may carry', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => file(`f${i}.txt`));
    await expectRejected(drive.upload(many), 422, 'validation_error', 'at most 1000 files');
  });

  it('a part that is not form-data, which a parser would skip', async () => {
    const body = [
      '--xyz',
      'Content-Type: text/plain',
      '',
      'a part with no Content-Disposition',
      '--xyz',
      'Content-Disposition: form-data; name="files"; filename="a.txt"',
      '',
      'kept?',
      '--xyz--',
      '',
    ].join('\r\n');
    await expectRejected(
      drive.request('POST', '/drive/upload', { body, headers: { 'Content-Type': 'multipart/form-data; boundary=xyz' } }),
      400,
      'bad_request',
      'parts',
    );
  });

  it('a body that is not multipart', async () => {
    const body = JSON.stringify({ files: ['a'] });
    await expectRejected(drive.request('POST', '/drive/upload', { body, headers: { 'Content-Type': 'application/json' } }), 400, 'bad_request', 'multipart/form-data');
  });

  it('a truncated multipart body', async () => {
    const body = '--xyz\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nno closing boundary';
    await expectRejected(
      drive.request('POST', '/drive/upload', { body, headers: { 'Content-Type': 'multipart/form-data; boundary=xyz' } }),
      400,
      'bad_request',
      'multipart',
    );
  });

  it('a file to where a folder is, or below a file: 409 and nothing stored', async () => {
    await drive.createFolder({ path: '/taken' });
    await drive.upload([file('plain.txt')]);
    const before = await storedState(host.dataDir);

    for (const metadata of [[{}, { path: '/taken' }], [{}, { path: '/plain.txt/below.txt' }]]) {
      const { status, body } = await json<ErrorJson>(drive.upload([file('first.txt'), file('second.txt')], metadata));
      expect(status).toBe(409);
      expect(body.error.code).toBe('conflict');
    }

    const after = await storedState(host.dataDir);
    expect(after.objectKeys.sort()).toEqual(before.objectKeys.sort());
    expect(after.nodeItems).toHaveLength(before.nodeItems.length);
    const root = await json<{ data: ListingJson }>(drive.list());
    expect(root.body.data.files.map((f) => f.path)).toEqual(['/plain.txt']);
    await drive.deleteFolder({ path: '/taken' });
    await drive.upload([file('plain.txt')], [{ path: '/taken' }]); // now a file may go there
  });
});

describe('request size', () => {
  it('answers a much larger body with 413 as JSON, which the client reads whole', async () => {
    const { status, body } = await json<ErrorJson>(drive.upload([{ data: Buffer.alloc(20 * 1024 * 1024, 1), filename: 'huge.bin' }]));
    expect(status).toBe(413);
    expect(body.error.code).toBe('payload_too_large');
  });

  it('answers 413 payload_too_large for a body over what one request can carry', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 1);
    const { status, body } = await json<ErrorJson>(drive.upload([{ data: big, filename: 'big.bin' }]));
    expect(status).toBe(413);
    expect(body.error.code).toBe('payload_too_large');
  });
});

describe('folders per upload', () => {
  it('refuses with 422, before storing anything, a request whose destinations name over 1,000 folders', async () => {
    const files = Array.from({ length: 501 }, (_, i) => ({ data: 'x', filename: `f${i}.txt` }));
    const { status, body } = await json<ErrorJson>(drive.upload(files, files.map((_, i) => ({ folder: `/many-${i}/inner` }))));
    expect({ status, code: body.error.code }).toEqual({ status: 422, code: 'validation_error' });
    expect(body.error.message).toContain('1002 folders');
    expect((await drive.list({ folder: '/many-0' })).status).toBe(404);
  });
});

/** A one-file upload body of exactly `bytes`, and its Content-Type. */
function uploadBodyOf(bytes: number, filename: string): { body: Buffer; type: string } {
  const boundary = 'limit-boundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, Buffer.alloc(bytes - head.length - tail.length, 7), tail]), type: `multipart/form-data; boundary=${boundary}` };
}

describe("request size: where Lambda's 6 MB payload ends (lib/aws-limits.ts)", () => {
  it('stores a body of 4,500,000 bytes, the most one upload carries', async () => {
    const { body, type } = uploadBodyOf(MAX_REQUEST_BODY_BYTES, 'at-limit.bin');
    const { status } = await json(drive.request('POST', '/drive/upload', { body, headers: { 'Content-Type': type } }));
    expect(status).toBe(200);
  });

  it('refuses a 4.5 MiB body with 413, as Lambda does once base64 makes it larger than 6 MB', async () => {
    const { body, type } = uploadBodyOf(4.5 * 1024 * 1024, 'over-lambda.bin');
    const { status, body: answer } = await json<ErrorJson>(drive.request('POST', '/drive/upload', { body, headers: { 'Content-Type': type } }));
    expect(status).toBe(413);
    expect(answer.error.code).toBe('payload_too_large');
    const listing = await json<{ data: ListingJson }>(drive.list());
    expect(listing.body.data.files.map((f) => f.name)).not.toContain('over-lambda.bin');
  });
});

describe('the local host as API Gateway', () => {
  it('answers a method a path has no route for as the stack does: the JSON 404', async () => {
    const { status, body } = await json<ErrorJson>(drive.request('PUT', '/drive/list'));
    expect(status).toBe(404);
    expect(body.error.code).toBe('not_found');
  });

  it.each(['//[', 'http://[/drive/list'])('answers the odd request target %j with a JSON 404, not a failure', async (target) => {
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(host.url).port), '127.0.0.1', () => socket.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 404 /);
    expect(reply).toContain('"not_found"');
  });

  it('reads a path that starts with "//" as a path', async () => {
    expect((await drive.request('GET', '//drive/list')).status).toBe(404);
  });
});

describe('query parameters', () => {
  it('rejects a parameter given twice, naming it', async () => {
    const { status, body } = await json<ErrorJson>(drive.request('GET', '/drive/list?folder=/a&folder=/b'));
    expect(status).toBe(422);
    expect(body.error.message).toContain('folder');
  });
});

describe('names', () => {
  it('refuses with 422 a filename whose bytes are not valid UTF-8, rather than store it as U+FFFD', async () => {
    const head = Buffer.from('--n\r\nContent-Disposition: form-data; name="files"; filename="caf');
    const body = Buffer.concat([head, Buffer.from([0xe9, 0xff]), Buffer.from('.txt"\r\n\r\nx\r\n--n--\r\n')]);
    const { status, body: answer } = await json<ErrorJson>(drive.request('POST', '/drive/upload', { body, headers: { 'Content-Type': 'multipart/form-data; boundary=n' } }));
    expect({ status, code: answer.error.code }).toEqual({ status: 422, code: 'validation_error' });
    expect(answer.error.message).toContain('U+FFFD');
  });

  it('refuses a name that differs from another only by an invisible character', async () => {
    expect((await drive.upload([{ data: 'a', filename: 'twin.txt' }], [{ folder: '/names' }])).status).toBe(200);
    const { status, body } = await json<ErrorJson>(drive.upload([{ data: 'b', filename: 'twin\u200B.txt' }], [{ folder: '/names' }]));
    expect({ status, code: body.error.code }).toEqual({ status: 422, code: 'validation_error' });
  });

  it.each([
    ['U+034F', 're\u034Fport.txt'],
    ['U+115F', '\u115F.txt'],
    ['U+1160', 'a\u1160.txt'],
    ['U+3164', '\u3164'],
    ['U+FFA0', 'x\uFFA0.txt'],
    ['U+2800', '\u2800.txt'],
  ])('refuses with 422 a name holding %s, drawn as nothing, naming it', async (code, name) => {
    for (const response of [
      drive.upload([{ data: 'x', filename: name }], [{ folder: '/names' }]),
      drive.upload([file()], [{ path: `/names/${name}` }]),
      drive.createFolder({ path: `/names/${name}` }),
    ]) {
      const { status, body } = await json<ErrorJson>(response);
      expect({ status, code: body.error.code }).toEqual({ status: 422, code: 'validation_error' });
      expect(body.error.message).toContain(code);
    }
  });

  it.each([' lead.txt', 'trail.txt ', '  '])('refuses with 422 the name %j, which starts or ends with a space', async (name) => {
    for (const response of [
      drive.upload([{ data: 'x', filename: name }], [{ folder: '/names' }]),
      drive.upload([file()], [{ folder: `/names/${name}` }]),
      drive.createFolder({ path: `/names/${name}` }),
    ]) {
      const { status, body } = await json<ErrorJson>(response);
      expect({ status, code: body.error.code }).toEqual({ status: 422, code: 'validation_error' });
      expect(body.error.message).toMatch(/starts or ends with a space/);
    }
  });

  it('refuses a move or copy to such a name, naming `to`', async () => {
    expect((await drive.upload([{ data: 'm', filename: 'mover.txt' }], [{ folder: '/names' }])).status).toBe(200);
    for (const route of ['/drive/move', '/drive/copy']) {
      for (const to of ['/names/mover\u3164.txt', '/names/mover.txt ']) {
        const { status, body } = await json<ErrorJson>(drive.request('POST', route, { body: JSON.stringify({ from: '/names/mover.txt', to }), headers: { 'Content-Type': 'application/json' } }));
        expect({ status, code: body.error.code }).toEqual({ status: 422, code: 'validation_error' });
        expect(body.error.message).toMatch(/^to /);
      }
    }
  });

  it('still lists, pages over, downloads, shares, moves and deletes a name stored before these rules', async () => {
    // Prepare: names today's rules refuse, stored as an earlier version stored them.
    const folder = '/legacy\u3164';
    const names = ['a.txt', 'b\u2800.txt', 'c.txt ', ' d.txt', 'e.txt'];
    for (const name of names) await storeBehindTheApi(host.dataDir, 'validation', `${folder}/${name}`, `bytes of ${name}`);
    const post = (route: string, body: unknown) => drive.request('POST', route, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

    // Act and assess: a listing, whole and a page at a time (each cursor names one of these paths).
    const listing = await json<{ data: ListingJson }>(drive.list({ folder }));
    expect(listing.status).toBe(200);
    expect(listing.body.data.files.map((entry) => entry.name).sort()).toEqual([...names].sort());
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { folder, limit: '1', ...(cursor ? { cursor } : {}) };
      const page = await json<{ data: ListingJson & { next_cursor: string | null } }>(drive.list(query));
      expect(page.status).toBe(200);
      paged.push(...page.body.data.files.map((entry) => entry.name));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(paged.sort()).toEqual([...names].sort());

    const byPath = await drive.download({ path: `${folder}/c.txt ` });
    expect({ status: byPath.status, text: await byPath.text() }).toEqual({ status: 200, text: 'bytes of c.txt ' });
    const byName = await drive.download({ folder, name: 'b\u2800.txt' });
    expect({ status: byName.status, text: await byName.text() }).toEqual({ status: 200, text: 'bytes of b\u2800.txt' });
    expect((await post('/drive/links', { path: `${folder}/ d.txt` })).status).toBe(200);

    // A move or copy out of it to a valid name works; into another refused name does not.
    expect((await post('/drive/move', { from: `${folder}/c.txt `, to: '/renamed/c.txt' })).status).toBe(200);
    expect((await post('/drive/copy', { from: `${folder}/ d.txt`, to: '/renamed/d.txt' })).status).toBe(200);
    expect((await post('/drive/move', { from: `${folder}/a.txt`, to: `${folder}/a\u3164.txt` })).status).toBe(422);

    const deleted = await drive.request('DELETE', `/drive/files?${new URLSearchParams({ path: `${folder}/b\u2800.txt` })}`);
    expect(deleted.status).toBe(200);
    expect((await drive.deleteFolder({ path: folder, recursive: 'true' })).status).toBe(200);
    expect((await drive.list({ folder })).status).toBe(404);
    expect((await json<{ data: ListingJson }>(drive.list({ folder: '/renamed' }))).body.data.files.map((entry) => entry.name)).toEqual(['c.txt', 'd.txt']);
  });

  it('serves a name of fullwidth dots and slashes with a fallback filename that is no path', async () => {
    const name = '\uFF0E\uFF0E\uFF0F\uFF0E\uFF0E\uFF0F.bashrc';
    expect((await drive.upload([{ data: 'x', filename: name }], [{ folder: '/names' }])).status).toBe(200);
    const res = await drive.download({ folder: '/names', name });
    expect(res.status).toBe(200);
    const fallback = /filename="([^"]*)"/.exec(res.headers.get('content-disposition') ?? '')![1];
    expect(fallback).not.toContain('/');
    expect(fallback).not.toMatch(/^\.{1,2}$/);
  });
});

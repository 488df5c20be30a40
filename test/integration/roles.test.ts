import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storedState } from '../support/local-host';

// Key roles and prefixes, and the admin routes (extensions of the spec, for the dashboard), over real HTTP.

const SECRETS = {
  admin: 'roles-admin-29hVHaTbDrEgNFVFcigNCYZW',
  readWrite: 'roles-rw-R0usiepXdS8DWuMQlx8K9I5TJ8X',
  readOnly: 'roles-ro-R0usiepXdS8DWuMQlx8K9I5TJ8X',
  uploadOnly: 'roles-up-R0usiepXdS8DWuMQlx8K9I5TJ8X',
  scoped: 'roles-scoped-H2WYbhMyZ9SZaRESTDG4FsW',
  otherAdmin: 'roles-other-29hVHaTbDrEgNFVFcigNCYZW',
};

interface KeyJson {
  id: string;
  name: string;
  role: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  last4: string;
  revoked_at: string | null;
}

let host: RunningHost;
const client = (secret: string) => new DriveClient(host.url, secret);

beforeAll(async () => {
  host = await startHost({
    DRIVE_RATE_LIMITS: 'off',
    DRIVE_API_KEYS: [
      `d:${SECRETS.admin}:admin`,
      `d:${SECRETS.readWrite}`,
      `d:${SECRETS.readOnly}:read-only`,
      `d:${SECRETS.uploadOnly}:upload-only`,
      `d:${SECRETS.scoped}:read-write:/reports`,
      `e:${SECRETS.otherAdmin}:admin`,
    ].join(','),
  });
  const admin = client(SECRETS.admin);
  await admin.upload([{ data: 'q3', filename: 'q3.txt' }, { data: 'pay', filename: 'pay.txt' }], [{ folder: '/reports' }, { folder: '/payroll' }]);
});

afterAll(() => stopHost(host));

function sendJson(drive: DriveClient, method: string, path: string, body: unknown) {
  return drive.request(method, path, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
}

let uploads = 0;

/** One call of each endpoint, on paths inside /reports, whose answer says whether the role may call it. */
const CALLS: Record<string, (drive: DriveClient) => Promise<Response>> = {
  // A new name each time: an upload-only key may not replace what another role stored.
  upload: (drive) => drive.upload([{ data: 'x', filename: `role-${++uploads}.txt` }], [{ folder: '/reports/roles' }]),
  'large upload': (drive) => sendJson(drive, 'POST', '/drive/uploads', { path: '/reports/roles/big.bin', size: 10 }),
  download: (drive) => drive.download({ path: '/reports/q3.txt' }),
  list: (drive) => drive.list({ folder: '/reports' }),
  'create folder': (drive) => drive.createFolder({ path: '/reports/made' }),
  'delete folder': (drive) => drive.deleteFolder({ path: '/reports/never-there' }), // 404 when allowed
  'list keys': (drive) => drive.request('GET', '/drive/keys'),
};

describe('key roles (an extension of the spec)', () => {
  it.each([
    ['admin', SECRETS.admin, ['upload', 'large upload', 'download', 'list', 'create folder', 'delete folder', 'list keys']],
    ['read-write', SECRETS.readWrite, ['upload', 'large upload', 'download', 'list', 'create folder', 'delete folder']],
    ['read-only', SECRETS.readOnly, ['download', 'list']],
    ['upload-only', SECRETS.uploadOnly, ['upload', 'large upload', 'create folder']],
  ])('lets a %s key call exactly its endpoints; the rest answer 403 forbidden', async (role, secret, allowed) => {
    for (const [name, call] of Object.entries(CALLS)) {
      const res = await call(client(secret));
      if (allowed.includes(name)) {
        await res.arrayBuffer();
        expect({ role, name, status: res.status }).toEqual({ role, name, status: name === 'delete folder' ? 404 : 200 });
      } else {
        const { error } = (await res.json()) as ErrorJson;
        expect({ role, name, status: res.status, code: error.code }).toEqual({ role, name, status: 403, code: 'forbidden' });
        expect(error.message).toContain(role);
      }
    }
  });

  it('confines a key with a prefix to that folder on every endpoint, storing nothing outside it', async () => {
    const scoped = client(SECRETS.scoped);
    const before = await storedState(host.dataDir);

    const outside = [
      scoped.upload([{ data: 'x', filename: 'x.txt' }, { data: 'y', filename: 'y.txt' }], [{ folder: '/reports' }, { folder: '/payroll' }]),
      sendJson(scoped, 'POST', '/drive/uploads', { path: '/payroll/big.bin', size: 10 }),
      scoped.download({ path: '/payroll/pay.txt' }),
      scoped.list(),
      scoped.list({ folder: '/payroll' }),
      scoped.createFolder({ path: '/payroll/sub' }),
      scoped.deleteFolder({ path: '/payroll', recursive: 'true' }),
      scoped.deleteFolder({ path: '/', recursive: 'true' }),
      scoped.download({ path: '/reportsX/q3.txt' }), // a sibling that merely starts with the prefix
    ];
    const answers = await Promise.all(outside.map((r) => json<ErrorJson>(r)));
    expect(answers.map((a) => [a.status, a.body.error.code])).toEqual(outside.map(() => [403, 'forbidden']));
    expect(answers[0].body.error.message).toContain('files[1] destination /payroll/y.txt is outside /reports');
    expect(await storedState(host.dataDir)).toEqual(before);

    expect(await (await scoped.download({ path: '/reports/q3.txt' })).text()).toBe('q3');
    const listed = await json<{ data: { files: { path: string }[] } }>(scoped.list({ folder: '/reports', recursive: 'true' }));
    expect(listed.body.data.files.map((f) => f.path)).toContain('/reports/q3.txt');
  });

  it('tells a key confined to a folder nothing of what stands above it', async () => {
    const admin = client(SECRETS.admin);
    await admin.upload([{ data: 'x', filename: 'taken' }], [{ folder: '/' }]);
    const scoped = new DriveClient(host.url, SECRETS.scoped);
    // /reports is the key's folder; a file at /reports/q3.txt is inside it, and may be named.
    const inside = await json<ErrorJson>(scoped.upload([{ data: 'x', filename: 'y.txt' }], [{ folder: '/reports/q3.txt' }]));
    expect(inside.status).toBe(409);
    expect(inside.body.error.message).toContain('/reports/q3.txt');
    const created = await json<ErrorJson>(scoped.createFolder({ path: '/reports/q3.txt/deeper' }));
    expect(created.status).toBe(409);
    expect(created.body.error.message).not.toMatch(/\/taken|\/payroll/);
  });

  it("answers a key confined elsewhere the large upload another key started as one that does not exist, without saying where it writes", async () => {
    const started = await json<{ data: { upload_id: string } }>(sendJson(client(SECRETS.readWrite), 'POST', '/drive/uploads', { path: '/payroll/big.bin', size: 10 }));
    const id = started.body.data.upload_id;

    const complete = await json<ErrorJson>(sendJson(client(SECRETS.scoped), 'POST', `/drive/uploads/${id}/complete`, { parts: [{ number: 1, etag: '"x"' }] }));
    const abort = await json<ErrorJson>(client(SECRETS.scoped).request('DELETE', `/drive/uploads/${id}`));
    expect([complete.status, abort.status]).toEqual([404, 404]);
    for (const answer of [complete, abort]) expect(answer.body.error.message).not.toContain('payroll');
    expect((await json(client(SECRETS.readWrite).request('DELETE', `/drive/uploads/${id}`))).status).toBe(200);
  });

  it('binds a large upload to the key that started it: to any other key but an admin it does not exist', async () => {
    const owner = client(SECRETS.readWrite);
    const started = await json<{ data: { upload_id: string } }>(sendJson(owner, 'POST', '/drive/uploads', { path: '/reports/bound.bin', size: 10 }));
    expect(started.status).toBe(200);
    const id = started.body.data.upload_id;
    const never = '00000000-0000-4000-8000-000000000000';
    // Every route, as another key sees it and as anyone sees a session that never was: one answer, id aside.
    const routes = (key: string, upload: string) => [
      client(key).request('GET', `/drive/uploads/${upload}/parts`),
      sendJson(client(key), 'POST', `/drive/uploads/${upload}/complete`, { parts: [{ number: 1, etag: '"x"' }] }),
      client(key).request('DELETE', `/drive/uploads/${upload}`),
    ];
    const seen = async (key: string, upload: string) =>
      (await Promise.all(routes(key, upload).map((res) => json<ErrorJson>(res)))).map(({ status, body }) => ({
        status,
        error: { code: body.error?.code, message: body.error?.message.replace(upload, '<id>') },
      }));
    const missing = await seen(SECRETS.uploadOnly, never);
    expect(missing.map((answer) => answer.status)).toEqual([404, 404, 404]);
    // An upload-only key of the whole drive, and a key confined to the very folder the session writes to.
    expect(await seen(SECRETS.uploadOnly, id)).toEqual(missing);
    expect(await seen(SECRETS.scoped, id)).toEqual(await seen(SECRETS.scoped, never));

    // The session is whole: its owner lists its parts and aborts it; an admin may see any of its drive's.
    expect((await owner.request('GET', `/drive/uploads/${id}/parts`)).status).toBe(200);
    expect((await client(SECRETS.admin).request('GET', `/drive/uploads/${id}/parts`)).status).toBe(200);
    expect((await json(owner.request('DELETE', `/drive/uploads/${id}`))).status).toBe(200);
  });
});

describe('an upload-only key can neither read nor destroy', () => {
  it('refuses to replace a file, leaving it whole, and its 409s say nothing of what stands where', async () => {
    const admin = client(SECRETS.admin);
    const pusher = client(SECRETS.uploadOnly);
    await admin.upload([{ data: 'salaries', filename: 'payroll.csv' }], [{ folder: '/inbox/2026' }]);

    const answers = await Promise.all([
      pusher.upload([{ data: '', filename: 'payroll.csv' }], [{ folder: '/inbox/2026' }]),
      pusher.upload([{ data: 'x', filename: 'below.csv' }], [{ folder: '/inbox/2026/payroll.csv' }]),
      pusher.upload([{ data: 'x', filename: '2026' }], [{ folder: '/inbox' }]),
      sendJson(pusher, 'POST', '/drive/uploads', { path: '/inbox/2026/payroll.csv/big.bin', size: 10 }),
    ].map((r) => json<ErrorJson>(r)));

    for (const answer of answers) {
      expect({ status: answer.status, code: answer.body.error.code }).toEqual({ status: 409, code: 'conflict' });
      expect(answer.body.error.message).not.toMatch(/payroll|2026|is a file|is a folder/);
    }
    expect(await (await admin.download({ path: '/inbox/2026/payroll.csv' })).text()).toBe('salaries');
  });

  it('stores new files, and a read-write key may still replace them', async () => {
    const pusher = client(SECRETS.uploadOnly);
    expect((await pusher.upload([{ data: 'new', filename: 'fresh.csv' }], [{ folder: '/inbox/2027' }])).status).toBe(200);
    expect((await client(SECRETS.readWrite).upload([{ data: 'newer', filename: 'fresh.csv' }], [{ folder: '/inbox/2027' }])).status).toBe(200);
    expect(await (await client(SECRETS.admin).download({ path: '/inbox/2027/fresh.csv' })).text()).toBe('newer');
  });
});

describe('admin routes: /drive/keys (an extension of the spec)', () => {
  it("lists the drive's keys, without secrets, and none of another drive's", async () => {
    const { status, body } = await json<{ data: { keys: KeyJson[] } }>(client(SECRETS.admin).request('GET', '/drive/keys'));

    expect(status).toBe(200);
    expect(body.data.keys.map((k) => [k.role, k.prefix, k.last4])).toEqual([
      ['admin', '/', SECRETS.admin.slice(-4)],
      ['read-write', '/', SECRETS.readWrite.slice(-4)],
      ['read-only', '/', SECRETS.readOnly.slice(-4)],
      ['upload-only', '/', SECRETS.uploadOnly.slice(-4)],
      ['read-write', '/reports', SECRETS.scoped.slice(-4)],
    ]);
    const admin = body.data.keys[0];
    expect(Object.keys(admin).sort()).toEqual(['created_at', 'id', 'last4', 'last_used_at', 'name', 'prefix', 'revoked_at', 'role']);
    expect(admin.last_used_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/)); // this very request
    const text = JSON.stringify(body);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  });

  it('creates a key whose secret is shown once and works at once with its role; revoking it answers 401 after', async () => {
    const admin = client(SECRETS.admin);
    const created = await json<{ data: { key: KeyJson; secret: string } }>(sendJson(admin, 'POST', '/drive/keys', { name: 'nightly export', role: 'upload-only', prefix: '/exports/' }));

    expect(created.status).toBe(200);
    expect(created.body.data.key).toMatchObject({ name: 'nightly export', role: 'upload-only', prefix: '/exports', last4: created.body.data.secret.slice(-4), revoked_at: null });
    expect(created.body.data.secret).toMatch(/^drv_[A-Za-z0-9_-]{43}$/);
    const job = client(created.body.data.secret);
    expect((await job.upload([{ data: 'rows', filename: 'rows.csv' }], [{ folder: '/exports/2026-11-21' }])).status).toBe(200);
    expect((await job.list({ folder: '/exports' })).status).toBe(403);

    const listed = await json<{ data: { keys: KeyJson[] } }>(admin.request('GET', '/drive/keys'));
    expect(JSON.stringify(listed.body)).not.toContain(created.body.data.secret);

    const revoked = await json<{ data: { key: KeyJson } }>(admin.request('DELETE', `/drive/keys/${created.body.data.key.id}`));
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.key.revoked_at).toEqual(expect.any(String));
    const after = await json<ErrorJson>(job.upload([{ data: 'rows', filename: 'rows.csv' }], [{ folder: '/exports' }]));
    expect([after.status, after.body.error.code]).toEqual([401, 'unauthorized']);
  });

  it.each([
    ['no name', { role: 'read-only' }, 400, 'bad_request', 'name'],
    ['an empty name', { name: '  ' }, 422, 'validation_error', 'name'],
    ['an unknown role', { name: 'x', role: 'owner' }, 422, 'validation_error', 'role'],
    ['an admin with a prefix', { name: 'x', role: 'admin', prefix: '/reports' }, 422, 'validation_error', 'admin'],
    ['a relative prefix', { name: 'x', prefix: 'reports' }, 422, 'validation_error', 'prefix'],
    ['an unknown field', { name: 'x', drive: 'e' }, 400, 'bad_request', 'drive'],
  ])('refuses to create a key with %s', async (_, body, status, code, names) => {
    const res = await json<ErrorJson>(sendJson(client(SECRETS.admin), 'POST', '/drive/keys', body));
    expect(res.status).toBe(status);
    expect(res.body.error).toEqual({ code, message: expect.stringContaining(names), request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it("keeps the drive's last admin key, and answers 404 for another drive's key or an unknown id", async () => {
    const admin = client(SECRETS.admin);
    const { body } = await json<{ data: { keys: KeyJson[] } }>(admin.request('GET', '/drive/keys'));
    const self = body.data.keys.find((k) => k.role === 'admin')!;
    const last = await json<ErrorJson>(admin.request('DELETE', `/drive/keys/${self.id}`));
    expect([last.status, last.body.error.code]).toEqual([409, 'conflict']);
    expect(last.body.error.message).toContain('last admin key');

    const others = await json<{ data: { keys: KeyJson[] } }>(client(SECRETS.otherAdmin).request('GET', '/drive/keys'));
    expect(others.body.data.keys.map((k) => k.last4)).toEqual([SECRETS.otherAdmin.slice(-4)]);
    for (const id of [others.body.data.keys[0].id, 'ffffffffffffffff', 'not-an-id']) {
      expect((await json(admin.request('DELETE', `/drive/keys/${id}`))).status).toBe(404);
    }
  });
});

describe('two admins revoking each other at once', () => {
  it('leaves each drive exactly one live admin: one revoke wins, the other gets 409 or 401 (10 drives)', async () => {
    const drives = Array.from({ length: 10 }, (_, i) => `race${i}`);
    const secrets = drives.map((drive) => [`${drive}-first-admin-AbJ9eQiGKwZ4ujW4Oc7R`, `${drive}-second-admin-ace963cW1zaYDEO7Y6`]);
    const raced = await startHost({ DRIVE_RATE_LIMITS: 'off', DRIVE_API_KEYS: drives.flatMap((drive, i) => secrets[i].map((secret) => `${drive}:${secret}:admin`)).join(',') });
    try {
      for (const [i, drive] of drives.entries()) {
        const [a, b] = secrets[i].map((secret) => new DriveClient(raced.url, secret));
        const listed = await json<{ data: { keys: KeyJson[] } }>(a.request('GET', '/drive/keys'));
        const idOf = (secret: string) => listed.body.data.keys.find((key) => key.last4 === secret.slice(-4))!.id;
        const [byA, byB] = await Promise.all([a.request('DELETE', `/drive/keys/${idOf(secrets[i][1])}`), b.request('DELETE', `/drive/keys/${idOf(secrets[i][0])}`)]);
        // The loser is refused as the last admin (409) if its key was checked before the winner's revoke
        // landed, or as an unknown key (401) if after: which comes first is the machine's timing, not Drive's.
        const [won, lost] = [byA.status, byB.status].sort();
        expect({ drive, won, lost: [401, 409].includes(lost) }).toEqual({ drive, won: 200, lost: true });
        const answers = await Promise.all([a, b].map((client) => client.request('GET', '/drive/keys')));
        expect({ drive, working: answers.filter((answer) => answer.status === 200).length }).toEqual({ drive, working: 1 });
      }
    } finally {
      await stopHost(raced);
    }
  });
});


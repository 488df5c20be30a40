import { createHash } from 'node:crypto';
import { DriveClient, type ErrorJson, json } from '../support/api-client';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

// GET /drive/whoami (an extension of the spec): what the calling key may do, for any valid key of any role.

const SECRETS = {
  admin: 'whoami-admin-H2WYbhMyZ9SZaRESTDG4FsW',
  readWrite: 'whoami-rw-f6UrpcrOhwuH2C8YgGgAiPrZeO',
  readOnly: 'whoami-ro-g0ElMjwwpO034AS3G267Ltsd75',
  uploadOnly: 'whoami-up-SkBQlbeABkzxFaRltvH2qxy1Wn',
  scoped: 'whoami-scoped-XLSRCq7SRGhk5TMH4GBKqX',
};

interface WhoamiJson {
  data: { role: string; prefix: string; drive: string; key_id: string };
}

let host: RunningHost;
const client = (secret: string) => new DriveClient(host.url, secret);

beforeAll(async () => {
  // The spec's rate limits, so that the route's own bucket shows in its headers. The worker's host for files
  // with the spec's limits (`sharedHost`): rate limits are per key, and these drives are this file's own.
  host = await sharedHost({
    DRIVE_API_KEYS: [
      `whoami:${SECRETS.admin}:admin`,
      `whoami:${SECRETS.readWrite}`,
      `whoami:${SECRETS.readOnly}:read-only:/reports`,
      `whoami:${SECRETS.uploadOnly}:upload-only`,
      `whoami-e:${SECRETS.scoped}:read-write:/exports/nightly`,
    ].join(','),
  });
});

afterAll(() => stopHost(host));

describe('GET /drive/whoami', () => {
  it.each([
    ['admin', SECRETS.admin, { role: 'admin', prefix: '/', drive: 'whoami' }],
    ['read-write', SECRETS.readWrite, { role: 'read-write', prefix: '/', drive: 'whoami' }],
    ['read-only', SECRETS.readOnly, { role: 'read-only', prefix: '/reports', drive: 'whoami' }],
    ['upload-only', SECRETS.uploadOnly, { role: 'upload-only', prefix: '/', drive: 'whoami' }],
    ['confined read-write', SECRETS.scoped, { role: 'read-write', prefix: '/exports/nightly', drive: 'whoami-e' }],
  ])('answers a %s key its role, prefix, drive and key id; never its secret or hash', async (_name, secret, expected) => {
    // Act
    const answer = await json<WhoamiJson>(client(secret).request('GET', '/drive/whoami'));

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ ...expected, key_id: expect.any(String) });
    const text = JSON.stringify(answer.body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(createHash('sha256').update(secret).digest('hex'));
  });

  it('names the key by the id the admin routes list it under', async () => {
    const me = await json<WhoamiJson>(client(SECRETS.readOnly).request('GET', '/drive/whoami'));
    const listed = await json<{ data: { keys: { id: string; last4: string }[] } }>(client(SECRETS.admin).request('GET', '/drive/keys'));

    const key = listed.body.data.keys.find((k) => k.last4 === SECRETS.readOnly.slice(-4));
    expect(key?.id).toBe(me.body.data.key_id);
  });

  it('takes tokens from a bucket of its own, 60 a minute, for every role', async () => {
    const res = await client(SECRETS.uploadOnly).request('GET', '/drive/whoami');
    await res.arrayBuffer();

    expect(res.headers.get('ratelimit-limit')).toBe('60');
    // The upload bucket of the same key is untouched.
    const upload = await client(SECRETS.uploadOnly).upload([{ data: 'x', filename: 'x.txt' }], [{ folder: '/whoami' }]);
    await upload.arrayBuffer();
    expect([upload.status, upload.headers.get('ratelimit-limit'), upload.headers.get('ratelimit-remaining')]).toEqual([200, '100', '99']);
  });

  it('answers 401 for a missing or unknown key, as every route does', async () => {
    const unknown = await json<ErrorJson>(client('whoami-nobody-HUjHPIBAxHnYhF53JE196').request('GET', '/drive/whoami'));
    const missing = await json<ErrorJson>(fetch(`${host.url}/drive/whoami`));

    expect([unknown.status, unknown.body.error.code]).toEqual([401, 'unauthorized']);
    expect([missing.status, missing.body.error.code]).toEqual([401, 'unauthorized']);
  });
});

import { DriveClient, type ErrorJson, type ListingJson, json } from '../support/api-client';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

const A = 'security-a-key-HUjHPIBAxHnYhF53JE196';
const B = 'security-b-key-HUjHPIBAxHnYhF53JE196';
const WRONG = 'security-wrong-key-oFGRbyvwuP5fmk1g';

let host: RunningHost;

beforeAll(async () => {
  host = await sharedHost({ DRIVE_API_KEYS: `a:${A},b:${B}`, DRIVE_RATE_LIMITS: 'off' });
});

afterAll(() => stopHost(host));

describe('security', () => {
  it("keeps drive B out of reach of drive A's key on every endpoint", async () => {
    const a = new DriveClient(host.url, A);
    const b = new DriveClient(host.url, B);
    expect((await b.upload([{ data: 'b secret', filename: 's.txt' }], [{ folder: '/private' }])).status).toBe(200);

    expect((await a.download({ path: '/private/s.txt' })).status).toBe(404);
    expect((await a.download({ folder: '/private', name: 's.txt' })).status).toBe(404);
    expect((await a.list({ folder: '/private' })).status).toBe(404);
    const root = await json<{ data: ListingJson }>(a.list({ recursive: 'true' }));
    expect(root.body.data).toEqual({ folder: '/', files: [], folders: [] });
    expect((await a.deleteFolder({ path: '/private', recursive: 'true' })).status).toBe(404);
    expect((await json<ErrorJson>(a.deleteFolder({ path: '/', recursive: 'true' }))).status).toBe(422);
    // A's writes at B's paths land in A's drive only.
    expect((await a.upload([{ data: 'a', filename: 's.txt' }], [{ folder: '/private' }])).status).toBe(200);
    expect(await (await b.download({ path: '/private/s.txt' })).text()).toBe('b secret');
  });

  it('serves any file as an attachment that cannot run in the API origin', async () => {
    const a = new DriveClient(host.url, A);
    await a.upload([{ data: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', filename: 'x.svg', type: 'image/svg+xml' }, { data: '<script>alert(1)</script>', filename: 'x.html' }]);
    for (const path of ['/x.svg', '/x.html']) {
      const res = await a.download({ path });
      expect(res.headers.get('content-disposition')).toMatch(/^attachment;/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    }
  });

  it('never writes a key or an Authorization header to its logs', async () => {
    const a = new DriveClient(host.url, A);
    await a.list();
    await new DriveClient(host.url, WRONG).list();
    await fetch(`${host.url}/drive/list?folder=/x`, { headers: { Authorization: `Basic ${Buffer.from(`u:${A}`).toString('base64')}` } });
    await a.request('POST', '/drive/upload', { body: 'not multipart', headers: { 'Content-Type': 'text/plain' } });
    const output = host.output();
    for (const secret of [A, B, WRONG, Buffer.from(`u:${A}`).toString('base64')]) expect(output).not.toContain(secret);
    expect(output.toLowerCase()).not.toContain('authorization');
  });
});

import { DriveClient, type ErrorJson, type FileJson, type ListingJson, json } from '../support/api-client';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

const ALPHA = 'alpha-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';
const ALPHA_TWO = 'alpha-second-key-ace963cW1zaYDEO7Y6';
const BETA = 'beta-key-R0usiepXdS8DWuMQlx8K9I5TJ8X';

let host: RunningHost;

beforeAll(async () => {
  host = await sharedHost({ DRIVE_API_KEYS: `alpha:${ALPHA},alpha:${ALPHA_TWO},beta:${BETA}`, DRIVE_RATE_LIMITS: 'off' });
});

afterAll(() => stopHost(host));

const ENDPOINTS: [string, string][] = [
  ['POST', '/drive/upload'],
  ['GET', '/drive/download?path=/x'],
  ['GET', '/drive/list'],
  ['POST', '/drive/folders'],
  ['DELETE', '/drive/folders?path=/x'],
];

describe('Authorization: Bearer <key>', () => {
  it.each(ENDPOINTS)('%s %s answers 401 unauthorized without a key', async (method, path) => {
    const res = await fetch(`${host.url}${path}`, { method });
    const body = (await res.json()) as ErrorJson;
    expect(res.status).toBe(401);
    expect(body.error.code).toBe('unauthorized');
  });

  it.each([
    ['an unknown key', `Bearer not-a-key-of-this-drive`],
    ['another scheme', `Basic ${Buffer.from(`user:${ALPHA}`).toString('base64')}`],
    ['a bare key', ALPHA],
    ['an empty bearer', 'Bearer '],
  ])('answers 401 for %s, before any other work', async (_, authorization) => {
    // The body is malformed too: a 401 shows the key was checked first.
    const res = await fetch(`${host.url}/drive/folders`, { method: 'POST', headers: { Authorization: authorization }, body: '{' });
    const body = (await res.json()) as ErrorJson;
    expect(res.status).toBe(401);
    expect(body.error.code).toBe('unauthorized');
    expect(JSON.stringify(body)).not.toContain(ALPHA);
  });

  it('accepts the scheme in any case', async () => {
    const res = await fetch(`${host.url}/drive/list`, { headers: { Authorization: `bearer ${ALPHA}` } });
    expect(res.status).toBe(200);
  });
});

describe('drives (tenants)', () => {
  const alpha = () => new DriveClient(host.url, ALPHA);
  const alphaTwo = () => new DriveClient(host.url, ALPHA_TWO);
  const beta = () => new DriveClient(host.url, BETA);

  it('keeps the files of one drive out of reach of another drive at the same paths', async () => {
    const a = await json<{ data: FileJson[] }>(alpha().upload([{ data: 'alpha secret', filename: 'same.txt' }], [{ folder: '/shared' }]));
    expect(a.status).toBe(200);

    expect((await beta().download({ path: '/shared/same.txt' })).status).toBe(404);
    expect((await json<ErrorJson>(beta().list({ folder: '/shared' }))).status).toBe(404);
    expect((await json<ErrorJson>(beta().deleteFolder({ path: '/shared', recursive: 'true' }))).status).toBe(404);

    const b = await json<{ data: FileJson[] }>(beta().upload([{ data: 'beta data', filename: 'same.txt' }], [{ folder: '/shared' }]));
    expect(b.status).toBe(200);
    expect(await (await alpha().download({ path: '/shared/same.txt' })).text()).toBe('alpha secret');
    expect(await (await beta().download({ path: '/shared/same.txt' })).text()).toBe('beta data');

    const root = await json<{ data: ListingJson }>(beta().list({ recursive: 'true' }));
    expect(root.body.data.files.map((f) => f.id)).toEqual([b.body.data[0].id]);
  });

  it('shares one drive between its keys', async () => {
    await alpha().upload([{ data: 'both keys', filename: 'team.txt' }]);
    expect(await (await alphaTwo().download({ path: '/team.txt' })).text()).toBe('both keys');
  });
});

import { DriveClient } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// Every answer names its request (X-Request-Id), and the host's output has one JSON line for it: the id,
// the route's template, the status, the drive and key id, the time taken; never a secret or a link's token.

const KEY = 'reqlog-key-0123456789abcdefghijklmnop';
let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `logs:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off' });
  drive = new DriveClient(host.url, KEY);
});

afterAll(() => stopHost(host));

/** The host's request line for `id`, parsed. */
async function lineFor(id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50; i++) {
    const line = host.output().split('\n').find((text) => text.includes(`"request_id":"${id}"`));
    if (line) return JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no log line for request ${id}`);
}

it('names each request in its answer and logs one line for it, buffered and streamed, ok or not', async () => {
  const uploaded = await drive.upload([{ data: 'logged', filename: 'a.txt' }], [{ folder: '/logs' }]);
  const downloaded = await drive.download({ path: '/logs/a.txt' });
  await downloaded.text();
  const missing = await drive.download({ path: '/logs/none.txt' });
  await missing.text();
  const stranger = await new DriveClient(host.url, 'not-a-key-0123456789abcdefghijklmnopq').list();
  await stranger.text();
  const cases: [Response, number, string][] = [
    [uploaded, 200, '/drive/upload'],
    [downloaded, 200, '/drive/download'],
    [missing, 404, '/drive/download'],
    [stranger, 401, '/drive/list'],
  ];
  for (const [res, status, route] of cases) {
    const id = res.headers.get('x-request-id');
    expect({ route, status, id }).toEqual({ route, status, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const line = await lineFor(id!);
    expect(line).toMatchObject({ level: 'info', message: 'request', request_id: id, route, status, latency_ms: expect.any(Number) });
    if (status !== 401) expect(line).toMatchObject({ drive: 'logs', key_id: expect.stringMatching(/^[0-9a-f]+$/) });
  }
  expect(host.output()).not.toContain(KEY);
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const ORIGIN = 'https://app.example.com';
let host: RunningHost;
let s3: string;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: 'default:dashboard-test-key-ace963cW1zaYDEO7Y6', DRIVE_RATE_LIMITS: 'off', DRIVE_CORS_ORIGINS: ORIGIN });
  s3 = (JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as { s3: string }).s3;
});

afterAll(async () => {
  await stopHost(host);
});

/** The embedded S3's answer to a browser's preflight for a part PUT from `origin`. */
function partPreflight(origin: string): Promise<Response> {
  return fetch(`${s3}/drive-files/default/some-file?partNumber=1&uploadId=0123abcd`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'PUT' },
  });
}

describe('the dashboard on the local host', () => {
  it('serves the page at / with a policy that lets it reach the API and the embedded S3, and nothing else', async () => {
    const page = await fetch(`${host.url}/`);

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain(`connect-src 'self' ${s3};`);
    expect(await page.text()).toContain('<script type="module" src="app.js"></script>');
    expect((await fetch(`${host.url}/app.js`)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it('leaves the API as it was: unknown paths under /drive/ are the JSON 404, and the page takes only GET (another method is the 404 of no route)', async () => {
    const unknown = await fetch(`${host.url}/drive/nothing`);
    const post = await fetch(`${host.url}/`, { method: 'POST' });

    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
    // API Gateway has no route for it: the stack's 404, as for any unknown route.
    expect(post.status).toBe(404);
  });

  it("lets the page's origin (by either name) PUT parts to the embedded S3, and no other origin: DRIVE_CORS_ORIGINS opens the API, never the emulators", async () => {
    const port = new URL(host.url).port;
    for (const origin of [host.url, `http://localhost:${port}`]) {
      const answer = await partPreflight(origin);
      expect({ origin, status: answer.status, methods: answer.headers.get('access-control-allow-methods') }).toEqual({ origin, status: 200, methods: 'PUT' });
    }
    for (const origin of [ORIGIN, 'https://elsewhere.example']) expect({ origin, status: (await partPreflight(origin)).status }).toEqual({ origin, status: 403 });
  });
});

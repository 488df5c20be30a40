import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Handler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

const PART_ORIGIN = 'http://127.0.0.1:4569';
let dir: string;
let handler: Handler;

/** A GET as API Gateway sends it: `file` is the `{file}` path parameter, `path` the path the client asked for. */
function get(file: string | undefined, options: { path?: string; headers?: Record<string, string> } = {}): APIGatewayProxyEvent {
  const path = options.path ?? (file === undefined ? '/' : `/${file}`);
  return {
    path,
    httpMethod: 'GET',
    headers: options.headers ?? {},
    multiValueHeaders: {},
    pathParameters: file === undefined ? null : { file },
    requestContext: { path },
  } as unknown as APIGatewayProxyEvent;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'drive-dashboard-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Drive</title>');
  writeFileSync(join(dir, 'app.js'), 'export {};');
  writeFileSync(join(dir, 'style.css'), 'body {}');
  writeFileSync(join(dir, 'tsconfig.json'), '{}');
  mkdirSync(join(dir, 'private'));
  writeFileSync(join(dir, 'private', 'secret.js'), 'secret');
  writeFileSync(join(dir, '.hidden.js'), 'hidden');
  process.env.DRIVE_DASHBOARD_DIR = dir;
  process.env.DRIVE_PART_UPLOAD_ORIGIN = `${PART_ORIGIN}/ignored/path`;
  jest.isolateModules(() => {
    ({ handler } = require('../../../functions/dashboard') as { handler: Handler });
  });
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  delete process.env.DRIVE_DASHBOARD_DIR;
  delete process.env.DRIVE_PART_UPLOAD_ORIGIN;
});

describe('Handler: dashboard', () => {
  it('serves index.html at / and each file with its media type', async () => {
    const page = await handler(get(undefined));
    const script = await handler(get('app.js'));
    const style = await handler(get('style.css'));

    expect(page).toMatchObject({ statusCode: 200, body: '<!doctype html><title>Drive</title>', headers: { 'Content-Type': 'text/html; charset=utf-8' } });
    expect(script).toMatchObject({ statusCode: 200, body: 'export {};', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } });
    expect(style.headers).toMatchObject({ 'Content-Type': 'text/css; charset=utf-8' });
  });

  it('sends a policy that allows only its own files, the API and the part-upload origin, and no framing', async () => {
    const { headers } = await handler(get(undefined));

    const policy = String(headers!['Content-Security-Policy']);
    expect(policy.split('; ')).toEqual(expect.arrayContaining([
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      `connect-src 'self' ${PART_ORIGIN}`,
      "form-action 'none'",
      "frame-ancestors 'none'",
      "require-trusted-types-for 'script'",
    ]));
    expect(policy).not.toContain('unsafe');
    expect(headers).toMatchObject({ 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' });
  });

  it('answers a file it does not serve with the JSON 404, security headers included', async () => {
    for (const file of ['missing.js', 'tsconfig.json', 'private', '..', 'private/secret.js', '../index.html', '.hidden.js', 'private%2Fsecret.js']) {
      const answer = await handler(get(file));

      expect({ file, status: answer.statusCode, code: JSON.parse(answer.body).error.code }).toEqual({ file, status: 404, code: 'not_found' });
      expect(answer.headers).toMatchObject({ 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': expect.any(String) });
    }
  });

  it('answers 304 to a request that holds the current version, and asks browsers to revalidate', async () => {
    const first = await handler(get('app.js'));
    const etag = String(first.headers!.ETag);

    const again = await handler(get('app.js', { headers: { 'If-None-Match': `"other", ${etag}` } }));
    const stale = await handler(get('app.js', { headers: { 'If-None-Match': '"other"' } }));

    expect(first.headers).toMatchObject({ 'Cache-Control': 'no-cache', ETag: expect.stringMatching(/^"[\w-]+"$/) });
    expect(again).toMatchObject({ statusCode: 304, body: '', headers: { ETag: etag } });
    expect(stale.statusCode).toBe(200);
  });

  it('serves a file as it is now: an edit shows on the next request, with a new ETag', async () => {
    const before = await handler(get('style.css'));
    writeFileSync(join(dir, 'style.css'), 'body { color: teal }');

    const after = await handler(get('style.css'));

    expect(after.body).toBe('body { color: teal }');
    expect(after.headers!.ETag).not.toBe(before.headers!.ETag);
  });

  it('redirects the stage root without its slash (/v1 → /v1/), so the page\'s relative URLs resolve under it', async () => {
    const answer = await handler(get(undefined, { path: '/v1' }));

    expect(answer).toMatchObject({ statusCode: 308, headers: { Location: '/v1/' } });
  });

  it('never redirects to a path that could name another host', async () => {
    for (const path of ['//evil.example', '/a//b', '/%2F%2Fevil.example']) {
      expect((await handler(get(undefined, { path }))).statusCode).toBe(200);
    }
  });
});

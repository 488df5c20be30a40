import { spawn } from 'node:child_process';
import { resolve as resolve_ } from 'node:path';
import { DriveClient } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { nodeArgs } from '../support/host-bundle-files';

// Every answer names its request (X-Request-Id, and request_id in every error body), and the host's output
// has one JSON line for it: the id, the route's template, the status, the drive and key id, the time taken,
// the bytes in and out, the AWS calls it made, and its metrics in CloudWatch's embedded metric format;
// never a secret or a link's token.

const KEY = 'reqlog-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';
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
    const line = host.output().split('\n').find((text) => text.includes(`"request_id":"${id}"`) && text.includes('"message":"request"'));
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
  const stranger = await new DriveClient(host.url, 'not-a-key-R0usiepXdS8DWuMQlx8K9I5TJ8X').list();
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
    // API Gateway's own header names the same request.
    expect(res.headers.get('x-amzn-requestid')).toBe(id);
    const line = await lineFor(id!);
    expect(line).toMatchObject({ level: 'INFO', message: 'request', request_id: id, route, status, latency_ms: expect.any(Number) });
    if (status !== 401) expect(line).toMatchObject({ drive: 'logs', key_id: expect.stringMatching(/^[0-9a-f]+$/) });
  }
  expect(host.output()).not.toContain(KEY);
});

it("writes one line a request: the function's, and no line of the host's beside it", async () => {
  const before = host.output().split('\n').length;
  const listed = await drive.list({ folder: '/logs' });
  await listed.text();
  await lineFor(listed.headers.get('x-request-id')!);
  // A barrier, not a wait: a line the host would add for the listing is written as its answer ends, before
  // the next request is even sent, so it would stand before the next request's own line.
  const next = await drive.list({ folder: '/logs' });
  await next.text();
  const barrier = JSON.stringify(await lineFor(next.headers.get('x-request-id')!));
  const added = host.output().split('\n').slice(before - 1).filter((text) => text.trim() !== '');
  const upToBarrier = added.slice(0, added.findIndex((text) => text.includes(`"request_id":"${next.headers.get('x-request-id')}"`)));
  expect(barrier).toContain('"route":"/drive/list"');
  expect(upToBarrier).toHaveLength(1);
  expect(JSON.parse(upToBarrier[0])).toMatchObject({ message: 'request', route: '/drive/list', request_id: listed.headers.get('x-request-id') });
});

it("logs a real upload with its AWS calls by service, its bytes, and its metrics in the embedded metric format", async () => {
  const content = 'x'.repeat(1000);
  const res = await drive.upload([{ data: content, filename: 'metered.txt' }], [{ folder: '/metered' }]);
  const body = await res.text();
  expect(res.status).toBe(200);

  const line = await lineFor(res.headers.get('x-request-id')!);
  expect(line).toMatchObject({
    route: '/drive/upload',
    method: 'POST',
    status: 200,
    bytes_out: Buffer.byteLength(body),
    aws_calls: { s3: 1, dynamodb: expect.any(Number) },
  });
  // The multipart body: the file's bytes and the form around them.
  expect(line.bytes_in).toBeGreaterThan(1000);
  expect((line.aws_calls as { dynamodb: number }).dynamodb).toBeGreaterThanOrEqual(3);
  expect(line).toMatchObject({
    _aws: {
      Timestamp: expect.any(Number),
      CloudWatchMetrics: [
        {
          Namespace: 'Drive',
          Dimensions: [['Service'], ['Service', 'Route']],
          Metrics: expect.arrayContaining([
            { Name: 'Requests', Unit: 'Count' },
            { Name: 'ServerErrors', Unit: 'Count' },
            { Name: 'RateLimited', Unit: 'Count' },
            { Name: 'Latency', Unit: 'Milliseconds' },
            { Name: 'BytesIn', Unit: 'Bytes' },
            { Name: 'BytesOut', Unit: 'Bytes' },
          ]),
        },
      ],
    },
    Service: 'drive',
    Route: 'POST /drive/upload',
    Requests: 1,
    ServerErrors: 0,
    ClientErrors: 0,
    RateLimited: 0,
    Latency: line.latency_ms,
    BytesIn: line.bytes_in,
    BytesOut: line.bytes_out,
  });
});

it('puts the request id of its header in every error body: the function\'s, the host\'s 401, and API Gateway\'s own', async () => {
  const missing = await drive.download({ path: '/logs/none.txt' });
  const stranger = await new DriveClient(host.url, 'not-a-key-R0usiepXdS8DWuMQlx8K9I5TJ8X').list();
  const invalid = await drive.createFolder('{not json');
  for (const res of [missing, stranger, invalid]) {
    const body = (await res.json()) as { error: { request_id: string } };
    expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
    const line = await lineFor(body.error.request_id);
    expect(line).toMatchObject({ status: res.status, ClientErrors: 1, ServerErrors: 0 });
  }

  // API Gateway's own answers carry no X-Request-Id, but its own request id header and the same body field.
  const noRoute = await fetch(`${host.url}/drive/nowhere`);
  const body = (await noRoute.json()) as { error: { code: string; request_id: string } };
  expect(body.error).toMatchObject({ code: 'not_found', request_id: noRoute.headers.get('x-amzn-requestid') });
  expect(body.error.request_id).toMatch(/^[0-9a-f-]{36}$/);
});

it("never logs a share link's token", async () => {
  await drive.upload([{ data: 'shared', filename: 'shared.txt' }], [{ folder: '/shared' }]);
  const made = (await (await drive.request('POST', '/drive/links', { body: JSON.stringify({ path: '/shared/shared.txt' }), headers: { 'Content-Type': 'application/json' } })).json()) as { data: { url: string } };
  const token = made.data.url.slice(made.data.url.lastIndexOf('/') + 1);
  const opened = await fetch(made.data.url);
  await opened.text();
  const line = await lineFor(opened.headers.get('x-request-id')!);
  expect(line).toMatchObject({ route: '/s/{token}', status: 200, aws_calls: { s3: 1, dynamodb: expect.any(Number) }, bytes_out: 6 });
  expect(host.output()).not.toContain(token);
  expect(host.output()).not.toContain(KEY);
});

it('records a trace of each request: the invocation, and each AWS call below it, which `npm run trace` shows', async () => {
  const res = await drive.upload([{ data: 'traced', filename: 'traced.txt' }], [{ folder: '/traced' }]);
  expect(res.status).toBe(200);
  const line = await lineFor(res.headers.get('x-request-id')!);
  expect(line.trace_id).toMatch(/^1-[0-9a-f]{8}-[0-9a-f]{24}$/);

  // The subsegments come over UDP, a moment after the answer.
  let documents: Record<string, unknown>[] = [];
  for (let i = 0; i < 100; i++) {
    const out = await traceCommand([String(line.trace_id), '--json']);
    documents = out.stdout.split('\n').filter(Boolean).map((text) => JSON.parse(text) as Record<string, unknown>);
    const calls = documents.filter((d) => d.type === 'subsegment').length;
    if (documents.some((d) => d.origin === 'AWS::Lambda::Function') && calls >= (line.aws_calls as { s3: number; dynamodb: number }).dynamodb + 1) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const invocation = documents.find((d) => d.origin === 'AWS::Lambda::Function');
  expect(invocation).toMatchObject({ name: 'drive-upload', trace_id: line.trace_id, http: { request: { method: 'POST', url: '/drive/upload' }, response: { status: 200 } } });
  const calls = documents.filter((d) => d.type === 'subsegment');
  // One subsegment a call the log line counts, each below the invocation.
  expect(calls).toHaveLength((line.aws_calls as { s3: number; dynamodb: number }).dynamodb + 1);
  for (const call of calls) expect(call).toMatchObject({ trace_id: line.trace_id, parent_id: invocation!.id, namespace: 'aws', http: { response: { status: 200 } } });
  expect(calls.map((c) => `${c.name} ${(c.aws as { operation: string }).operation}`)).toEqual(expect.arrayContaining(['S3 PutObject', 'DynamoDB PutItem']));

  const shown = await traceCommand([String(line.trace_id)]);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain(`trace ${line.trace_id}`);
  expect(shown.stdout).toMatch(/ms +[0-9.]+ ms +drive-upload POST \/drive\/upload → 200/);
  expect(shown.stdout).toMatch(/ms +[0-9.]+ ms +S3 PutObject → 200/);
});

it('continues a trace the client started, as API Gateway does, and never takes its segment id', async () => {
  const root = `1-${Math.floor(Date.now() / 1000).toString(16)}-0123456789abcdef01234567`;
  const res = await drive.request('GET', '/drive/list?folder=/', { headers: { 'X-Amzn-Trace-Id': `Root=${root};Parent=aaaaaaaaaaaaaaaa;Sampled=0` } });
  expect(res.status).toBe(200);
  const line = await lineFor(res.headers.get('x-request-id')!);
  expect(line.trace_id).toBe(root);
  let json = '';
  for (let i = 0; i < 100 && !json.includes('AWS::Lambda::Function'); i++) {
    json = (await traceCommand([root, '--json'])).stdout;
    if (!json.includes('AWS::Lambda::Function')) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const invocation = json.split('\n').filter(Boolean).map((text) => JSON.parse(text) as { origin?: string; id: string }).find((d) => d.origin === 'AWS::Lambda::Function');
  expect(invocation?.id).toMatch(/^[0-9a-f]{16}$/);
  expect(invocation?.id).not.toBe('aaaaaaaaaaaaaaaa');
});

/** `npm run trace` against this host's data (this run's bundle of it, as keys.test.ts runs the key tool). */
function traceCommand(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs('bin/trace.ts'), ...args], { cwd: resolve_(__dirname, '..', '..'), env: { ...process.env, DRIVE_DATA_DIR: host.dataDir } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

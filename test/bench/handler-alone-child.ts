import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { DynamoKeyAdmin } from '../../functions/aws/api-key-admin';
import { handler } from '../../functions/upload';
import { deliver, isFailure } from '../../lib/local/invoke';
import { installLambdaGlobals } from '../../lib/local/lambda-runtime';
import { toProxyEvent } from '../../lib/local/proxy-event';
import { ROUTES } from '../../lib/routes';

// The child of handler-alone.ts: the upload handler alone in its process, as a Lambda container holds it (run
// from an esbuild bundle, or through tsx to compare), invoked one 1 MiB upload at a time. Each event is made
// before its invocation, as Lambda's runtime makes it from the invoke's JSON; the CPU of the invocation is
// measured, and the full collections of the whole run counted. Prints one line.

const { accessTable, bytes, ops, label } = JSON.parse(process.env.HANDLER_ALONE!) as { accessTable: string; bytes: number; ops: number; label: string };
let full = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) full++;
}).observe({ entryTypes: ['gc'] });

installLambdaGlobals();

async function main(): Promise<void> {
  const dynamodb = new DynamoDBClient({ endpoint: process.env.DRIVE_DYNAMODB_ENDPOINT });
  const { secret } = await new DynamoKeyAdmin(dynamodb, accessTable).create('alone', 'handler-alone');
  dynamodb.destroy();
  const data = randomBytes(bytes);
  const route = ROUTES.find((r) => r.method === 'POST' && r.path === '/drive/upload')!;
  const event = (i: number): APIGatewayProxyEvent => {
    const boundary = `----drive${randomBytes(8).toString('hex')}`;
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="f${i}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      data,
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n[{"folder":"/up"}]\r\n--${boundary}--\r\n`),
    ]);
    const headers = { Host: '127.0.0.1', Authorization: `Bearer ${secret}`, 'Content-Length': String(body.length), 'Content-Type': `multipart/form-data; boundary=${boundary}` };
    const req = { rawHeaders: Object.entries(headers).flat(), headers: {}, httpVersion: '1.1', socket: { localAddress: '127.0.0.1', localPort: 3000, remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
    const delivered = deliver(toProxyEvent(req, new URL('http://localhost/drive/upload'), route, body, null, undefined, false));
    if (isFailure(delivered)) throw new Error(delivered.reason);
    return delivered;
  };
  // Warm: clients connected, the key cached, the folder found live, code compiled.
  for (let i = 0; i < 5; i++) await handler(event(1_000_000 + i));
  full = 0;
  const samples: number[] = [];
  for (let i = 0; i < ops; i++) {
    const invocation = event(i);
    const before = process.cpuUsage();
    const res = await handler(invocation);
    const used = process.cpuUsage(before);
    if (res.statusCode !== 200) throw new Error(`upload answered ${res.statusCode}`);
    samples.push((used.user + used.system) / 1000);
  }
  await new Promise((resolve) => setImmediate(resolve));
  samples.sort((a, b) => a - b);
  const mean = samples.reduce((a, b) => a + b, 0) / ops;
  const heap = getHeapStatistics().used_heap_size / 1e6;
  process.stderr.write(`${label}: median ${samples[ops >> 1].toFixed(2)} ms, mean ${mean.toFixed(2)} ms of CPU per upload; ${full} full collections in ${ops}; heap used ${heap.toFixed(1)} MB\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

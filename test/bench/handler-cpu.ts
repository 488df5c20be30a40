import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { PerformanceObserver, constants as perfConstants, performance } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import { DynamoKeyAdmin } from '../../functions/aws/api-key-admin';
import { signWithContentMd5 } from '../../functions/aws/s3-object-store';
import { QUIET_SDK_LOGGER } from '../../functions/aws/sdk-logger';
import { DEFAULT_TRACING } from '../../lib/aws-limits';
import { LOCAL_REGION, LOCAL_RESOURCES } from '../../lib/local/emulators';
import { deliver, isFailure } from '../../lib/local/invoke';
import { LocalResponseStream, installLambdaGlobals } from '../../lib/local/lambda-runtime';
import { lambdaContext, toProxyEvent, traceSampler } from '../../lib/local/proxy-event';
import { ROUTES } from '../../lib/routes';
import { removeDataDir } from '../support/local-host';
import { DRIVE, FLOOR_DRIVE, benchDir, handlerEnvironment, spawnUntil } from './environment';
import { Floor } from './floor';
import { Seeder } from './seed';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * `node --import tsx test/bench/handler-cpu.ts [--only=upload-4kib,upload-1mib,download-4kib,download-1mib,list-400] [--ops=60]`: the CPU of one
 * handler invocation, as Lambda bills it, against the floor's client doing the same job — each operation run
 * alone in this process, one at a time, over the storage in a process of its own. Timing-free: CPU time is
 * what the shared machine's load changes least. `node --cpu-prof --import tsx …` profiles the handlers alone.
 * Requests are traced as the stack's sampling rule traces them, and each line prints the collector's pauses.
 */
const ROOT = resolve(__dirname, '..', '..');
const MiB1 = randomBytes(1024 * 1024);
const KiB4 = randomBytes(4 * 1024);

interface Operation {
  id: string;
  drive(i: number): Promise<void>;
  floor(i: number): Promise<void>;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args.find((a) => a.startsWith('--only='))?.slice(7).split(',');
  const ops = Number(args.find((a) => a.startsWith('--ops='))?.slice(6) ?? 60);
  const sides = (args.find((a) => a.startsWith('--side='))?.slice(7) ?? 'drive,floor').split(',');
  const dataDir = await mkdtemp(join(benchDir(), 'drive-handler-cpu-'));
  const storage = await spawnUntil(['test/bench/storage-process.ts', join(dataDir, 'storage')], {}, /^(\{.*\})$/m);
  const endpoints = JSON.parse(storage.match) as { dynamodb: string; s3: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  try {
    // The handlers read their configuration as in Lambda (and as the local host sets it).
    Object.assign(process.env, handlerEnvironment(endpoints, 'drive-handler-cpu'));
    const config = { region: LOCAL_REGION, credentials: endpoints.credentials, cacheMiddleware: true, logger: QUIET_SDK_LOGGER };
    const s3 = signWithContentMd5(new S3Client({ ...config, endpoint: endpoints.s3, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }));
    const dynamodb = new DynamoDBClient({ ...config, endpoint: endpoints.dynamodb });
    const floor = new Floor(s3, dynamodb, LOCAL_RESOURCES.bucket, LOCAL_RESOURCES.nodesTable);
    const seeder = new Seeder(s3, dynamodb, LOCAL_RESOURCES.bucket, LOCAL_RESOURCES.nodesTable);
    const { secret } = await new DynamoKeyAdmin(dynamodb, LOCAL_RESOURCES.accessTable).create(DRIVE, 'handler-cpu');
    for (const drive of [DRIVE, FLOOR_DRIVE]) {
      await floor.createFolders(drive, ['/up', '/dl']);
      await floor.upload(drive, '/dl', [{ name: '4k.bin', data: KiB4 }, { name: '1m.bin', data: MiB1 }]);
      await seeder.flat(drive, '/list400', 400);
    }

    installLambdaGlobals();
    const upload = (await import(join(ROOT, 'functions/upload.ts'))) as { handler: (event: APIGatewayProxyEvent) => Promise<{ statusCode: number }> };
    type Streamed = { handler: (event: APIGatewayProxyEvent, stream: LocalResponseStream, context: unknown) => Promise<void> };
    const list = (await import(join(ROOT, 'functions/list.ts'))) as Streamed;
    const download = (await import(join(ROOT, 'functions/download.ts'))) as Streamed;
    const downloadOf = (id: string, path: string, size: number): Operation => ({
      id,
      drive: async () => {
        const event = proxyEvent('GET', '/drive/download', { path }, secret);
        const { res, bytes } = discardingResponse();
        await measure(() => download.handler(event, new LocalResponseStream(res), lambdaContext('drive-download', 30_000)));
        if (res.statusCode !== 200 || bytes() !== size) throw new Error(`download answered ${res.statusCode} with ${bytes()} bytes`);
      },
      floor: async () => {
        let read = 0;
        await measure(async () => void (read = await floor.download(FLOOR_DRIVE, path)));
        if (read !== size) throw new Error(`the floor read ${read} bytes`);
      },
    });
    const uploadOf = (id: string, prefix: string, data: Buffer): Operation => ({
      id,
      drive: async (i) => {
        const event = uploadEvent(secret, `${prefix}-${i}.bin`, data);
        await measure(async () => {
          const res = await upload.handler(event);
          if (res.statusCode !== 200) throw new Error(`upload answered ${res.statusCode}`);
        });
      },
      floor: (i) => measure(() => floor.upload(FLOOR_DRIVE, '/up', [{ name: `${prefix}-${i}.bin`, data }])),
    });
    const operations: Operation[] = [
      uploadOf('upload-4kib', '4k', KiB4),
      uploadOf('upload-1mib', '1m', MiB1),
      downloadOf('download-4kib', '/dl/4k.bin', KiB4.length),
      downloadOf('download-1mib', '/dl/1m.bin', MiB1.length),
      {
        id: 'list-400',
        drive: async () => {
          const event = proxyEvent('GET', '/drive/list', { folder: '/list400' }, secret);
          const { res, bytes } = discardingResponse();
          await measure(() => list.handler(event, new LocalResponseStream(res), lambdaContext('drive-list', 30_000)));
          if (res.statusCode !== 200 || bytes() === 0) throw new Error(`list answered ${res.statusCode}`);
        },
        floor: async () => void (await measure(() => floor.list(FLOOR_DRIVE, '/list400'))),
      },
    ];
    for (const op of operations.filter((o) => only?.includes(o.id) ?? true)) {
      for (const side of sides as ('drive' | 'floor')[]) {
        for (let i = 0; i < 5; i++) await op[side](1_000_000 + i); // warm: clients connected, keys cached, code compiled
        samples.length = 0;
        const from = performance.now();
        for (let i = 0; i < ops; i++) await op[side](i);
        const gc = await pausesSince(from);
        const sorted = [...samples].sort((a, b) => a - b);
        const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
        // The lowest tenth moves least when other processes load the machine: compare it too, run against run.
        const p10 = sorted[Math.floor(sorted.length / 10)];
        console.log(`${op.id} ${side === 'drive' ? 'handler' : 'floor'}: median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} ms, mean ${mean.toFixed(2)} ms, p10 ${p10.toFixed(2)} ms of CPU per operation (${ops} runs); GC pauses ${(gc.ms / ops).toFixed(2)} ms per operation, ${gc.major} full collections`);
      }
    }
    s3.destroy();
    dynamodb.destroy();
  } finally {
    storage.child.kill('SIGTERM');
    await new Promise((resolve) => storage.child.once('exit', resolve));
    await removeDataDir(dataDir);
  }
}

const samples: number[] = [];

// The process's garbage-collection pauses (wall time on this thread), to tell the collector's share of a line's CPU
// from the code's: a full mark-compact every few 1 MiB uploads is most of the difference between median and mean.
const pauses: { at: number; ms: number; major: boolean }[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    pauses.push({ at: entry.startTime, ms: entry.duration, major: (entry as unknown as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR });
  }
}).observe({ entryTypes: ['gc'] });

/** The pauses that began since `from` (entries arrive a turn late: one is waited for). */
async function pausesSince(from: number): Promise<{ ms: number; major: number }> {
  await new Promise((resolve) => setImmediate(resolve));
  const since = pauses.filter((pause) => pause.at >= from);
  return { ms: since.reduce((sum, pause) => sum + pause.ms, 0), major: since.filter((pause) => pause.major).length };
}

/** Runs `op` and notes the CPU this process used meanwhile (nothing else runs in it). */
async function measure(op: () => Promise<unknown>): Promise<void> {
  const before = process.cpuUsage();
  await op();
  const used = process.cpuUsage(before);
  samples.push((used.user + used.system) / 1000);
}

// Requests traced as the stack's sampling rule traces them (and the bench's host): a request a second, 1 % of the rest.
const sampled = traceSampler(DEFAULT_TRACING);

/** The event API Gateway would deliver for this request, built by the local host's own code. */
function proxyEvent(method: 'GET' | 'POST', path: string, query: Record<string, string>, secret: string, body = Buffer.alloc(0), headers: Record<string, string> = {}): APIGatewayProxyEvent {
  const url = new URL(`http://localhost${path}?${new URLSearchParams(query)}`);
  const route = ROUTES.find((r) => r.method === method && r.path === path)!;
  const all = { Host: '127.0.0.1', Authorization: `Bearer ${secret}`, 'Content-Length': String(body.length), ...headers };
  const req = { rawHeaders: Object.entries(all).flat(), headers: {}, httpVersion: '1.1', socket: { localAddress: '127.0.0.1', localPort: 3000, remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
  const event = deliver(toProxyEvent(req, url, route, body, null, undefined, sampled()));
  if (isFailure(event)) throw new Error(event.reason);
  return event;
}

function uploadEvent(secret: string, filename: string, data: Buffer): APIGatewayProxyEvent {
  const boundary = `----drive${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n[{"folder":"/up"}]\r\n--${boundary}--\r\n`),
  ]);
  return proxyEvent('POST', '/drive/upload', {}, secret, body, { 'Content-Type': `multipart/form-data; boundary=${boundary}` });
}

/** A stand-in for the client's socket that counts what the handler streams and keeps none of it. */
function discardingResponse(): { res: ServerResponse; bytes: () => number } {
  let bytes = 0;
  const res = {
    statusCode: 0,
    headersSent: false,
    writableFinished: false,
    on: () => res,
    once: () => res,
    writeHead(status: number) {
      res.statusCode = status;
      res.headersSent = true;
    },
    write(chunk: Buffer | string) {
      bytes += chunk.length;
      return true;
    },
    end(callback?: () => void) {
      res.writableFinished = true;
      callback?.();
    },
  };
  return { res: res as unknown as ServerResponse, bytes: () => bytes };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

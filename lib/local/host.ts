import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { appendFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { SETTINGS, environmentOf, rawSetting, setting } from '../../functions/config';
import { UPLOADS_PARTITION_KEY, UPLOADS_TTL_ATTRIBUTE } from '../../functions/aws/schema';
import { CONTRACT_ROUTES, DASHBOARD_ROUTES, LINK_ROUTES, QUEUE_WORKERS, ROUTES, SCHEDULED, SEQUENCER, TOKEN_ROUTES } from '../routes';
import { FUNCTION_SIZING } from '../aws-limits';
import type { ApiKeyEntry, KeyAdmin, LocalDomain } from './domain';
import { type QueueFeed, startEmbeddedQueues } from './embedded-queue';
import { startTraceCollector } from './trace-collector';
import { ENDPOINTS_FILE, LOCAL_REGION, LOCAL_RESOURCES, STREAM_DIR, allowBrowserUploads, runningHost, startEmulators } from './emulators';
import { feedStream, streamFile } from './dynamo-stream';
import type { Credentials } from './signed-gateway';
import { startEmulatorsThread } from './storage-thread';
import { LIFECYCLE_ABORT_AFTER_MS, abortStaleUploads, expireItems } from './expiry';
import { openDataDir, tightenedMessage } from './data-dir';
import { installLambdaGlobals } from './lambda-runtime';
import { importModule } from './preloaded';
import { type MountedRoute, createLocalServer } from './server';
import { stoppedInvocation } from './invoke';
import type { TraceSampling } from './proxy-event';

export interface LocalHostOptions {
  port: number;
  dataDir: string;
  /** `DRIVE_API_KEYS`: comma-separated `secret` or `drive:secret` entries to accept. */
  apiKeys?: string;
  log?: (line: string) => void;
  /** Emulators already running in another process (tables and bucket made), instead of embedded ones. */
  storage?: { dynamodbEndpoint: string; s3Endpoint: string; credentials: Credentials };
  /** The embedded emulators on a thread of their own (`npm start`), not on the handlers' event loop. */
  storageThread?: boolean;
  /**
   * The clock a function's timeout is measured on (lib/local/server.ts `invocationClock`): a test drives it
   * to have a function stopped at its timeout without waiting for it.
   */
  invocationClock?: () => number;
  /** Which requests are traced: every one by default (`npm run trace` shows each); the bench's host samples as the stack does. */
  tracing?: TraceSampling;
}

export interface LocalHost {
  url: string;
  /** The key this start created because the data dir had none and none was configured. */
  createdKey?: { drive: string; secret: string };
  close(): Promise<void>;
}

const PROJECT_ROOT = resolve(__dirname, '..', '..');

/**
 * Serves the API on 127.0.0.1 over embedded DynamoDB and S3 kept in `dataDir`. The handlers are the
 * Lambda modules themselves, configured through the same environment variables as in AWS; what else the
 * host needs of Drive comes in `domain` (lib/local-host.ts wires it).
 */
export async function startHost(options: LocalHostOptions, domain: LocalDomain): Promise<LocalHost> {
  const log = options.log ?? ((line: string) => console.log(line));
  const opened = await openDataDir(options.dataDir);
  const dataDir = opened.path;
  const tightened = tightenedMessage(opened);
  if (tightened) log(tightened);
  const running = await runningHost(dataDir);
  if (running) throw new Error(`another Drive host (pid ${running.pid}) is serving ${dataDir}; stop it or choose another DRIVE_DATA_DIR`);
  // What has started so far, stopped in reverse if a later step fails, so that a failed start leaves nothing running.
  const started: (() => Promise<unknown>)[] = [];
  try {
    return await startServing(options, domain, dataDir, log, started);
  } catch (error) {
    for (const stop of started.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}

async function startServing(options: LocalHostOptions, domain: LocalDomain, dataDir: string, log: (line: string) => void, started: (() => Promise<unknown>)[]): Promise<LocalHost> {
  const emulators = options.storage
    ? { ...options.storage, close: async () => undefined }
    : options.storageThread
      ? await startEmulatorsThread(dataDir, (error) => {
          log(`the storage thread failed; the host cannot serve without it: ${error.message}`);
          process.exit(1);
        })
      : await startEmulators(dataDir);
  started.push(() => emulators.close());
  // SQS for the queue workers, as the stack has it; the host delivers its messages as Lambda's event source would.
  const queues = await startEmbeddedQueues(dataDir, QUEUE_WORKERS.map((worker) => worker.queue), LOCAL_REGION, emulators.credentials);
  started.push(() => queues.close());
  // X-Ray's daemon, as Lambda has one when the function traces: the functions send their calls' subsegments to it.
  const traces = await startTraceCollector(dataDir);
  started.push(() => traces.close());

  // The handler modules build their clients from the environment when first imported, as in Lambda.
  Object.assign(process.env, {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: emulators.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulators.credentials.secretAccessKey,
    AWS_XRAY_DAEMON_ADDRESS: traces.address,
    // Drive's own, named through the one table of settings (functions/config.ts).
    ...environmentOf({
      dynamodbEndpoint: emulators.dynamodbEndpoint,
      s3Endpoint: emulators.s3Endpoint,
      nodesTable: LOCAL_RESOURCES.nodesTable,
      accessTable: LOCAL_RESOURCES.accessTable,
      bucket: LOCAL_RESOURCES.bucket,
      uploadsTable: LOCAL_RESOURCES.uploadsTable,
      changesTable: LOCAL_RESOURCES.changesTable,
      // Locally a revoked key fails at once; Lambda caches verified keys for 30 s.
      keyCacheSeconds: rawSetting('keyCacheSeconds') ?? '0',
      // The dashboard is served from the source folder, and its page may send large-upload parts to the emulator.
      dashboardDir: join(PROJECT_ROOT, 'dashboard'),
      partUploadOrigin: emulators.s3Endpoint,
      // The host serves plain HTTP; the `url` of an upload says so (API Gateway serves HTTPS).
      apiScheme: 'http',
      // Token issuers on this machine (a test's, a user's) may be trusted over plain http; the stack never sets it.
      trustLoopbackIssuers: '1',
      sqsEndpoint: queues.endpoint,
      jobQueueUrl: queues.queueUrl('jobs'),
    }),
  });
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;

  const dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: LOCAL_REGION, credentials: emulators.credentials });
  let createdKey: LocalHost['createdKey'];
  try {
    const keys = domain.keyAdmin(dynamodb, LOCAL_RESOURCES.accessTable);
    const configured = domain.parseApiKeys(options.apiKeys);
    await reconcileApiKeys(keys, configured, log);
    if (configured.length === 0 && (await keys.listAll()).length === 0) {
      // The first key manages the others (the dashboard signs in with it).
      createdKey = await keys.createAdmin('default', 'created by npm start');
    }
    // No step runs before the host does: a job's claim that a killed host left goes now, as its messages
    // become visible again now (in AWS a dead step's claim lapses with its lease).
    await domain.releaseJobClaims(dynamodb, LOCAL_RESOURCES.uploadsTable);
  } finally {
    dynamodb.destroy();
  }

  installLambdaGlobals();
  const mounted: MountedRoute[] = [];
  // The contract's literal path before the dashboard's `/{file}`: the host takes the first route that matches.
  for (const route of [...ROUTES, ...LINK_ROUTES, ...TOKEN_ROUTES, ...CONTRACT_ROUTES, ...DASHBOARD_ROUTES]) {
    const module = await importModule<{ handler: MountedRoute['handler'] }>(join(PROJECT_ROOT, route.entry));
    mounted.push({ route, handler: module.handler });
  }

  // Lambda stops a function at its timeout: past it, the host refuses the invocation's AWS calls.
  await domain.stopLateCalls(stoppedInvocation);

  if (setting('localClock')) {
    // Tests only: rate-limit buckets never refill, so a burst's 429s are exact however slow the machine.
    await domain.stopRateLimitClock();
  }

  // Queue workers run from the same modules, fed by the embedded queue.
  for (const worker of QUEUE_WORKERS) {
    const module = await importModule<{ handler: QueueFeed['handler'] }>(join(PROJECT_ROOT, worker.entry));
    const timeoutMs = FUNCTION_SIZING[worker.handler].timeoutSeconds * 1000;
    queues.feed(worker.queue, { handler: module.handler, timeoutMs, visibilityMs: 6 * timeoutMs, maxReceives: worker.maxReceives, concurrency: 4, log });
  }

  // The change feed's sequencer, fed the nodes table's stream (the embedded DynamoDB's tap) as Lambda's event
  // source mapping feeds it in AWS: in order, a batch of up to 100 at a time, from where it got to.
  const sequencer = await importModule<{ handler: Parameters<typeof feedStream>[2] }>(join(PROJECT_ROOT, SEQUENCER.entry));
  const stopFeed = feedStream(streamFile(join(dataDir, STREAM_DIR), LOCAL_RESOURCES.nodesTable), join(dataDir, STREAM_DIR, `${LOCAL_RESOURCES.nodesTable}.checkpoint`), sequencer.handler, log);
  started.push(stopFeed);

  // Scheduled functions (EventBridge in AWS) run on the sweep timer, or on a timer of their own, from the same modules.
  const scheduled: (() => Promise<unknown>)[] = [];
  const timed: { run: () => Promise<unknown>; seconds: number; handler: string }[] = [];
  for (const fn of SCHEDULED) {
    const { handler } = await importModule<{ handler: () => Promise<unknown> }>(join(PROJECT_ROOT, fn.entry));
    if (fn.localTimer) timed.push({ run: handler, seconds: setting(fn.localTimer), handler: fn.handler });
    else scheduled.push(handler);
  }

  // The host refuses a request whose key no live record holds before reading its body (a Lambda would read it).
  const keyReader = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: LOCAL_REGION, credentials: emulators.credentials });
  started.push(async () => keyReader.destroy());
  const server = createLocalServer(mounted, log, {
    keyCheck: domain.keyCheck(keyReader, LOCAL_RESOURCES.accessTable),
    requestTimeoutMs: setting('localRequestTimeoutSeconds') * 1000,
    // Tests only (test/setup-env.ts): no answer is cut off at API Gateway's 29 s or a function's timeout.
    cutOffLateAnswers: setting('localCutOff'),
    ...(options.invocationClock ? { invocationClock: options.invocationClock } : {}),
    // One line a request, the function's, unless DRIVE_LOCAL_ACCESS_LOG=1 asks for the host's too.
    accessLog: setting('localAccessLog'),
    // Key guessing from one address: 50 wrong keys, then 5 a second (off with the rate limits, for benchmarks).
    ...(rawSetting('rateLimits') === 'off' ? {} : { keyFailures: { burst: 50, perSecond: 5, ...(setting('localClock') ? { clock: () => 0 } : {}) } }),
    traces,
    ...(options.tracing ? { tracing: options.tracing } : {}),
    ...(setting('checkContract') ? { observe: await contractObserver(dataDir, domain) } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, options.port)));
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  started.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The dashboard's origin, by either name of this machine, may PUT large-upload parts to the embedded S3
  // (with their presigned URLs); DRIVE_CORS_ORIGINS, which opens the API to other pages, never reaches it.
  await allowBrowserUploads(emulators.s3Endpoint, emulators.credentials, [url, url.replace('127.0.0.1', 'localhost')]);
  const sweepSeconds = setting('localSweepSeconds');
  const stopSweeping = sweepEvery(sweepSeconds, emulators, dataDir, scheduled, log);
  started.push(stopSweeping);
  const stopTimers = timed.map(({ run, seconds, handler }) => runEvery(seconds, run, (error) => log(`the scheduled function ${handler} failed: ${String(error)}`)));
  started.push(() => Promise.all(stopTimers.map((stop) => stop())));
  const endpointsFile = join(dataDir, ENDPOINTS_FILE);
  await writeFile(
    endpointsFile,
    JSON.stringify({ pid: process.pid, url, dynamodb: emulators.dynamodbEndpoint, s3: emulators.s3Endpoint, ...LOCAL_RESOURCES }, null, 2),
  );

  return {
    url,
    createdKey,
    close: async () => {
      await stopSweeping();
      await Promise.all(stopTimers.map((stop) => stop()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(endpointsFile, { force: true });
      keyReader.destroy();
      await stopFeed();
      await queues.close();
      await emulators.close();
      await traces.close();
    },
  };
}

/** Why the API could not listen on `port`, with what to do about it. */
function listenError(error: NodeJS.ErrnoException, port: number): Error {
  if (error.code === 'EADDRINUSE') return new Error(`port ${port} is in use; set PORT to another port (PORT=0 picks a free one)`);
  if (error.code === 'EACCES') return new Error(`port ${port} needs privileges this user lacks; set PORT to a port above 1023 (PORT=0 picks a free one)`);
  return error;
}

/**
 * The contract checker (tests set `DRIVE_CHECK_CONTRACT=1`): each answer that the OpenAPI document does not
 * allow is a JSON line in `<dataDir>/contract-violations.jsonl` and on stderr. Loaded only when asked for, so
 * `npm start` never loads Ajv.
 */
async function contractObserver(dataDir: string, domain: LocalDomain): Promise<NonNullable<Parameters<typeof createLocalServer>[2]>['observe']> {
  const { CONTRACT_VIOLATIONS_FILE, ContractChecker } = await import('./contract.js');
  const file = join(dataDir, CONTRACT_VIOLATIONS_FILE);
  const checker = new ContractChecker(await domain.openApiDocument(), (violation) => {
    const line = JSON.stringify(violation);
    console.error(`contract violation: ${line}`);
    appendFileSync(file, `${line}\n`);
  });
  return (req, res) => checker.observe(req, res);
}

/**
 * Every `seconds`, what AWS does on its own and the emulators lack (DynamoDB's TTL on the uploads table, the
 * bucket's lifecycle rule), then the scheduled functions that the sweep's timer runs; returns a stop.
 */
function sweepEvery(
  seconds: number,
  emulators: { dynamodbEndpoint: string; credentials: Credentials },
  dataDir: string,
  scheduled: readonly (() => Promise<unknown>)[],
  log: (line: string) => void,
): () => Promise<void> {
  const dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: LOCAL_REGION, credentials: emulators.credentials });
  const uploads = { name: LOCAL_RESOURCES.uploadsTable, keys: [UPLOADS_PARTITION_KEY], ttlAttribute: UPLOADS_TTL_ATTRIBUTE };
  const stop = runEvery(
    seconds,
    async () => {
      try {
        const removed = await expireItems(dynamodb, uploads);
        if (removed > 0) log(`TTL removed ${removed} expired item${removed === 1 ? '' : 's'} of the uploads table`);
        const aborted = await abortStaleUploads(join(dataDir, 's3'), LOCAL_RESOURCES.bucket, LIFECYCLE_ABORT_AFTER_MS);
        if (aborted > 0) log(`the lifecycle rule aborted ${aborted} multipart upload${aborted === 1 ? '' : 's'}`);
      } catch (error) {
        log(`expiring uploads failed: ${String(error)}`);
      }
      await Promise.all(scheduled.map((run) => run().catch((error: unknown) => log(`a scheduled function failed: ${String(error)}`))));
    },
    // Each step above reports its own failure.
    () => undefined,
  );
  return async () => {
    await stop();
    dynamodb.destroy();
  };
}

/** Runs `run` every `seconds`, never two at once, as EventBridge runs a scheduled function; returns a stop that waits out a run. */
function runEvery(seconds: number, run: () => Promise<unknown>, failed: (error: unknown) => void): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = run()
      .then(() => undefined, failed)
      .finally(() => (running = undefined));
  }, seconds * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** Keys a start made from `DRIVE_API_KEYS` carry this name, so the next start knows which ones it owns. */
const FROM_ENV = SETTINGS.apiKeys.name;

/**
 * Makes the keys match `DRIVE_API_KEYS` at each start: each listed secret is a key of its drive with its
 * role and prefix (created, or changed if an earlier start made it otherwise), and a key an earlier start
 * made from the list that the list no longer names is revoked. Keys made any other way are left alone; a
 * listed key that was revoked stays revoked (a warning says so).
 */
async function reconcileApiKeys(keys: KeyAdmin, configured: ApiKeyEntry[], log: (line: string) => void): Promise<void> {
  const listed = new Set<string>();
  for (const [i, { drive, secret, role, prefix }] of configured.entries()) {
    const outcome = await keys.upsert(drive, FROM_ENV, { role, prefix }, secret);
    if (outcome === 'revoked') log(`DRIVE_API_KEYS entry ${i + 1} names a key that was revoked; it stays revoked`);
    else listed.add(outcome.record.keyId);
  }
  for (const key of await keys.listAll()) {
    if (key.name === FROM_ENV && !key.revokedAt && !listed.has(key.keyId)) {
      await keys.revoke(key.keyId);
      log(`revoked key ${key.keyId} (drive ${key.drive}): DRIVE_API_KEYS no longer lists it`);
    }
  }
}

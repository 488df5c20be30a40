import { type AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACCESS_PARTITION_KEY } from '../../functions/aws/schema';
import { SPEC_RATE_LIMITS } from '../../functions/core/access';
import { currentRequest } from '../../functions/telemetry/request-context';
import { startLocalHost } from '../../lib/local-host';
import { removeDataDir } from './local-host';
import { TestIssuer } from './oidc-issuer';
import type { CallCount } from './aws-call-budget';

/**
 * Counts the AWS calls of one request of each keyed route, by command, on the real SDK clients of the handlers
 * against the embedded emulators: the measurement behind test/support/aws-call-budget.ts, which
 * test/integration/aws-call-budget.test.ts runs in a process of its own (`node --import tsx
 * test/support/route-calls.ts` prints the table as JSON on its last line).
 *
 * Every call is tied to its request by the request context the handlers run in (the request id the answer's
 * X-Request-Id names), so the host's background work (the job worker, sweeps) never lands in a request's count.
 * Deterministic by construction: rate limits on but far above what the run sends, a key cache longer than the
 * run, and the key check's calls (a GetItem on a cold container, a "last used" write once a minute per
 * container) counted apart, since when they happen depends on the clock, not on the route.
 */

const SECRET = 'route-calls-key-3mQ7xVb9Lk2Pz8Rw4Tn6';
const DRIVE = 'calls';

/** One call of a request: its service and command, whether it is the key check's, and how deep in the chain it was made. */
interface Call {
  service: 'dynamodb' | 's3' | 'sqs';
  command: string;
  keyCheck: boolean;
  depth: number;
  /** DynamoDB's read and write request units, as its on-demand mode bills them (see `capacityOf`). */
  rru: number;
  wru: number;
}

interface RequestCalls {
  calls: Call[];
  /** The deepest call that has answered: a call made now follows it. */
  answeredDepth: number;
  inFlight: number;
  /** Answers so far: the calls made between two answers were made together. */
  answers: number;
  /** For each call in flight, the answers there had been when it was made. */
  inFlightSince: number[];
  /**
   * A call was made while one made before an answer was still in flight: two chains ran side by side, and
   * which answered first (the machine's speed) decides how deep the later calls count. The chain's length is
   * then measured, not pinned.
   */
  sideBySide: boolean;
}

const byRequest = new Map<string, RequestCalls>();

/**
 * Notes a call of the running request, and its depth: one more than the deepest call that had answered when
 * it was made. The request's deepest call is the length of its longest chain of calls each made after the one
 * before answered: the calls on its critical path one after another (calls made together, as by Promise.all,
 * share a depth).
 */
async function tracked<T>(service: Call['service'], command: string, input: Record<string, unknown> | undefined, send: () => Promise<T>): Promise<T> {
  const id = currentRequest()?.requestId;
  if (id === undefined) return send();
  const state = byRequest.get(id) ?? { calls: [], answeredDepth: 0, inFlight: 0, answers: 0, inFlightSince: [], sideBySide: false };
  byRequest.set(id, state);
  const depth = state.answeredDepth + 1;
  // The key's "last used" write falls in whichever request its minute ends in (a slow run's, any): it counts in
  // no request's chain, or every call after it would sit one deeper (seen at load 11: a pinned 7 measured 8).
  const keyCheck = isKeyCheck(service, command, input);
  if (!keyCheck && state.inFlightSince.some((since) => since < state.answers)) state.sideBySide = true;
  const since = state.answers;
  if (!keyCheck) state.inFlightSince.push(since);
  const call: Call = { service, command, keyCheck, depth, rru: 0, wru: 0 };
  state.calls.push(call);
  state.inFlight++;
  let output: unknown;
  try {
    output = await send();
    return output as T;
  } catch (error) {
    // A refused condition is billed as the write it was.
    output = { output: error };
    throw error;
  } finally {
    state.inFlight--;
    if (!keyCheck) {
      state.inFlightSince.splice(state.inFlightSince.indexOf(since), 1);
      state.answers++;
      state.answeredDepth = Math.max(state.answeredDepth, depth);
    }
    if (service === 'dynamodb') Object.assign(call, capacityOf(command, input ?? {}, ((output as { output?: unknown } | undefined)?.output ?? {}) as Record<string, unknown>));
  }
}

type Item = Record<string, AttributeValue>;

/**
 * The request units DynamoDB on demand bills a call, from what it sent and got: a read of up to 4 KB is 1 RRU
 * strongly consistent and 0.5 eventually (a batch per item asked for, a query per 4 KB of what it returned,
 * at least one unit); a write of up to 1 KB is 1 WRU (an update or delete counted as one unit, its item being
 * small); a transaction's items cost twice. Writes to a global secondary index (the access table's, for keys
 * and links) are not counted.
 */
function capacityOf(command: string, input: Record<string, any>, output: Record<string, any>): { rru: number; wru: number } { // eslint-disable-line @typescript-eslint/no-explicit-any
  const read = (consistent: unknown, bytes = 0) => (consistent ? 1 : 0.5) * Math.max(1, Math.ceil(bytes / 4096));
  const write = (item?: Item) => Math.max(1, Math.ceil((item ? itemBytes(item) : 0) / 1024));
  switch (command) {
    case 'GetItem':
      return { rru: read(input.ConsistentRead, output.Item ? itemBytes(output.Item) : 0), wru: 0 };
    case 'BatchGetItem':
      return { rru: Object.values(input.RequestItems ?? {}).reduce((sum: number, table: any) => sum + table.Keys.length * read(table.ConsistentRead), 0), wru: 0 }; // eslint-disable-line @typescript-eslint/no-explicit-any
    case 'Query':
    case 'Scan':
      return { rru: read(input.ConsistentRead, (output.Items ?? []).reduce((sum: number, item: Item) => sum + itemBytes(item), 0)), wru: 0 };
    case 'PutItem':
      return { rru: 0, wru: write(input.Item) };
    case 'UpdateItem':
    case 'DeleteItem':
      return { rru: 0, wru: 1 };
    case 'BatchWriteItem':
      return { rru: 0, wru: Object.values(input.RequestItems ?? {}).flat().reduce((sum: number, request: any) => sum + write(request.PutRequest?.Item), 0) }; // eslint-disable-line @typescript-eslint/no-explicit-any
    case 'TransactWriteItems':
      return { rru: 0, wru: (input.TransactItems ?? []).reduce((sum: number, item: any) => sum + 2 * write(item.Put?.Item), 0) }; // eslint-disable-line @typescript-eslint/no-explicit-any
    case 'TransactGetItems':
      return { rru: 2 * (input.TransactItems ?? []).length, wru: 0 };
    default:
      throw new Error(`no capacity rule for DynamoDB ${command}`);
  }
}

/** An item's size as DynamoDB counts it: its attribute names and values (a number by its digits). */
function itemBytes(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\.|e.*$/gi, '').length / 2) + 1;
  if (value.B !== undefined) return value.B.length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, v) => sum + Buffer.byteLength(v), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, v) => sum + Math.ceil(v.length / 2) + 1, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueBytes(v), 0);
  if (value.M !== undefined) return 3 + Object.entries(value.M).reduce((sum, [name, v]) => sum + 1 + Buffer.byteLength(name) + valueBytes(v), 0);
  return 0;
}

/**
 * The guard's "last used" write of the key item (`key#…`), once a minute per container: when it falls depends
 * on the clock. (Its look-up of the key, once per container and cache period, falls in the warm-up: the cache
 * outlasts the run.)
 */
function isKeyCheck(service: string, command: string, input: Record<string, unknown> | undefined): boolean {
  if (service !== 'dynamodb' || command !== 'UpdateItem') return false;
  const pk = (input?.Key as Record<string, { S?: string }> | undefined)?.[ACCESS_PARTITION_KEY]?.S;
  return pk?.startsWith('key#') === true && String(input?.UpdateExpression ?? '').includes('lastUsedAt');
}

function watch(client: DynamoDBClient | S3Client, service: 'dynamodb' | 's3'): void {
  (client.middlewareStack as S3Client['middlewareStack']).add(
    (next, context) => (args) => tracked(service, (context.commandName ?? 'unknown').replace(/Command$/, ''), args.input as Record<string, unknown>, () => next(args)),
    { step: 'initialize', name: 'driveRouteCalls' },
  );
}

/** The job queue's client is made at its first send, inside the handler's module: its `send` is wrapped on the prototype. */
function watchSqs(): void {
  const send = SQSClient.prototype.send;
  SQSClient.prototype.send = function (this: SQSClient, command: { constructor: { name: string }; input?: unknown }, ...rest: unknown[]) {
    return tracked('sqs', command.constructor.name.replace(/Command$/, ''), command.input as Record<string, unknown>, () => (send as (...a: unknown[]) => Promise<unknown>).call(this, command, ...rest));
  } as typeof send;
}

/** What one measured request made: calls by command (key check apart) and its chain's length. */
export interface Measured {
  /** The route as the request's log line names it: method and resource (`POST /drive/upload`). */
  route: string;
  status: number;
  count: CallCount;
  keyCheck: number;
  /** Two chains of its calls ran side by side: `count.sequential` depends on which answered first. */
  sideBySide: boolean;
  /** What the request's own log line said it made, by service (the key check's calls included). */
  logged: Record<string, number>;
  /** The bytes of that line, as CloudWatch Logs ingests them (its newline included). */
  logBytes: number;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function measureRoutes(): Promise<Record<string, Measured>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'drive-calls-'));
  Object.assign(process.env, {
    // Limits on (each request pays its bucket's write), far above what this run sends.
    DRIVE_RATE_LIMITS: Object.keys(SPEC_RATE_LIMITS).map((name) => `${name}=1000000`).join(','),
    // A warm container's key cache, longer than the run.
    DRIVE_KEY_CACHE_SECONDS: '3600',
    DRIVE_FOLDER_CACHE_SECONDS: '3600',
    // Every folder move a job, so that a job exists to read (GET /drive/jobs/{id}); file moves are unchanged.
    DRIVE_MOVE_BUDGET_MS: '0',
    DRIVE_LOCAL_SWEEP_SECONDS: '3600',
    DRIVE_LOCAL_FSCK_SECONDS: '86400',
    // The trash on (issue 28; the default, 7 days, named so that the pins never follow a change of the default):
    // the delete and replace pins below are the trash's, and the deletes fill the trash that its routes' pins read.
    DRIVE_TRASH_DAYS: '7',
  });
  // The request log lines the handlers write, by request id: a request is over when its line is out.
  const lines = new Map<string, Json>();
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    for (const text of String(chunk).split('\n')) {
      if (!text.startsWith('{')) continue;
      try {
        const line = JSON.parse(text) as Json;
        if (line.message === 'request' && typeof line.request_id === 'string') lines.set(line.request_id, line);
      } catch {
        // not a log line
      }
    }
    return true;
    void rest;
  }) as typeof process.stdout.write;

  const host = await startLocalHost({ port: 0, dataDir, apiKeys: `${DRIVE}:${SECRET}:admin`, log: () => undefined });
  const handlerClients = { dynamodb: (await import('../../functions/wiring/dynamodb.js')).dynamodb, s3: (await import('../../functions/wiring/objects.js')).s3 };
  watch(handlerClients.dynamodb, 'dynamodb');
  watch(handlerClients.s3, 's3');
  watchSqs();

  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json?: Json; id: string; headers: Headers }> => {
    const isBuffer = body instanceof Uint8Array;
    const res = await fetch(new URL(path, host.url), {
      method,
      // A 307 (a direct download) is the answer measured, not the storage request it points to.
      redirect: 'manual',
      headers: { Authorization: `Bearer ${SECRET}`, ...(body !== undefined && !isBuffer ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : isBuffer ? body : JSON.stringify(body),
    });
    const text = method === 'HEAD' ? '' : await res.text();
    const json = text.startsWith('{') ? (JSON.parse(text) as Json) : undefined;
    return { status: res.status, json, id: res.headers.get('x-request-id') ?? '', headers: res.headers };
  };
  /** `condition`: each file's `if_match` or `if_none_match`, in its metadata entry; `extra`: request headers. */
  const upload = (files: { name: string; bytes: number }[], folder: string, condition: Record<string, string> = {}, extra: Record<string, string> = {}) => {
    const boundary = 'routecalls0boundary';
    const parts: Buffer[] = [];
    for (const file of files) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`), Buffer.alloc(file.bytes, 5), Buffer.from('\r\n'));
    }
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify(files.map(() => ({ folder, ...condition })))}\r\n--${boundary}--\r\n`));
    return send('POST', '/drive/upload', Buffer.concat(parts), { 'Content-Type': `multipart/form-data; boundary=${boundary}`, ...extra });
  };
  const ok = async <T extends { status: number; json?: Json }>(answer: Promise<T>, status = 200): Promise<T> => {
    const res = await answer;
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.json)}`);
    return res;
  };

  const results: Record<string, Measured> = {};
  /** Sends the request `run` makes, waits until it has logged its line and its calls have answered, and notes what it made. */
  const measure = async (name: string, run: () => Promise<{ status: number; id: string }>): Promise<void> => {
    const res = await run();
    const settled = () => lines.has(res.id) && (byRequest.get(res.id)?.inFlight ?? 0) === 0;
    for (let i = 0; i < 2000 && !settled(); i++) await new Promise((done) => setTimeout(done, 5));
    // Counted only once settled: a count taken while calls are in flight would be wrong, not slow.
    if (!settled()) throw new Error(`${name}: the request ${res.id} had not logged its line and ended its calls within 10 s`);
    const line = lines.get(res.id);
    if (!line) throw new Error(`${name}: the request ${res.id} wrote no log line`);
    const calls = byRequest.get(res.id)?.calls ?? [];
    const own = calls.filter((call) => !call.keyCheck);
    const count: CallCount = { dynamodb: {}, s3: {}, sqs: {}, sequential: 0, total: own.length, rru: 0, wru: 0 };
    for (const call of own) {
      count[call.service][call.command] = (count[call.service][call.command] ?? 0) + 1;
      count.sequential = Math.max(count.sequential, call.depth);
      count.rru += call.rru;
      count.wru += call.wru;
    }
    for (const service of ['dynamodb', 's3', 'sqs'] as const) count[service] = Object.fromEntries(Object.entries(count[service]).sort(([a], [b]) => a.localeCompare(b)));
    results[name] = { route: `${String(line.method)} ${String(line.route)}`, status: res.status, count, sideBySide: byRequest.get(res.id)?.sideBySide ?? false, keyCheck: calls.length - own.length, logged: (line.aws_calls ?? {}) as Record<string, number>, logBytes: Buffer.byteLength(`${JSON.stringify(line)}\n`) };
  };

  try {
    // Warm: the key found and cached, its use noted, every handler loaded.
    await ok(send('GET', '/drive/whoami'));
    // The change feed, first: before any write, its log holds nothing, so what a read costs is the same every run
    // (the sequencer runs beside the requests, and later the log grows while they are measured).
    let feedCursor = '';
    await measure('take a change feed cursor', async () => {
      const res = await ok(send('GET', '/drive/changes/latest?path=/up'));
      feedCursor = String(res.json?.data?.cursor);
      return res;
    });
    await measure('read the change feed, nothing new', () => ok(send('GET', `/drive/changes?cursor=${feedCursor}`)));
    await measure("read a folder's recent changes, none yet", () => ok(send('GET', '/drive/changes/recent?path=/up')));
    await ok(send('POST', '/drive/folders', { path: '/up' }));
    await ok(send('POST', '/drive/folders', { path: '/up1m' }));
    await ok(send('POST', '/drive/folders', { path: '/idem' }));
    await ok(upload([{ name: 'a.bin', bytes: 4096 }, { name: 'b.bin', bytes: 4096 }, { name: 'c.bin', bytes: 4096 }], '/files'));
    await ok(upload([{ name: '4k.bin', bytes: 4096 }, { name: '1m.bin', bytes: 1024 * 1024 }], '/dl'));
    await ok(upload(Array.from({ length: 10 }, (_, i) => ({ name: `f${i}.bin`, bytes: 16 })), '/list10'));
    for (let batch = 0; batch < 4; batch++) await ok(upload(Array.from({ length: 100 }, (_, i) => ({ name: `file-${batch * 100 + i}.bin`, bytes: 16 })), '/list400'));
    for (const sub of ['x', 'y']) await ok(upload([{ name: '1.bin', bytes: 16 }, { name: '2.bin', bytes: 16 }], `/tree/${sub}`));
    for (const dir of ['/gone', '/moving', '/copying']) await ok(upload([{ name: '1.bin', bytes: 16 }, { name: '2.bin', bytes: 16 }], dir));

    await measure('upload 4 KiB into an existing folder', () => ok(upload([{ name: 'u4k.bin', bytes: 4096 }], '/up')));
    await measure('upload 1 MiB into an existing folder', () => ok(upload([{ name: 'u1m.bin', bytes: 1024 * 1024 }], '/up1m')));
    // Into a folder this container's uploads found live after writing into it (DRIVE_FOLDER_CACHE_SECONDS): no first read.
    await measure('upload 4 KiB into a folder written into in the last 30 s', () => ok(upload([{ name: 'w4k.bin', bytes: 4096 }], '/up')));
    await measure('upload 1 MiB into a folder written into in the last 30 s', () => ok(upload([{ name: 'w1m.bin', bytes: 1024 * 1024 }], '/up1m')));
    await measure('upload 10 files of 4 KiB into an existing folder', () => ok(upload(Array.from({ length: 10 }, (_, i) => ({ name: `u10-${i}.bin`, bytes: 4096 })), '/up')));
    await measure('upload 4 KiB into 3 new folders', () => ok(upload([{ name: 'n.bin', bytes: 4096 }], '/new/a/b')));
    // Conditions ride on the record's write (protocol/README.md, "Transitions"): no call more; a stale one is refused on the read, before any write.
    const u4k = createHash('md5').update(Buffer.alloc(4096, 5)).digest('hex');
    await measure('upload 4 KiB with if_match, replacing', () => ok(upload([{ name: 'u4k.bin', bytes: 4096 }], '/up', { if_match: u4k })));
    await measure('upload 4 KiB with if_none_match, new', () => ok(upload([{ name: 'cond.bin', bytes: 4096 }], '/up', { if_none_match: '*' })));
    await measure('upload 4 KiB with a stale if_match', () => ok(upload([{ name: 'u4k.bin', bytes: 4096 }], '/up', { if_match: 'stale' }), 412));
    await measure('download 4 KiB', () => ok(send('GET', '/drive/download?path=/dl/4k.bin')));
    await measure('download 1 MiB', () => ok(send('GET', '/drive/download?path=/dl/1m.bin')));
    await measure('download a range', () => ok(send('GET', '/drive/download?path=/dl/1m.bin', undefined, { Range: 'bytes=0-1023' }), 206));
    await measure('download, not modified', async () => {
      const head = await ok(send('HEAD', '/drive/download?path=/dl/4k.bin'));
      return ok(send('GET', '/drive/download?path=/dl/4k.bin', undefined, { 'If-None-Match': head.headers.get('etag') ?? '' }), 304);
    });
    await measure('HEAD a file', () => ok(send('HEAD', '/drive/download?path=/dl/4k.bin')));
    await measure('download 1 MiB above redirect_above', () => ok(send('GET', '/drive/download?path=/dl/1m.bin&redirect_above=4096'), 307));
    await measure('download 4 KiB at redirect_above', () => ok(send('GET', '/drive/download?path=/dl/4k.bin&redirect_above=4096')));
    await measure('list a folder of 10 files', () => ok(send('GET', '/drive/list?folder=/list10')));
    await measure('list a folder of 400 files', () => ok(send('GET', '/drive/list?folder=/list400')));
    await measure('list recursive, 4 files in 2 folders', () => ok(send('GET', '/drive/list?folder=/tree&recursive=true')));
    await measure('create a folder', () => ok(send('POST', '/drive/folders', { path: '/made' })));
    await measure('create a 3-deep folder', () => ok(send('POST', '/drive/folders', { path: '/deep/a/b' })));
    await measure('create a folder that exists', () => ok(send('POST', '/drive/folders', { path: '/made' })));
    await measure('delete 3 files', () => ok(send('DELETE', '/drive/files', { paths: ['/files/a.bin', '/files/b.bin', '/files/c.bin'] })));
    await measure('delete a folder of 2 files', () => ok(send('DELETE', '/drive/folders?path=/gone&recursive=true')));
    await measure('delete an empty folder', () => ok(send('DELETE', '/drive/folders?path=/made')));
    await measure('move a file', () => ok(send('POST', '/drive/move', { from: '/up/u4k.bin', to: '/up/moved.bin' })));
    let jobId = '';
    await measure('move a folder (handed to a job)', async () => {
      const res = await ok(send('POST', '/drive/move', { from: '/moving', to: '/moved' }), 202);
      jobId = (res.json?.data?.job?.id ?? res.json?.job?.id) as string;
      return res;
    });
    await measure('read a job', () => ok(send('GET', `/drive/jobs/${jobId}`)));
    await measure('copy a file', () => ok(send('POST', '/drive/copy', { from: '/dl/4k.bin', to: '/dl/copy.bin' })));
    await measure('copy a folder of 2 files', () => ok(send('POST', '/drive/copy', { from: '/copying', to: '/copied' })));
    await measure('whoami', () => ok(send('GET', '/drive/whoami')));
    // The trash (issue 28): the three files deleted above are its items.
    let trashIds: string[] = [];
    await measure('list the trash, one page', async () => {
      const res = await ok(send('GET', '/drive/trash?path=/files'));
      trashIds = ((res.json?.data?.items ?? []) as { id: string }[]).map((item) => item.id);
      return res;
    });
    await measure('restore a file', () => ok(send('POST', '/drive/trash/restore', { id: trashIds[0] })));
    await measure('purge a file', () => ok(send('DELETE', `/drive/trash/${trashIds[1]}`)));
    await measure('empty the trash of a folder', () => ok(send('DELETE', '/drive/trash?path=/files')));

    // Idempotency-Key (issue 26): the key taken beside the rate-limit bucket, the answer kept after the handler;
    // a replay is the refused take alone (the record comes back with the refusal), beside the bucket.
    const idem = (key: string) => ({ 'Idempotency-Key': key });
    await measure('upload 4 KiB with an Idempotency-Key', () => ok(upload([{ name: 'idem.bin', bytes: 4096 }], '/idem', {}, idem('route-calls-upload'))));
    await measure('upload 4 KiB with an Idempotency-Key, replayed', () => ok(upload([{ name: 'idem.bin', bytes: 4096 }], '/idem', {}, idem('route-calls-upload'))));
    await measure('create a folder with an Idempotency-Key', () => ok(send('POST', '/drive/folders', { path: '/idem-made' }, idem('route-calls-folder'))));

    let uploadId = '';
    let partUrl = '';
    await measure('large upload: start', async () => {
      const res = await ok(send('POST', '/drive/uploads', { path: '/big/one.bin', size: 4096, content_type: 'application/octet-stream' }));
      const data = (res.json?.data ?? res.json) as Json;
      uploadId = data.upload_id as string;
      partUrl = data.parts[0].url as string;
      return res;
    });
    await measure('large upload: part URLs', () => ok(send('GET', `/drive/uploads/${uploadId}/parts?from=1`)));
    const put = await fetch(partUrl, { method: 'PUT', body: Buffer.alloc(4096, 9) });
    if (put.status !== 200) throw new Error(`part PUT: ${put.status} ${await put.text()}`);
    const etag = put.headers.get('etag')!;
    await measure('large upload: complete', () => ok(send('POST', `/drive/uploads/${uploadId}/complete`, { parts: [{ number: 1, etag }] })));
    let abortId = '';
    await ok(send('POST', '/drive/uploads', { path: '/big/two.bin', size: 4096 })).then((res) => (abortId = ((res.json?.data ?? res.json) as Json).upload_id as string));
    await measure('large upload: abort', () => ok(send('DELETE', `/drive/uploads/${abortId}`)));

    let linkUrl = '';
    let linkId = '';
    await measure('create a share link', async () => {
      const res = await ok(send('POST', '/drive/links', { path: '/dl/4k.bin' }));
      const data = (res.json?.data ?? res.json) as Json;
      linkUrl = data.url as string;
      linkId = data.id as string;
      return res;
    });
    await measure('list share links', () => ok(send('GET', '/drive/links')));
    await measure('open a share link', () => ok(send('GET', new URL(linkUrl).pathname)));
    await measure('HEAD a share link', () => ok(send('HEAD', new URL(linkUrl).pathname)));
    await measure('revoke a share link', () => ok(send('DELETE', `/drive/links/${linkId}`)));
    const me = ((await ok(send('GET', '/drive/whoami'))).json?.data ?? {}) as Json;
    await ok(send('POST', '/drive/links', { path: '/dl/4k.bin' }));
    await measure('revoke the share links a key made (a page)', () => ok(send('DELETE', `/drive/links?created_by=${(me.key_id ?? me.id ?? me.key?.id) as string}`)));

    await measure('list keys', () => ok(send('GET', '/drive/keys')));
    let keyId = '';
    await measure('create a key', async () => {
      const res = await ok(send('POST', '/drive/keys', { name: 'counted', role: 'read-only' }));
      keyId = (((res.json?.data ?? res.json) as Json).key?.id ?? ((res.json?.data ?? res.json) as Json).id) as string;
      return res;
    });
    await measure('revoke a key', () => ok(send('DELETE', `/drive/keys/${keyId}`)));

    // Webhooks (issue 27): a receiver on loopback, which registering does not call.
    let webhookId = '';
    await measure('register a webhook', async () => {
      const res = await ok(send('POST', '/drive/webhooks', { url: 'http://127.0.0.1:9/hooks' }));
      webhookId = (((res.json?.data ?? res.json) as Json).webhook?.id ?? '') as string;
      return res;
    });
    await measure('list webhooks', () => ok(send('GET', '/drive/webhooks')));
    await measure("list a webhook's failed deliveries", () => ok(send('GET', `/drive/webhooks/${webhookId}/deliveries?status=failed`)));
    await measure('delete a webhook', () => ok(send('DELETE', `/drive/webhooks/${webhookId}`)));

    // Federation: an issuer on loopback, its keys fetched by a first exchange (a warm container's cache).
    const issuer = await TestIssuer.start();
    try {
      let trustId = '';
      await measure('create a trust rule', async () => {
        const res = await ok(send('POST', '/drive/trust', { issuer: issuer.url, audience: 'drive', subject: 'repo:acme/etl:ref:refs/heads/*', role: 'upload-only', prefix: '/ingest' }));
        trustId = ((res.json?.data ?? res.json) as Json).trust.id as string;
        return res;
      });
      await measure('list trust rules', () => ok(send('GET', '/drive/trust')));
      await ok(send('POST', '/drive/token', { drive: DRIVE, token: await issuer.sign({}) }));
      const token = await issuer.sign({});
      await measure('exchange a token (issuer keys cached)', () => ok(send('POST', '/drive/token', { drive: DRIVE, token })));
      await measure('revoke a trust rule and its 2 keys', () => ok(send('DELETE', `/drive/trust/${trustId}`)));
    } finally {
      await issuer.stop();
    }
    return results;
  } finally {
    process.stdout.write = write;
    await host.close();
    await removeDataDir(dataDir);
  }
}

if (require.main === module) {
  measureRoutes().then(
    (results) => process.stdout.write(`${JSON.stringify(results)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}

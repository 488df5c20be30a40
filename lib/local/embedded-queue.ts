import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { join } from 'node:path';
import { DeduplicationWindow, deliverable } from './fifo';
import { type Credentials, startGateway } from './signed-gateway';
import { makeSocketDir } from './socket-dir';

/** The account id in the queue URLs the host makes (it has no AWS account). */
const LOCAL_ACCOUNT = '000000000000';
/** SQS's largest message body. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/** A message as the embedded queue keeps it: one file each, so that it outlives the host. */
interface StoredMessage {
  id: string;
  body: string;
  sentAt: number;
  receiveCount: number;
  /** Not delivered before this (epoch ms): a delay, or a delivery in progress (SQS's visibility timeout). */
  visibleAt: number;
  /** FIFO queues: the message group, the order it was sent in, and when it was first received. */
  groupId?: string;
  sequence?: number;
  firstReceivedAt?: number;
}

/**
 * A message's place in the order of sends: a number that only grows, at least the send's time × 1000, so
 * that any number of sends within one millisecond (or a clock that steps back) keeps their order. Raised at
 * start past the stored messages' highest, so that a restarted host queues after them.
 */
let lastSequence = 0;
const nextSequence = () => (lastSequence = Math.max(lastSequence + 1, Date.now() * 1000));

export interface EmbeddedQueues {
  /** Where SQS clients send (the gateway in front of the queues). */
  endpoint: string;
  /** The URL of the queue `name`, as SQS names queues; the SDK sends to the URL's own host. */
  queueUrl(name: string): string;
  /** Feeds the queue `name` to `worker`, as Lambda's SQS event source mapping does; returns a stop. */
  feed(name: string, worker: QueueFeed): () => Promise<void>;
  close(): Promise<void>;
}

export interface QueueFeed {
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;
  /** The function's timeout: a step not done by then counts as failed (Lambda would stop it). */
  timeoutMs: number;
  /** Deliveries before the message goes to the dead-letter folder. */
  maxReceives: number;
  /** How long a delivered message stays hidden (6 × the function's timeout, as in the stack). */
  visibilityMs: number;
  /** Steps run at once (Lambda scales an SQS event source out; the host runs a few). */
  concurrency: number;
  log: (line: string) => void;
}

/**
 * An embedded SQS for the host: `SendMessage`, `SendMessageBatch` and `ChangeMessageVisibility` over AWS's JSON protocol, behind the same SigV4 gateway as the
 * other emulators, with each message a file under `<dataDir>/queues/<name>/`. A feed delivers the messages
 * one at a time to the queue's worker handler, deletes those it handled, and after `maxReceives` failed
 * deliveries moves a message to `<name>-dead-letters/`. A host that stops ends every step it was running, so
 * at start every message is visible again (in AWS, they would be once their visibility timeout passed).
 * The queues named in `fifo` keep SQS FIFO's rules (lib/local/fifo.ts): each message needs a group and a
 * deduplication id; a group's messages go one at a time in order, its oldest hidden holds the rest; a
 * deduplication id sent in the last 5 minutes (since the host started) is accepted and dropped.
 */
export async function startEmbeddedQueues(dataDir: string, names: readonly string[], region: string, credentials: Credentials, fifo: readonly string[] = []): Promise<EmbeddedQueues> {
  const root = join(dataDir, 'queues');
  for (const name of names) {
    await mkdir(join(root, name), { recursive: true });
    await mkdir(join(root, `${name}-dead-letters`), { recursive: true });
    for (const message of await readMessages(join(root, name))) {
      if (message.sequence !== undefined) lastSequence = Math.max(lastSequence, message.sequence);
      await store(join(root, name), { ...message, visibleAt: 0 });
    }
  }
  const wake = new Map<string, () => void>();
  const windows = new Map<string, DeduplicationWindow>(fifo.map((name) => [name, new DeduplicationWindow()]));
  const socketDir = await makeSocketDir(dataDir, 'sqs.sock');
  const socketPath = join(socketDir, 'sqs.sock');
  const server = createServer((req, res) => {
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    answer(req, res, root, { names, fifo, windows }, (name) => wake.get(name)?.()).catch((error: unknown) => reply(res, 500, { __type: 'com.amazonaws.sqs#InternalError', message: String(error) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  const gateway = await startGateway({ service: 'sqs', socketPath, region, credentials });
  const feeds: (() => Promise<void>)[] = [];
  return {
    endpoint: gateway.endpoint,
    queueUrl: (name) => `${gateway.endpoint}/${LOCAL_ACCOUNT}/${name}`,
    feed: (name, worker) => {
      const stop = feedQueue(root, name, worker, (poke) => wake.set(name, poke), fifo.includes(name));
      feeds.push(stop);
      return stop;
    },
    close: async () => {
      await Promise.all(feeds.map((stop) => stop()));
      await gateway.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}

interface QueueSet {
  names: readonly string[];
  fifo: readonly string[];
  windows: Map<string, DeduplicationWindow>;
}

type Reply = { status: number; body: Record<string, unknown> };
const refusal = (type: string, message: string): Reply => ({ status: 400, body: { __type: `com.amazonaws.sqs#${type}`, message } });

/**
 * Answers one request of AWS's JSON protocol: `SendMessage`, `SendMessageBatch` or `ChangeMessageVisibility`
 * on a known queue; anything else is refused as SQS would.
 */
async function answer(req: IncomingMessage, res: ServerResponse, root: string, queues: QueueSet, sent: (name: string) => void): Promise<void> {
  const body = await readBody(req, 10 * MAX_MESSAGE_BYTES + 64 * 1024);
  const target = String(req.headers['x-amz-target'] ?? '');
  const operations = ['AmazonSQS.SendMessage', 'AmazonSQS.SendMessageBatch', 'AmazonSQS.ChangeMessageVisibility'];
  if (!operations.includes(target)) return reply(res, 400, { __type: 'com.amazonaws.sqs#UnsupportedOperation', message: `the embedded queue takes SendMessage, SendMessageBatch and ChangeMessageVisibility only, not ${target.slice(0, 60)}` });
  let input: Record<string, unknown>;
  try {
    input = JSON.parse(body?.toString('utf8') ?? '') as typeof input;
  } catch {
    return reply(res, 400, { __type: 'com.amazonaws.sqs#InvalidParameterValue', message: 'the request is not JSON' });
  }
  const name = typeof input.QueueUrl === 'string' ? /^https?:\/\/[^/]+\/\d{12}\/([\w-]{1,80})$/.exec(input.QueueUrl)?.[1] : undefined;
  if (!name || !queues.names.includes(name)) return reply(res, 400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' });
  const dir = join(root, name);
  if (target === 'AmazonSQS.ChangeMessageVisibility') {
    const outcome = await changeVisibility(dir, input.ReceiptHandle, input.VisibilityTimeout);
    return reply(res, outcome.status, outcome.body);
  }
  const fifo = queues.fifo.includes(name);
  const entries = target === 'AmazonSQS.SendMessage' ? [input] : Array.isArray(input.Entries) ? (input.Entries as Record<string, unknown>[]) : [];
  if (target === 'AmazonSQS.SendMessageBatch' && (entries.length < 1 || entries.length > 10)) return reply(res, 400, { __type: 'com.amazonaws.sqs#TooManyEntriesInBatchRequest', message: 'a batch holds 1 to 10 entries' });
  // Checked whole before any is stored, so a refused request stores nothing.
  for (const entry of entries) {
    const problem = entryProblem(entry, fifo);
    if (problem) return reply(res, problem.status, problem.body);
  }
  const successful: Record<string, unknown>[] = [];
  for (const entry of entries) {
    const text = entry.MessageBody as string;
    const id = randomUUID();
    const md5 = createHash('md5').update(text).digest('hex');
    successful.push({ ...(entry.Id === undefined ? {} : { Id: entry.Id }), MessageId: id, MD5OfMessageBody: md5 });
    if (fifo && queues.windows.get(name)!.duplicate(String(entry.MessageDeduplicationId), Date.now())) continue;
    const delay = fifo || entry.DelaySeconds === undefined ? 0 : Number(entry.DelaySeconds);
    const message: StoredMessage = {
      id,
      body: text,
      sentAt: Date.now(),
      receiveCount: 0,
      visibleAt: Date.now() + delay * 1000,
      ...(fifo ? { groupId: String(entry.MessageGroupId), sequence: nextSequence() } : {}),
    };
    await store(dir, message);
  }
  sent(name);
  if (target === 'AmazonSQS.SendMessage') return reply(res, 200, { MessageId: successful[0].MessageId, MD5OfMessageBody: successful[0].MD5OfMessageBody });
  reply(res, 200, { Successful: successful, Failed: [] });
}

/** Why SQS would refuse this message, or undefined. */
function entryProblem(entry: Record<string, unknown>, fifo: boolean): Reply | undefined {
  if (typeof entry.MessageBody !== 'string' || entry.MessageBody === '' || Buffer.byteLength(entry.MessageBody) > MAX_MESSAGE_BYTES) {
    return refusal('InvalidParameterValue', `MessageBody must be 1 to ${MAX_MESSAGE_BYTES} bytes`);
  }
  if (fifo) {
    const token = (value: unknown) => typeof value === 'string' && /^[\x21-\x7e]{1,128}$/.test(value);
    if (!token(entry.MessageGroupId)) return refusal('MissingParameter', 'The request must contain the parameter MessageGroupId.');
    // The queues here have no content-based deduplication: every message names its id.
    if (!token(entry.MessageDeduplicationId)) return refusal('InvalidParameterValue', 'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly');
    if (entry.DelaySeconds !== undefined && entry.DelaySeconds !== 0) return refusal('InvalidParameterValue', 'Value for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.');
    return undefined;
  }
  const delay = entry.DelaySeconds === undefined ? 0 : Number(entry.DelaySeconds);
  if (!Number.isInteger(delay) || delay < 0 || delay > 900) return refusal('InvalidParameterValue', 'DelaySeconds must be 0 to 900');
  return undefined;
}

/** `ChangeMessageVisibility`: the message the receipt handle names (its latest receive) hidden for `seconds` from now. */
async function changeVisibility(dir: string, handle: unknown, seconds: unknown): Promise<Reply> {
  const timeout = Number(seconds);
  if (!Number.isInteger(timeout) || timeout < 0 || timeout > 43_200) return refusal('InvalidParameterValue', 'VisibilityTimeout must be 0 to 43200');
  const [id, count] = typeof handle === 'string' ? handle.split(':') : [];
  const message = id && /^[\w-]+$/.test(id) ? (await readMessages(dir)).find((m) => m.id === id) : undefined;
  // A handle of an earlier receive, or of a message deleted meanwhile, no longer names a message in flight.
  if (!message || String(message.receiveCount) !== count) return refusal('ReceiptHandleIsInvalid', 'The receipt handle provided is not valid.');
  await store(dir, { ...message, visibleAt: Date.now() + timeout * 1000 });
  return { status: 200, body: {} };
}

/** Delivers the visible messages of queue `name` to `worker`, up to `concurrency` at once, until stopped. */
function feedQueue(root: string, name: string, worker: QueueFeed, onWake: (poke: () => void) => void, fifo = false): () => Promise<void> {
  const dir = join(root, name);
  const running = new Map<string, Promise<void>>();
  let stopped = false;
  let poke: (() => void) | undefined;
  onWake(() => poke?.());
  const rest = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      poke = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const step = async (message: StoredMessage) => {
    const failed = await deliver(name, message, worker);
    if (!failed) await unlink(join(dir, `${message.id}.json`)).catch(() => undefined);
    else if (message.receiveCount >= worker.maxReceives) {
      await rename(join(dir, `${message.id}.json`), join(root, `${name}-dead-letters`, `${message.id}.json`)).catch(() => undefined);
      worker.log(`a message of queue ${name} failed ${message.receiveCount} times; it is in queues/${name}-dead-letters`);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        const now = Date.now();
        const stored = await readMessages(dir);
        // FIFO: each group's oldest message alone, and only while none of its group is in flight (hidden).
        const candidates = fifo ? deliverable(stored.map((m) => ({ ...m, groupId: m.groupId ?? m.id, sequence: m.sequence ?? m.sentAt * 1000 })), now) : stored.filter((message) => message.visibleAt <= now).sort((a, b) => a.sentAt - b.sentAt);
        const visible = candidates.filter((message) => !running.has(message.id));
        for (const next of visible.slice(0, Math.max(0, worker.concurrency - running.size))) {
          const message = { ...next, receiveCount: next.receiveCount + 1, visibleAt: now + worker.visibilityMs, firstReceivedAt: next.firstReceivedAt ?? now };
          await store(dir, message);
          running.set(message.id, step(message).catch((error: unknown) => worker.log(`queue ${name}: ${String(error)}`)).finally(() => {
            running.delete(message.id);
            poke?.();
          }));
        }
      } catch (error) {
        // A disk that refuses a write this moment: the feed goes on, and the message is there next time.
        worker.log(`the feed of queue ${name} failed to read or write a message: ${String(error)}`);
      }
      await rest(500);
    }
    // Steps still running are left to end as they may: a host that stops ends them (the messages stay for the next start).
  })();
  return async () => {
    stopped = true;
    poke?.();
    await loop;
  };
}

/** Invokes the worker with the message as an SQS event; true if the step failed (threw, timed out, or reported it). */
async function deliver(name: string, message: StoredMessage, worker: QueueFeed): Promise<boolean> {
  const event: SQSEvent = {
    Records: [
      {
        messageId: message.id,
        receiptHandle: `${message.id}:${message.receiveCount}`,
        body: message.body,
        attributes: {
          ApproximateReceiveCount: String(message.receiveCount),
          SentTimestamp: String(message.sentAt),
          SenderId: LOCAL_ACCOUNT,
          ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? Date.now()),
          ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(message.body).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:local:${LOCAL_ACCOUNT}:${name}`,
        awsRegion: 'local',
      },
    ],
  };
  const context = { functionName: name, awsRequestId: randomUUID(), getRemainingTimeInMillis: () => worker.timeoutMs } as unknown as Context;
  let timer: NodeJS.Timeout | undefined;
  try {
    const outcome = await Promise.race([
      worker.handler(JSON.parse(JSON.stringify(event)) as SQSEvent, context),
      new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), worker.timeoutMs))),
    ]);
    if (outcome === 'late') {
      worker.log(`the worker of queue ${name} did not finish within ${worker.timeoutMs / 1000} s; the message comes back after its visibility timeout`);
      return true;
    }
    return (outcome?.batchItemFailures ?? []).some((failure) => failure.itemIdentifier === message.id);
  } catch (error) {
    worker.log(`the worker of queue ${name} failed: ${String(error)}`);
    return true;
  } finally {
    clearTimeout(timer);
  }
}

async function readMessages(dir: string): Promise<StoredMessage[]> {
  const messages: StoredMessage[] = [];
  for (const file of await readdir(dir).catch(() => [] as string[])) {
    if (!file.endsWith('.json')) continue;
    let text: string;
    try {
      text = await readFile(join(dir, file), 'utf8');
    } catch {
      // Removed this moment (a file is only ever written whole, under another name, then renamed).
      continue;
    }
    const message = wellFormed(text, file.slice(0, -'.json'.length));
    // Not one this queue wrote: set aside beside the dead letters, where an operator finds it.
    if (!message) await rename(join(dir, file), join(`${dir}-dead-letters`, `malformed-${randomUUID()}.json`)).catch(() => undefined);
    else messages.push(message);
  }
  return messages;
}

/** The message a file holds, if it is one this queue wrote under that file's name; undefined otherwise. */
function wellFormed(text: string, name: string): StoredMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const message = value as Record<string, unknown>;
  const numbers = [message.sentAt, message.receiveCount, message.visibleAt].every((n) => typeof n === 'number' && Number.isFinite(n));
  const optional = [message.sequence, message.firstReceivedAt].every((n) => n === undefined || (typeof n === 'number' && Number.isFinite(n)));
  if (!optional || (message.groupId !== undefined && typeof message.groupId !== 'string')) return undefined;
  if (message.id !== name || !/^[\w-]+$/.test(name) || typeof message.body !== 'string' || !numbers) return undefined;
  return message as unknown as StoredMessage;
}

/** Writes the message whole or not at all (a new file renamed over the old). */
async function store(dir: string, message: StoredMessage): Promise<void> {
  const temporary = join(dir, `.${message.id}.${randomUUID()}.tmp`);
  await writeFile(temporary, JSON.stringify(message));
  await rename(temporary, join(dir, `${message.id}.json`));
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return resolve(undefined);
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(undefined));
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0' });
  res.end(JSON.stringify(body));
}

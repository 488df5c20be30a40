import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import dgram, { type Socket, createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { countAwsCalls } from '../../../functions/telemetry/aws-call-counter';
import { withRequestContext } from '../../../functions/telemetry/request-context';
import { MAX_SUBSEGMENTS, sendSubsegment, traceContextOf } from '../../../functions/telemetry/trace';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Role } from '../../../functions/core/access';
import { jsonHandler } from '../../../functions/http/api-handler';
import type { Guard } from '../../../functions/http/guard';

// Each AWS call of a traced request is one X-Ray subsegment, sent to the daemon as the X-Ray SDK sends it.

const ROOT = '1-5759e988-bd862e3fe1be46a994272793';
const PARENT = '53995c3f42cd8ad8';
const SAMPLED = `Root=${ROOT};Parent=${PARENT};Sampled=1`;

/** A DynamoDB client whose calls answer at once without the network, with `status` (and fail unless 2xx). */
function offline(status = 200, errorName?: string): DynamoDBClient {
  const client = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
  (client.middlewareStack as unknown as S3Client['middlewareStack']).add(
    () => async () => {
      // A turn of the event loop, as a real call takes, in which the daemon here reads what was sent.
      await new Promise((resolve) => setImmediate(resolve));
      const $metadata = { httpStatusCode: status, requestId: 'AWSREQUESTID', attempts: 1 };
      if (status >= 300) throw Object.assign(new Error('refused'), { name: errorName ?? (status === 429 ? 'ThrottlingException' : 'Refused'), $metadata });
      return { output: { $metadata }, response: {} };
    },
    { step: 'finalizeRequest', name: 'offline' },
  );
  return countAwsCalls(client, 'dynamodb');
}

const getItem = () => new GetItemCommand({ TableName: 't', Key: { pk: { S: 'p' } } });

let daemon: Socket;
let received: string[];

beforeEach(async () => {
  received = [];
  daemon = createSocket('udp4');
  daemon.on('message', (message) => received.push(message.toString('utf8')));
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  process.env.AWS_XRAY_DAEMON_ADDRESS = `127.0.0.1:${(daemon.address() as AddressInfo).port}`;
});

afterEach(async () => {
  delete process.env.AWS_XRAY_DAEMON_ADDRESS;
  await new Promise<void>((resolve) => daemon.close(() => resolve()));
});

/** The operation of the marker `datagrams` sends after a test's own sends: a name no call of the code has. */
const MARKER = 'TestEndMarker';

/**
 * Every datagram the code under test sent so far, without waiting on a clock: a marker goes out after them
 * through the same module's socket (`send`, the module's `sendSubsegment`), and datagrams from one socket to
 * one socket on loopback arrive in order, so once the marker is here everything sent before it is too, and a
 * datagram that was never sent is known missing at once rather than after a fixed wait.
 */
async function datagrams(send: typeof sendSubsegment = sendSubsegment): Promise<Record<string, unknown>[]> {
  const arrived = new Promise<void>((resolve) => {
    const onMessage = (message: Buffer) => {
      if (!message.toString('utf8').includes(MARKER)) return;
      daemon.off('message', onMessage);
      resolve();
    };
    daemon.on('message', onMessage);
  });
  send({ root: ROOT, parent: PARENT, sampled: true }, { service: 'marker', operation: MARKER, start: Date.now(), end: Date.now() });
  await arrived;
  return received
    .filter((text) => !text.includes(MARKER))
    .map((text) => {
      const [header, document] = text.split('\n');
      expect(JSON.parse(header)).toEqual({ format: 'json', version: 1 });
      return JSON.parse(document) as Record<string, unknown>;
    });
}

describe('Function: traceContextOf', () => {
  it('reads the root, the parent segment and the sampling decision', () => {
    expect(traceContextOf(SAMPLED)).toEqual({ root: ROOT, parent: PARENT, sampled: true });
    expect(traceContextOf(`Root=${ROOT};Parent=${PARENT};Sampled=0;Lineage=a:1`)).toEqual({ root: ROOT, parent: PARENT, sampled: false });
  });

  it.each([
    ['no header', undefined],
    ['no parent', `Root=${ROOT};Sampled=1`],
    ['a malformed root', `Root=1-xyz;Parent=${PARENT};Sampled=1`],
    ['a malformed parent', `Root=${ROOT};Parent=abc;Sampled=1`],
    ['prototype-named fields', '__proto__=x;constructor=y;toString=z'],
  ])('is no trace for %s', (_name, header) => {
    expect(traceContextOf(header)).toBeUndefined();
  });
});

describe('Function: countAwsCalls, in a traced request', () => {
  it('sends each call as a subsegment of the invocation, named and timed as the X-Ray SDK names them', async () => {
    const dynamodb = offline();

    const before = Date.now() / 1000;
    await withRequestContext('r1', async () => {
      await dynamodb.send(getItem());
      await dynamodb.send(getItem());
    }, SAMPLED);
    const after = Date.now() / 1000;

    const documents = await datagrams();
    expect(documents).toHaveLength(2);
    for (const document of documents) {
      expect(document).toMatchObject({
        name: 'DynamoDB',
        id: expect.stringMatching(/^[0-9a-f]{16}$/),
        trace_id: ROOT,
        parent_id: PARENT,
        type: 'subsegment',
        namespace: 'aws',
        aws: { operation: 'GetItem', request_id: 'AWSREQUESTID', retries: 0 },
        http: { response: { status: 200 } },
      });
      expect(document.start_time).toBeGreaterThanOrEqual(before - 0.001);
      expect(document.end_time).toBeGreaterThanOrEqual(document.start_time as number);
      expect(document.end_time).toBeLessThanOrEqual(after + 0.001);
      expect(document).not.toHaveProperty('fault');
      expect(document).not.toHaveProperty('error');
    }
    expect(documents[0].id).not.toBe(documents[1].id);
  });

  it.each([
    [429, undefined, { throttle: true, error: true }],
    [400, 'ProvisionedThroughputExceededException', { throttle: true, error: true }],
    [503, 'SlowDown', { throttle: true, error: true }],
    [404, undefined, { error: true }],
    [500, undefined, { fault: true }],
  ])('marks a call answered %i %s as X-Ray marks it', async (status, name, flags) => {
    const dynamodb = offline(status, name);

    await withRequestContext('r1', () => dynamodb.send(getItem()).catch(() => undefined), SAMPLED);

    const [document] = await datagrams();
    expect(document).toMatchObject({ ...flags, http: { response: { status } } });
  });

  it(`sends at most ${MAX_SUBSEGMENTS} subsegments for one invocation, however many calls it makes`, async () => {
    const dynamodb = offline();

    await withRequestContext('r1', async () => {
      for (let i = 0; i < MAX_SUBSEGMENTS + 50; i++) await dynamodb.send(getItem());
    }, SAMPLED);

    expect(await datagrams()).toHaveLength(MAX_SUBSEGMENTS);
  });

  it('sends nothing for a request not sampled, one with no trace, or calls outside a request', async () => {
    const dynamodb = offline();

    await withRequestContext('r1', () => dynamodb.send(getItem()), SAMPLED.replace('Sampled=1', 'Sampled=0'));
    await withRequestContext('r2', () => dynamodb.send(getItem()));
    await dynamodb.send(getItem());

    expect(await datagrams()).toEqual([]);
  });

  it("prefers Lambda's own trace (its Parent is the function's segment) to the request's header", async () => {
    const dynamodb = offline();
    process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=1111222233334444;Sampled=1`;
    try {
      await withRequestContext('r1', () => dynamodb.send(getItem()), SAMPLED);
    } finally {
      delete process.env._X_AMZN_TRACE_ID;
    }

    const [document] = await datagrams();
    expect(document).toMatchObject({ trace_id: ROOT, parent_id: '1111222233334444' });
  });

  it.each(['127.0.0.1:9', '127.0.0.1:0', '127.0.0.1:70000', 'daemon.example:2000', ''])('fails no call when the daemon is at %j', async (address) => {
    process.env.AWS_XRAY_DAEMON_ADDRESS = address;
    const dynamodb = offline();

    await expect(withRequestContext('r1', () => dynamodb.send(getItem()), SAMPLED)).resolves.toBeDefined();
  });
});

describe('Function: sendSubsegment', () => {
  it("binds its socket to loopback when the daemon is on this machine (the local host's), never to every interface", async () => {
    const made: Socket[] = [];
    const create = dgram.createSocket;
    const spy = jest.spyOn(dgram, 'createSocket').mockImplementation(((...args: Parameters<typeof create>) => {
      const socket = create(...args);
      made.push(socket);
      return socket;
    }) as typeof create);
    try {
      // A fresh copy of the module: the one the tests above used made its socket already.
      let send!: typeof sendSubsegment;
      jest.isolateModules(() => {
        ({ sendSubsegment: send } = jest.requireActual<typeof import('../../../functions/telemetry/trace')>('../../../functions/telemetry/trace'));
      });
      send({ root: ROOT, parent: PARENT, sampled: true }, { service: 'dynamodb', operation: 'GetItem', start: Date.now(), end: Date.now() });

      expect(await datagrams(send)).toHaveLength(1);
      expect(made).toHaveLength(1);
      expect((made[0].address() as AddressInfo).address).toBe('127.0.0.1');
    } finally {
      spy.mockRestore();
    }
  });
});

describe('X-Drive-Trace: a trace the sampling rule did not give', () => {
  const UNSAMPLED = SAMPLED.replace('Sampled=1', 'Sampled=0');
  let lines: Record<string, unknown>[];
  beforeEach(() => {
    lines = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((text) => {
      lines.push(JSON.parse(String(text)) as Record<string, unknown>);
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    delete process.env._X_AMZN_TRACE_ID;
  });

  /** Calls an endpoint that makes one DynamoDB call, for a key of `role`, with `headers`, in an invocation Lambda did not sample. */
  async function call(role: Role, headers: Record<string, string>, lambdaTrace: string | undefined = UNSAMPLED): Promise<void> {
    if (lambdaTrace) process.env._X_AMZN_TRACE_ID = lambdaTrace;
    const dynamodb = offline();
    const guard: Guard = async () => ({ caller: { drive: 'd', keyId: 'k1', role, prefix: '/' }, headers: {} });
    const handler = jsonHandler({ permission: 'list', guard, stores: {} }, async () => dynamodb.send(getItem()).then(() => ({ ok: true })));
    const event = { resource: '/drive/list', path: '/drive/list', httpMethod: 'GET', headers, multiValueHeaders: {}, body: null, isBase64Encoded: false, requestContext: { requestId: 'req-1' } } as unknown as APIGatewayProxyEvent;
    expect((await handler(event)).statusCode).toBe(200);
  }

  it("traces an admin key's request that asks: its calls under a segment of its own, in the request's trace", async () => {
    await call('admin', { 'X-Drive-Trace': '1' });

    const documents = await datagrams();
    expect(documents).toHaveLength(2);
    const segment = documents.find((d) => d.type === undefined)!;
    const subsegment = documents.find((d) => d.type === 'subsegment')!;
    expect(segment).toMatchObject({ trace_id: ROOT, origin: 'AWS::Lambda::Function', annotations: { forced: true }, http: { request: { method: 'GET', url: '/drive/list' }, response: { status: 200 } } });
    expect(segment.id).toMatch(/^[0-9a-f]{16}$/);
    expect(segment.id).not.toBe(PARENT);
    expect(subsegment).toMatchObject({ name: 'DynamoDB', trace_id: ROOT, parent_id: segment.id });
    expect(segment.end_time).toBeGreaterThanOrEqual(segment.start_time as number);
    expect(lines.at(-1)).toMatchObject({ message: 'request', trace_id: ROOT, trace_forced: true });
  });

  it('makes a trace of its own for a request that has none', async () => {
    await call('admin', { 'x-drive-trace': '1' }, '');

    const documents = await datagrams();
    expect(documents).toHaveLength(2);
    expect(documents[0].trace_id).toMatch(/^1-[0-9a-f]{8}-[0-9a-f]{24}$/);
    expect(documents[1].trace_id).toBe(documents[0].trace_id);
  });

  it.each([
    ['a read-write key', 'read-write', { 'X-Drive-Trace': '1' }],
    ['an upload-only key', 'upload-only', { 'X-Drive-Trace': '1' }],
    ['an admin key that does not ask', 'admin', {}],
    ['an admin key that asks otherwise', 'admin', { 'X-Drive-Trace': 'yes' }],
  ] as const)('traces nothing for %s', async (_name, role, headers) => {
    await call(role, headers);

    expect(await datagrams()).toEqual([]);
    expect(lines.at(-1)).not.toHaveProperty('trace_forced');
  });

  it('leaves a sampled request as it is: no second segment', async () => {
    await call('admin', { 'X-Drive-Trace': '1' }, SAMPLED);

    const documents = await datagrams();
    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({ type: 'subsegment', parent_id: PARENT });
    expect(lines.at(-1)).not.toHaveProperty('trace_forced');
  });
});

import type { APIGatewayProxyResult } from 'aws-lambda';
import { once } from 'node:events';
import { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { LINK_ROUTES, type Route } from '../../../routes';
import { type MountedRoute, NO_BODY_BYTES, createLocalServer } from '../../server';
import { guardKeyCheck } from '../../../local-host';

// The local host's own answers, before any handler: a refused request's client must read its answer (not a
// reset), a route with no body reads none, a guesser of keys is slowed, and no log line holds a link's token.

const GOOD_KEY = 'good-key-K67YEE5VvB4qHYXn9c2GY3uXWoe1K';
const echo = async (): Promise<APIGatewayProxyResult> => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{"data":{}}' });
const stream = async (): Promise<void> => undefined;
const ROUTES: MountedRoute[] = [
  { route: { method: 'POST', path: '/drive/upload', handler: 'upload', permission: 'upload', entry: '', streaming: false } as Route, handler: echo },
  { route: { method: 'GET', path: '/openapi.json', handler: 'openapi', entry: '', streaming: false }, handler: echo },
  { route: { method: 'GET', path: '/drive/jobs/{job_id}', handler: 'get-job', permission: 'jobs', entry: '', streaming: false } as Route, handler: echo },
  ...LINK_ROUTES.map((route) => ({ route, handler: stream })),
];

let server: Server;
let port: number;
let logged: string[];
let now: number;

async function start(options: Parameters<typeof createLocalServer>[2] = {}): Promise<void> {
  logged = [];
  server = createLocalServer(ROUTES, (line) => logged.push(line), { keyCheck: guardKeyCheck(async (secret) => secret === GOOD_KEY), ...options });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
}

beforeEach(() => {
  // The 401's request line, as the function's guard logs it, is not what these tests read.
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
});

afterEach(async () => {
  jest.restoreAllMocks();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Exchange {
  /** What the host sent back. */
  reply: string;
  /** Why the socket ended: 'end' when the host closed it cleanly, else the error's code (EPIPE, ECONNRESET). */
  ended: string;
}

/**
 * Sends `head`, waits for the host's whole answer, then sends `rest` of the body after it (as a client still
 * uploading does) and ends: a host that closed on its answer makes these writes fail.
 */
function sendAfterAnswer(head: string, rest: Buffer): Promise<Exchange> {
  return new Promise((resolve) => {
    let reply = '';
    let answered = false;
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      const [headers, body = ''] = reply.split('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? -1);
      if (!answered && Buffer.byteLength(body) === length) {
        answered = true;
        socket.end(rest);
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve({ reply, ended: error.code ?? String(error) }));
    socket.on('close', () => resolve({ reply, ended: 'end' }));
  });
}

function statusOf(reply: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1]);
}

function bodyOf(reply: string): { error: { code: string; message: string; request_id?: string } } {
  return JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string; request_id?: string } };
}

const MiB = 1024 * 1024;

describe('Local server: early refusals', () => {
  it.each([
    ['a wrong key', `Authorization: Bearer wrong-key-R0usiepXdS8DWuMQlx8K9I5TJ8X\r\n`, 401, 'unauthorized'],
    ['no key', '', 401, 'unauthorized'],
  ])('answers a request with %s before its body, then reads the rest of the body and closes cleanly', async (_, auth, status, code) => {
    // Prepare
    await start();

    // Act: 1 MiB declared, none sent before the answer, all of it after.
    const exchange = await sendAfterAnswer(`POST /drive/upload HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: ${MiB}\r\n\r\n`, Buffer.alloc(MiB, 'x'));

    // Assess
    expect(statusOf(exchange.reply)).toBe(status);
    expect(bodyOf(exchange.reply).error.code).toBe(code);
    expect(exchange.reply).toMatch(/\r\nconnection: close\r\n/i);
    expect(exchange.ended).toBe('end');
  });

  it('answers a body over the limit with a 413 as soon as it passes the limit, and still lets the client finish', async () => {
    await start();
    const declared = 11 * MiB;
    const exchange = await sendAfterAnswer(`POST /drive/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${GOOD_KEY}\r\nContent-Length: ${declared}\r\n\r\n`, Buffer.alloc(declared, 'x'));
    expect(statusOf(exchange.reply)).toBe(413);
    expect(bodyOf(exchange.reply).error).toMatchObject({ code: 'payload_too_large', request_id: expect.any(String) });
    expect(exchange.ended).toBe('end');
  });

  it.each([['GET', '/openapi.json']])('refuses a body on %s %s (a route that takes none) with a 413 before reading it', async (method, path) => {
    await start();
    const declared = 9 * MiB;
    const exchange = await sendAfterAnswer(`${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`, Buffer.alloc(declared, 'x'));
    expect(statusOf(exchange.reply)).toBe(413);
    expect(bodyOf(exchange.reply).error.message).toBe(`${method} ${path} takes no request body; the host reads at most ${NO_BODY_BYTES} bytes of one`);
    expect(exchange.ended).toBe('end');
  });

  it('still answers a small body on a route that takes none, as API Gateway passes it', async () => {
    await start();
    const exchange = await sendAfterAnswer(`GET /openapi.json HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`, Buffer.alloc(0));
    expect(statusOf(exchange.reply)).toBe(200);
  });

  it('answers a path with no route with the gateway 404 before its body, and lets the client finish', async () => {
    await start();
    const exchange = await sendAfterAnswer(`POST /drive/nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: ${MiB}\r\n\r\n`, Buffer.alloc(MiB, 'x'));
    expect(statusOf(exchange.reply)).toBe(404);
    expect(exchange.ended).toBe('end');
  });

  it('cuts the connection once a refused body passes what the host will read and drop', async () => {
    await start();
    // 80 MiB after the answer: past the 64 MiB the host drops, so it cuts rather than read on.
    const exchange = await sendAfterAnswer(`POST /drive/upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${80 * MiB}\r\n\r\n`, Buffer.alloc(80 * MiB, 'x'));
    expect(statusOf(exchange.reply)).toBe(413);
    expect(exchange.ended).not.toBe('end');
  });
});

describe('Local server: the bytes of bodies it holds', () => {
  /** Sends `head`, then `chunks` one by one, then cuts the connection; resolves once the server has no connection left. */
  async function sendAndCut(head: string, chunks: Buffer[]): Promise<void> {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(head);
    for (const chunk of chunks) await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
    // The host has read what was sent (and answered, for a refused body) before the cut.
    await once(socket, 'data');
    socket.destroy();
    for (;;) {
      const open = await new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count)));
      if (open === 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const chunked = (bytes: number) => Buffer.concat([Buffer.from(`${bytes.toString(16)}\r\n`), Buffer.alloc(bytes, 'c'), Buffer.from('\r\n')]);

  it('gives back every byte of a refused body whose client hangs up while the rest is dropped', async () => {
    const budget = { buffered: 0 };
    await start({ budget });
    // A body on a route that takes none, sent in chunks past its limit, then cut.
    await sendAndCut(`GET /openapi.json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, [chunked(8000), chunked(500)]);
    expect(budget.buffered).toBe(0);
    await sendAndCut(`POST /drive/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${GOOD_KEY}\r\nTransfer-Encoding: chunked\r\n\r\n`, [chunked(6 * MiB), chunked(5 * MiB)]);
    expect(budget.buffered).toBe(0);
  });
});

describe('Local server: its socket-level answers', () => {
  it.each([
    ['headers over 16 KB', `GET /drive/list HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`, 431],
    ['a malformed request line', 'NOT HTTP\r\n\r\n', 400],
  ])('names %s with a request id, in the body and the header, as every other answer', async (_, head, status) => {
    await start();
    const exchange = await sendAfterAnswer(head, Buffer.alloc(0));
    expect(statusOf(exchange.reply)).toBe(status);
    const id = bodyOf(exchange.reply).error.request_id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(exchange.reply).toContain(`x-amzn-RequestId: ${id}`);
  });
});

describe('Local server: guessing keys', () => {
  beforeEach(() => {
    now = 1_000_000;
  });

  async function upload(key: string): Promise<{ status: number; retryAfter?: string }> {
    const res = await fetch(`http://127.0.0.1:${port}/drive/upload`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: 'x' });
    await res.arrayBuffer();
    return { status: res.status, ...(res.headers.get('retry-after') ? { retryAfter: res.headers.get('retry-after')! } : {}) };
  }

  it('answers 429 with Retry-After, before checking any key, once an address has sent its burst of wrong keys', async () => {
    // Prepare: 3 wrong keys in a burst, then one a second, on a clock the test moves.
    await start({ keyFailures: { burst: 3, perSecond: 1, clock: () => now } });

    // Act
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await upload(`wrong-key-${i}-R0usiepXdS8DWuMQlx8K9I5TJ8X`)).status);
    const good = await upload(GOOD_KEY);

    // Assess: even the right key waits, as it has not proved live yet (it is not checked: a guess could not
    // tell it from a wrong one).
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(good).toEqual({ status: 429, retryAfter: '1' });

    // One second later, one more guess is heard.
    now += 1000;
    expect((await upload(GOOD_KEY)).status).toBe(200);
    expect((await upload('wrong-key-x-R0usiepXdS8DWuMQlx8K9I5TJ8X')).status).toBe(401);
    expect((await upload('wrong-key-y-R0usiepXdS8DWuMQlx8K9I5TJ8X')).status).toBe(429);
  });

  it('lets no burst of wrong keys sent at once past the bucket', async () => {
    // Prepare: the key check holds every key it is asked about until 7 answers came back or it was asked 10
    // times, so that all 10 requests are in flight at once.
    let asked = 0;
    let answered = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const maybeOpen = () => (answered >= 7 || asked >= 10) && open();
    await start({
      keyFailures: { burst: 3, perSecond: 1, clock: () => now },
      keyCheck: guardKeyCheck(async () => {
        asked++;
        maybeOpen();
        await gate;
        return false;
      }),
    });

    // Act
    const statuses = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const { status } = await upload(`wrong-key-${i}-R0usiepXdS8DWuMQlx8K9I5TJ8X`);
        answered++;
        maybeOpen();
        return status;
      }),
    );

    // Assess: three were heard (and refused), the rest throttled without a check.
    expect(statuses.filter((status) => status === 401)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(7);
    expect(asked).toBe(3);
  });

  it('still hears a key that proved live, from an address throttled for the wrong keys of another client', async () => {
    await start({ keyFailures: { burst: 3, perSecond: 1, clock: () => now } });
    expect((await upload(GOOD_KEY)).status).toBe(200);
    const wrong = [];
    for (let i = 0; i < 5; i++) wrong.push((await upload(`revoked-key-${i}-R0usiepXdS8DWuMQlx8K9I5TJ8X`)).status);
    expect(wrong).toEqual([401, 401, 401, 429, 429]);
    expect((await upload(GOOD_KEY)).status).toBe(200);
  });

  it('counts neither a right key nor a request with no key', async () => {
    await start({ keyFailures: { burst: 1, perSecond: 1, clock: () => now } });
    for (let i = 0; i < 5; i++) expect((await upload(GOOD_KEY)).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/drive/upload`, { method: 'POST', body: 'x' });
      expect(res.status).toBe(401);
    }
  });
});

describe("Local server: a share link's token in the log", () => {
  it("keeps an API route's ids in the log, which are no secrets", async () => {
    await start({ accessLog: true });
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const res = await fetch(`http://127.0.0.1:${port}/drive/jobs/${id}`);
    await res.arrayBuffer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(logged.join('\n')).toContain(`/drive/jobs/${id}`);
  });

  const TOKEN = 'Z8yQm3TqJp0x9vL2cR4nW6bD1sF5hK7aE-uV_gHiOoM';

  it.each([`/s/${TOKEN}`, `//s/${TOKEN}`, `/S/${TOKEN}`, `/s//${TOKEN}`, `/%73/${TOKEN}`, `/s/${TOKEN}/more`, `/x/../s/${TOKEN}/`, `/drive/${TOKEN}`, `/${TOKEN}`])(
    'never logs the token of %s',
    async (path) => {
      await start({ accessLog: true });
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      await res.arrayBuffer();
      await new Promise((resolve) => setImmediate(resolve));
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.join('\n')).not.toContain(TOKEN.slice(0, 12));
    },
  );
});

describe('Local server: one line a request', () => {
  const upload = () => fetch(`http://127.0.0.1:${port}/drive/upload`, { method: 'POST', headers: { Authorization: `Bearer ${GOOD_KEY}` }, body: 'x' });
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("writes no line of its own for a request a function answered, whose line is the function's", async () => {
    await start();
    expect((await upload()).status).toBe(200);
    const res = await fetch(`http://127.0.0.1:${port}/drive/jobs/x`);
    expect(res.status).toBe(401);
    await res.arrayBuffer();
    await settle();
    expect(logged).toEqual([]);
  });

  it('writes its line for an answer of its own, which no function logged', async () => {
    await start();
    const res = await fetch(`http://127.0.0.1:${port}/no/such/route`);
    expect(res.status).toBe(404);
    await res.arrayBuffer();
    await settle();
    expect(logged).toEqual([expect.stringMatching(/^GET \/no\/such\/route 404 \d+ms$/)]);
  });

  it('writes its line for every request when asked (DRIVE_LOCAL_ACCESS_LOG=1), as an access log', async () => {
    await start({ accessLog: true });
    expect((await upload()).status).toBe(200);
    await settle();
    expect(logged).toEqual([expect.stringMatching(/^POST \/drive\/upload 200 \d+ms$/)]);
  });
});

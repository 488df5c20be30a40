import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type IncomingMessage, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AWS_LIMITS, MAX_REQUEST_BODY_BYTES } from '../../../aws-limits';
import { type Invocation, deliver, invocationTimeout, invokeBuffered, stoppedInvocation } from '../../invoke';
import { LocalResponseStream } from '../../lambda-runtime';
import { lambdaContext, toProxyEvent } from '../../proxy-event';
import { ROUTES } from '../../../routes';

const upload = ROUTES.find((route) => route.handler === 'upload')!;
const context = lambdaContext('drive-test', 1000);
const event = {} as APIGatewayProxyEvent;
const never = () => new Promise<APIGatewayProxyResult>(() => undefined);

/** A result whose JSON, as Lambda measures it, is exactly `bytes` long. */
function resultOf(bytes: number): APIGatewayProxyResult {
  const empty = JSON.stringify({ statusCode: 200, body: '' }).length;
  return { statusCode: 200, body: 'x'.repeat(bytes - empty) };
}

/** The request API Gateway would pass for a body of `bodyBytes` under 10 KB of headers, its most. */
function worstCaseRequest(bodyBytes: number): { req: IncomingMessage; body: Buffer } {
  const rawHeaders = ['Content-Type', 'multipart/form-data; boundary=x', 'Authorization', `Bearer ${'k'.repeat(64)}`];
  for (let i = 0; rawHeaders.join('').length < 10 * 1024 - 100; i++) rawHeaders.push(`X-Padding-${i}`, 'p'.repeat(200));
  const req = { rawHeaders, headers: {}, httpVersion: '1.1', socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
  return { req, body: Buffer.alloc(bodyBytes, 0xff) };
}

describe('Module: lib/local/invoke (the host plays API Gateway and Lambda)', () => {
  describe('Function: invocationTimeout', () => {
    it('gives a buffered route API Gateway’s 29 s (a 504), the dashboard its own 10 s (a failed invocation, 502)', () => {
      expect(invocationTimeout('list', false)).toEqual({ ms: 29_000, status: 504 });
      expect(invocationTimeout('dashboard', false)).toEqual({ ms: 10_000, status: 502 });
    });

    it('gives a streamed download the 15 minutes of a stream', () => {
      expect(invocationTimeout('download', true)).toEqual({ ms: 900_000, status: 504 });
    });
  });

  describe('Function: invokeBuffered', () => {
    it('answers 504 when the handler passes its timeout, and drops its late answer', async () => {
      const failure = await invokeBuffered(never, event, context, { ms: 20, status: 504 });

      expect(failure).toEqual(expect.objectContaining({ status: 504, error: 'serverError' }));
    });

    it('answers 502 when the handler throws or answers something that is not a proxy result', async () => {
      const thrown = await invokeBuffered(async () => Promise.reject(new Error('boom')), event, context, { ms: 1000, status: 504 });
      const malformed = await invokeBuffered(async () => 'text' as unknown as APIGatewayProxyResult, event, context, { ms: 1000, status: 504 });

      expect(thrown).toEqual(expect.objectContaining({ status: 502 }));
      expect(malformed).toEqual(expect.objectContaining({ status: 502 }));
    });

    it('stops a handler past its function\'s timeout on the host\'s clock: its calls are refused from then on, and the gateway answers', async () => {
      // Prepare: a clock the test moves, a handler that waits for the test, then asks whether it may go on
      let now = 0;
      const invocation: Invocation = { functionName: 'drive-upload', timeoutSeconds: 29, deadline: 29_000, clock: () => now };
      let resume!: () => void;
      const gate = new Promise<void>((resolve) => (resume = resolve));
      const seen: (string | undefined)[] = [];
      const handler = async () => {
        seen.push(stoppedInvocation());
        await gate;
        seen.push(stoppedInvocation());
        return { statusCode: 200, body: 'done late' };
      };

      // Act: the clock passes 29 s while the handler waits (the wall clock's timer is far off)
      const answered = invokeBuffered(handler, event, context, { ms: 2 ** 31 - 1, status: 504 }, invocation);
      await new Promise((resolve) => setImmediate(resolve));
      now = 29_000;
      resume();

      // Assess: within its time it could go on; past it, it is stopped, and its answer is the gateway's 504
      const result = await answered;
      expect(seen).toEqual([undefined, 'drive-upload ran past its timeout of 29 s; Lambda would have stopped it']);
      expect(result).toEqual(expect.objectContaining({ status: 504, error: 'serverError' }));
      expect(stoppedInvocation()).toBeUndefined();
    });

    it('passes a response of exactly Lambda’s 6,291,556 bytes and answers 502 for one byte more', async () => {
      const fits = await invokeBuffered(async () => resultOf(AWS_LIMITS.lambdaPayloadBytes), event, context, { ms: 5000, status: 504 });
      const over = await invokeBuffered(async () => resultOf(AWS_LIMITS.lambdaPayloadBytes + 1), event, context, { ms: 5000, status: 504 });

      expect(fits).toEqual(expect.objectContaining({ statusCode: 200 }));
      expect(over).toEqual(expect.objectContaining({ status: 502, error: 'serverError' }));
    });
  });

  describe('Function: deliver', () => {
    it('takes the largest documented body under the most headers API Gateway passes', () => {
      const { req, body } = worstCaseRequest(MAX_REQUEST_BODY_BYTES);
      const built = toProxyEvent(req, new URL('http://127.0.0.1/drive/upload'), upload, body);

      expect(deliver(built)).toEqual(expect.objectContaining({ httpMethod: 'POST' }));
    });

    it('refuses with 413 a 4.5 MiB body, which fits API Gateway’s 10 MB but not Lambda’s 6 MB after base64', () => {
      const { req, body } = worstCaseRequest(4.5 * 1024 * 1024);
      const built = toProxyEvent(req, new URL('http://127.0.0.1/drive/upload'), upload, body);

      expect(deliver(built)).toEqual(expect.objectContaining({ status: 413, error: 'tooLarge' }));
    });

    it.each([
      ['a base64 body', true, Buffer.from('any bytes \u00ff').toString('base64')],
      ['a text body with characters JSON escapes', false, 'quote " backslash \\ newline \n tab \t control \u0001 é 日本'],
      ['no body', false, null],
    ])('measures an event with %s as Lambda does: its JSON at exactly the limit passes, one byte more is 413', (_name, isBase64Encoded, text) => {
      const base = { ...toProxyEvent(worstCaseRequest(0).req, new URL('http://127.0.0.1/drive/upload'), upload, Buffer.alloc(0)), isBase64Encoded, body: text };
      const pad = AWS_LIMITS.lambdaPayloadBytes - Buffer.byteLength(JSON.stringify({ ...base, path: '' }));
      const exact = { ...base, path: 'p'.repeat(pad) };
      const over = { ...base, path: 'p'.repeat(pad + 1) };

      expect(Buffer.byteLength(JSON.stringify(exact))).toBe(AWS_LIMITS.lambdaPayloadBytes);
      expect(deliver(exact)).toEqual({ ...exact, body: text });
      expect(deliver(over)).toEqual(expect.objectContaining({ status: 413, error: 'tooLarge' }));
    });

    it('hands a header named __proto__ over as an own property, as Lambda’s JSON does', () => {
      const base = toProxyEvent(worstCaseRequest(0).req, new URL('http://127.0.0.1/drive/upload'), upload, Buffer.from('x'));
      const headers = JSON.parse('{"__proto__":"polluted","Host":"h"}') as Record<string, string>;
      const delivered = deliver({ ...base, headers }) as APIGatewayProxyEvent;

      expect(Object.hasOwn(delivered.headers, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(delivered.headers)).toBe(Object.prototype);
      expect(delivered.body).toBe(base.body);
    });
  });
});

describe('Class: LocalResponseStream', () => {
  // The host logs each cut-off stream as an error, as Lambda's log would show it.
  beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  /** Serves one streamed response of `chunks` capped at `maxBytes`; returns the status and the bytes the client got. */
  async function stream(maxBytes: number, chunks: Buffer[], declared: number): Promise<{ status: number; received: number; complete: boolean }> {
    const server = createServer((_req, res) => {
      const out = new LocalResponseStream(res, maxBytes);
      out.start({ statusCode: 200, headers: { 'Content-Length': declared } });
      out.on('error', () => undefined);
      const next = (i: number): void => {
        if (i === chunks.length) return void out.end();
        out.write(chunks[i], (error) => (error ? undefined : next(i + 1)));
      };
      next(0);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      return await new Promise((resolve, reject) => {
        const req = request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1' }, (res) => {
          let received = 0;
          res.on('data', (chunk: Buffer) => (received += chunk.length));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, received, complete: res.complete }));
          res.on('error', () => resolve({ status: res.statusCode ?? 0, received, complete: false }));
        });
        req.on('error', reject);
        req.end();
      });
    } finally {
      server.close();
    }
  }

  it('sends a stream up to the streaming maximum whole', async () => {
    const answer = await stream(2000, [Buffer.alloc(1000), Buffer.alloc(1000)], 2000);

    expect(answer).toEqual({ status: 200, received: 2000, complete: true });
  });

  it('cuts a stream that passes the streaming maximum where it passes it, short of its Content-Length', async () => {
    const answer = await stream(1500, [Buffer.alloc(1000), Buffer.alloc(1000)], 2000);

    expect(answer).toEqual({ status: 200, received: 1000, complete: false });
  });
});

import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { type GatewayFailure, sendGatewayError } from './invoke';

type Prelude = { statusCode?: number; headers?: Record<string, unknown> };

/**
 * The response stream a streaming handler writes to, bound to the client's socket: the prelude given to
 * `HttpResponseStream.from` becomes the status line and headers, and writes wait for the socket to drain,
 * so a large download holds only a few chunks in memory. As in the Lambda runtime, the prelude goes out just
 * before the first `write()` (aws-lambda-nodejs-runtime-interface-client#97): a handler that ends its stream
 * without one, or by `end(chunk)`, would lose its status and headers in AWS, so here it gets a 502.
 */
export class LocalResponseStream extends Writable {
  private prelude?: Prelude;
  private sent = 0;

  /** `maxBytes`: Lambda's streaming maximum; a stream that passes it is cut there, as Lambda cuts it. */
  constructor(
    private readonly res: ServerResponse,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
    /** The request's id, for API Gateway's own answer if the stream fails before it starts. */
    private readonly requestId = 'unknown',
  ) {
    super();
    // A client that hangs up ends the stream, which stops the handler's pipeline from S3.
    res.on('close', () => {
      if (!res.writableFinished) this.destroy(new Error('client closed the connection'));
    });
  }

  /** What `HttpResponseStream.from` does: keep the status and headers for the first write. */
  start(prelude: Prelude): void {
    this.prelude = prelude;
  }

  override write(chunk: unknown, encoding?: BufferEncoding | WriteCallback, callback?: WriteCallback): boolean {
    this.sendPrelude();
    if (typeof encoding === 'function') return super.write(chunk, encoding);
    return encoding === undefined ? super.write(chunk, callback) : super.write(chunk, encoding, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.res.headersSent) {
      if (this.prelude) return this.lostPrelude('ended its stream by end(chunk) before any write()', callback);
      this.res.writeHead(200);
    }
    this.sent += chunk.length;
    if (this.sent > this.maxBytes) {
      this.cutOff({ status: 502, error: 'serverError', reason: `the stream passed Lambda's streaming maximum of ${this.maxBytes} bytes` });
      return callback(new Error('the response passed the streaming maximum'));
    }
    // HEAD and 304 responses have no body: Node drops what is written, as API Gateway does.
    if (chunk.length === 0 || this.res.write(chunk)) callback();
    else this.res.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.res.headersSent) {
      if (this.prelude) return this.lostPrelude('ended its stream without a write()', callback);
      this.res.writeHead(200);
    }
    this.res.end(() => callback());
  }

  /**
   * Ends the response as Lambda does when a streaming invocation fails (timeout, size): API Gateway's error
   * if nothing was sent yet, else the connection closes where the bytes stop, short of any Content-Length.
   */
  cutOff(failure: GatewayFailure): void {
    sendGatewayError(this.res, failure, this.requestId);
    this.destroy();
  }

  private sendPrelude(): void {
    if (!this.prelude || this.res.headersSent) return;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.prelude.headers ?? {})) headers[name] = String(value);
    this.res.writeHead(this.prelude.statusCode ?? 200, headers);
  }

  /** What API Gateway answers when the function's stream has no prelude: a 502, and a line in the log. */
  private lostPrelude(what: string, callback: () => void): void {
    console.error(JSON.stringify({ level: 'error', message: `the streaming handler ${what}: Lambda would never send its status and headers` }));
    this.res.writeHead(502, { 'Content-Type': 'application/json' });
    this.res.end(JSON.stringify({ message: 'Internal server error' }), () => callback());
  }
}

type WriteCallback = (error: Error | null | undefined) => void;

/** Gives this process the two globals the Lambda Node.js runtime gives response-streaming functions. */
export function installLambdaGlobals(): void {
  const runtime = {
    // The runtime marks the handler as streaming; here the route table says so instead.
    streamifyResponse: <T>(handler: T): T => handler,
    HttpResponseStream: {
      from(stream: Writable, prelude: Prelude): Writable {
        if (!(stream instanceof LocalResponseStream)) throw new Error('HttpResponseStream.from needs the stream the runtime passed in');
        stream.start(prelude);
        return stream;
      },
    },
  };
  Object.assign(globalThis, { awslambda: runtime });
}

import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';

/**
 * The response stream a streaming handler writes to, bound to the client's socket: the prelude given to
 * `HttpResponseStream.from` becomes the status line and headers, and writes wait for the socket to drain,
 * so a large download holds only a few chunks in memory.
 */
export class LocalResponseStream extends Writable {
  constructor(private readonly res: ServerResponse) {
    super();
    // A client that hangs up ends the stream, which stops the handler's pipeline from S3.
    res.on('close', () => {
      if (!res.writableFinished) this.destroy(new Error('client closed the connection'));
    });
  }

  start(prelude: { statusCode?: number; headers?: Record<string, unknown> }): void {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(prelude.headers ?? {})) headers[name] = String(value);
    this.res.writeHead(prelude.statusCode ?? 200, headers);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.res.headersSent) this.res.writeHead(200);
    if (this.res.write(chunk)) callback();
    else this.res.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.res.headersSent) this.res.writeHead(200);
    this.res.end(() => callback());
  }
}

/** Gives this process the two globals the Lambda Node.js runtime gives response-streaming functions. */
export function installLambdaGlobals(): void {
  const runtime = {
    // The runtime marks the handler as streaming; here the route table says so instead.
    streamifyResponse: <T>(handler: T): T => handler,
    HttpResponseStream: {
      from(stream: Writable, prelude: { statusCode?: number; headers?: Record<string, unknown> }): Writable {
        if (!(stream instanceof LocalResponseStream)) throw new Error('HttpResponseStream.from needs the stream the runtime passed in');
        stream.start(prelude);
        return stream;
      },
    },
  };
  Object.assign(globalThis, { awslambda: runtime });
}

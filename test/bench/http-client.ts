import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';

/**
 * The load generator's client for Drive: node:http with keep-alive, as the AWS SDK's own HTTP handler is,
 * so that Drive and the floor are called by clients of the same weight. Multipart bodies are built
 * once per request as plain buffers, as curl would send them.
 */
export class BenchClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  /** Sends a request and returns the status and the number of body bytes read (the body is not kept). */
  send(method: string, path: string, body?: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number; text?: string }> {
    const url = new URL(path, this.baseUrl);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        { method, agent: this.agent, headers: { Authorization: `Bearer ${this.key}`, ...(body ? { 'Content-Length': String(body.length) } : {}), ...headers } },
        (res) => {
          let bytes = 0;
          const chunks: Buffer[] = [];
          const status = res.statusCode ?? 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (status !== 200) chunks.push(chunk);
          });
          res.on('end', () => resolve({ status, bytes, text: status === 200 ? undefined : Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  upload(files: { data: Buffer; filename: string }[], metadata?: unknown) {
    const boundary = `----drive${randomBytes(8).toString('hex')}`;
    const parts: Buffer[] = [];
    for (const file of files) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${file.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), file.data, Buffer.from('\r\n'));
    }
    if (metadata !== undefined) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify(metadata)}\r\n`));
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    return this.send('POST', '/drive/upload', Buffer.concat(parts), { 'Content-Type': `multipart/form-data; boundary=${boundary}` });
  }

  get(path: string, query: Record<string, string>) {
    return this.send('GET', `${path}?${new URLSearchParams(query)}`);
  }

  createFolder(path: string) {
    return this.send('POST', '/drive/folders', Buffer.from(JSON.stringify({ path })), { 'Content-Type': 'application/json' });
  }

  deleteFolder(path: string) {
    return this.send('DELETE', `/drive/folders?${new URLSearchParams({ path, recursive: 'true' })}`);
  }

  /** Whether the delete job `id` is done (`GET /drive/jobs/{id}`, its body read). */
  async jobDone(id: string): Promise<boolean> {
    const res = await fetch(new URL(`/drive/jobs/${id}`, this.baseUrl), { headers: { Authorization: `Bearer ${this.key}` } });
    if (res.status !== 200) throw new Error(`job ${id}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: { job: { status: string } } }).data.job.status === 'done';
  }

  close(): void {
    this.agent.destroy();
  }
}

import fc from 'fast-check';
import { connect } from 'node:net';

/** What came back for one raw request: its status (0 if the host closed without an answer) and the reply. */
export interface RawReply {
  status: number;
  text: string;
}

/** Sends `bytes` on a raw socket, optionally hanging up after `closeAfterMs`; resolves with the first reply. */
export function sendRaw(port: number, bytes: Buffer, options: { closeAfterMs?: number; endAfterSend?: boolean; waitMs?: number } = {}): Promise<RawReply> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      if (options.endAfterSend) socket.end();
      if (options.closeAfterMs !== undefined) setTimeout(() => socket.destroy(), options.closeAfterMs);
    });
    const timer = setTimeout(() => socket.destroy(), options.waitMs ?? 5000);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
  });
}

/** Valid raw requests of every kind the API takes, the seeds the fuzzer mutates. */
export function seedRequests(key: string): Buffer[] {
  const request = (head: string, body: Buffer | string = '') => {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    return Buffer.concat([Buffer.from(`${head}\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`), bytes]);
  };
  const multipart = [
    '--fz',
    'Content-Disposition: form-data; name="files"; filename="a.txt"',
    'Content-Type: text/plain',
    '',
    'hello',
    '--fz',
    'Content-Disposition: form-data; name="files"; filename="b.bin"',
    'Content-Type: application/octet-stream',
    '',
    '\u0000\u0001\u0002binary',
    '--fz',
    'Content-Disposition: form-data; name="metadata"',
    '',
    '[{"folder":"/fuzz"},{"path":"/fuzz/deep/b.bin"}]',
    '--fz--',
    '',
  ].join('\r\n');
  return [
    request('POST /drive/upload HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=fz', multipart),
    request('POST /drive/folders HTTP/1.1\r\nContent-Type: application/json', '{"path":"/fuzz/made"}'),
    request('GET /drive/list?folder=/fuzz&recursive=true HTTP/1.1'),
    request('GET /drive/download?path=/fuzz/a.txt HTTP/1.1\r\nRange: bytes=0-2'),
    request('DELETE /drive/folders?path=/fuzz/made HTTP/1.1'),
    request('POST /drive/uploads HTTP/1.1\r\nContent-Type: application/json', '{"path":"/fuzz/big.bin","size":10}'),
    request('POST /drive/keys HTTP/1.1\r\nContent-Type: application/json', '{"name":"fuzz","role":"read-only"}'),
  ];
}

/** One way to spoil a request's bytes. */
export type Mutation =
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; at: number; value: number }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'duplicate-boundary' }
  | { kind: 'chunked-stop'; at: number }
  | { kind: 'cut-body'; at: number }
  | { kind: 'header'; name: string }
  | { kind: 'query'; name: string }
  | { kind: 'hang-up'; afterMs: number };

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

export const mutations: fc.Arbitrary<Mutation[]> = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({
      kind: fc.constant('rename' as const),
      from: fc.constantFrom('name="files"', 'name="metadata"', 'Content-Type: text/plain', 'Content-Type: application/octet-stream', 'boundary=fz', 'Content-Length'),
      to: fc.constantFrom('name="file"', 'name="files[]"', 'name="metadata"', 'Content-Type: application/octet-stream', 'boundary=', 'name="__proto__"', 'Transfer-Encoding'),
    }),
    fc.record({ kind: fc.constant('duplicate-boundary' as const) }),
    fc.record({ kind: fc.constant('chunked-stop' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('cut-body' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('header' as const), name: fc.constantFrom(...PROTOTYPE_NAMES, 'X-Forwarded-Proto', 'Host') }),
    fc.record({ kind: fc.constant('query' as const), name: fc.constantFrom(...PROTOTYPE_NAMES) }),
    fc.record({ kind: fc.constant('hang-up' as const), afterMs: fc.integer({ min: 0, max: 8 }) }),
  ),
  { minLength: 1, maxLength: 3 },
);

/** `seed` spoiled by `list`, and whether to hang up early (and when). */
export function mutate(seed: Buffer, list: readonly Mutation[]): { bytes: Buffer; closeAfterMs?: number; endAfterSend?: boolean } {
  let bytes = Buffer.from(seed);
  let closeAfterMs: number | undefined;
  let endAfterSend: boolean | undefined;
  for (const m of list) {
    if (m.kind === 'truncate') {
      bytes = bytes.subarray(0, m.at % (bytes.length + 1));
      endAfterSend = true;
    } else if (m.kind === 'flip' && bytes.length > 0) {
      bytes[m.at % bytes.length] = m.value;
    } else if (m.kind === 'rename') {
      bytes = Buffer.from(bytes.toString('latin1').split(m.from).join(m.to), 'latin1');
    } else if (m.kind === 'duplicate-boundary') {
      bytes = Buffer.from(bytes.toString('latin1').replace('--fz\r\n', '--fz\r\n--fz\r\n'), 'latin1');
    } else if (m.kind === 'chunked-stop') {
      // The same body as chunks that stop part-way, then the connection ends.
      const text = bytes.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) continue;
      const head = text.slice(0, split).replace(/\r\nContent-Length: \d+/i, '') + '\r\nTransfer-Encoding: chunked\r\n\r\n';
      const body = Buffer.from(text.slice(split + 4), 'latin1');
      const cut = body.subarray(0, m.at % (body.length + 1));
      bytes = Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(`${body.length.toString(16)}\r\n`), cut]);
      endAfterSend = true;
    } else if (m.kind === 'cut-body') {
      // The body ends early, whole by its Content-Length: a multipart part, say, that never closes.
      const text = bytes.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) continue;
      const body = Buffer.from(text.slice(split + 4), 'latin1');
      const cut = body.subarray(0, m.at % (body.length + 1));
      const head = text.slice(0, split).replace(/Content-Length: \d+/i, `Content-Length: ${cut.length}`);
      bytes = Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), cut]);
    } else if (m.kind === 'header') {
      bytes = Buffer.from(bytes.toString('latin1').replace('\r\n', `\r\n${m.name}: javascript:alert(1)//\r\n`), 'latin1');
    } else if (m.kind === 'query') {
      bytes = Buffer.from(bytes.toString('latin1').replace(/^(\S+ )(\S+)/, (_, method: string, target: string) => `${method}${target}${target.includes('?') ? '&' : '?'}${m.name}=1`), 'latin1');
    } else if (m.kind === 'hang-up') {
      closeAfterMs = m.afterMs;
    }
  }
  return { bytes, closeAfterMs, endAfterSend };
}

/**
 * Sends `runs` spoiled requests (a fixed `seed`, so a failure reproduces) to the host at `url`: every answer
 * is below 500, the host stays up (checked every 25 runs) and nothing it ran failed unheard (`output`).
 */
export async function runByteFuzz(url: string, key: string, output: () => string, runs: number, seed: number): Promise<{ answered: Record<string, number> }> {
  const port = Number(new URL(url).port);
  const seeds = seedRequests(key);
  const answered: Record<string, number> = {};
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.nat({ max: seeds.length - 1 }), mutations, async (which, list) => {
      const { bytes, closeAfterMs, endAfterSend } = mutate(seeds[which], list);
      const reply = await sendRaw(port, bytes, { closeAfterMs, endAfterSend, waitMs: 4000 });
      answered[reply.status] = (answered[reply.status] ?? 0) + 1;
      if (reply.status >= 500) throw new Error(`${reply.status} for ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}:\n${reply.text.slice(0, 500)}`);
      if (++run % 25 === 0) {
        const alive = await sendRaw(port, Buffer.from(`GET /drive/list HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`));
        if (alive.status !== 200) throw new Error(`the host stopped answering after run ${run}: ${alive.status}`);
      }
    }),
    { numRuns: runs, seed },
  );
  if (/uncaught exception|unhandled rejection|Unhandled 'error' event/.test(output())) throw new Error(`the host hit a failure nobody handled:\n${output()}`);
  return { answered };
}

import { createSocket } from 'node:dgram';
import { type WriteStream, createWriteStream } from 'node:fs';
import { open as openFile, rename, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** The file in the data directory that holds the traces' segment documents, one JSON object a line. */
export const TRACES_FILE = 'traces.jsonl';
/** Past this the file becomes `traces.1.jsonl` (the one before is dropped): a host left running keeps 2 × this at most. */
const ROTATE_BYTES = 8 * 1024 * 1024;
/** How long a document waits to be written with those after it (a host killed loses these, as UDP may). */
const FLUSH_MS = 100;

/** The local host's X-Ray daemon: where the functions' subsegments go, and the host's own segments. */
export interface TraceCollector {
  /** `host:port`, for `AWS_XRAY_DAEMON_ADDRESS`. */
  address: string;
  /** Keeps a segment document the host writes itself (an invocation's). */
  keep(segment: Record<string, unknown>): void;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 for segment documents sent as the X-Ray daemon takes them (a `{"format":"json",
 * "version":1}` line, then the document) and appends each to `<dataDir>/traces.jsonl`; anything else is
 * dropped. `npm run trace` reads the file.
 */
export async function startTraceCollector(dataDir: string, rotateBytes = ROTATE_BYTES): Promise<TraceCollector> {
  const path = join(dataDir, TRACES_FILE);
  let size = await stat(path).then((s) => s.size, () => 0);
  let out: WriteStream = open('a');
  // A host that was killed may have left its last line cut short: the next one starts on a line of its own.
  if (size > 0 && (await lastByte(path)) !== 0x0a) out.write('\n');
  let rotating: Promise<void> | undefined;

  function open(flags: 'a' | 'w'): WriteStream {
    const stream = createWriteStream(path, { flags });
    // A full disk or a removed directory costs the traces, never the host.
    stream.on('error', () => undefined);
    return stream;
  }

  // The documents of the last FLUSH_MS, written together: a write per document (one per AWS call) was 9.6 % of
  // the host's main-thread CPU in delete-files.test.ts (a --cpu-prof of the host), 2 % so.
  let pending: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    out.write(pending.join(''));
    pending = [];
  }

  function keep(segment: Record<string, unknown>): void {
    const line = `${JSON.stringify(segment)}\n`;
    if (rotating) return; // the few documents that arrive while the file turns over are dropped, as UDP may drop them
    pending.push(line);
    size += Buffer.byteLength(line);
    if (size <= rotateBytes) {
      timer ??= setTimeout(flush, FLUSH_MS).unref();
    } else {
      flush();
      const full = out;
      rotating = new Promise<void>((done) => full.end(done))
        .then(() => rename(path, join(dataDir, 'traces.1.jsonl')))
        // If the file cannot be set aside, it starts again empty: it never grows past its size.
        .then(() => 'a' as const, () => 'w' as const)
        .then((flags) => {
          size = 0;
          out = open(flags);
          rotating = undefined;
        });
    }
  }

  const socket = createSocket('udp4');
  socket.on('message', (message) => {
    const text = message.toString('utf8');
    const newline = text.indexOf('\n');
    if (newline < 0) return;
    try {
      const header = JSON.parse(text.slice(0, newline)) as { format?: unknown };
      const segment = JSON.parse(text.slice(newline + 1)) as unknown;
      if (header.format !== 'json' || typeof segment !== 'object' || segment === null || Array.isArray(segment)) return;
      keep(segment as Record<string, unknown>);
    } catch {
      // Not a segment document: dropped, as the daemon drops it.
    }
  });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  socket.unref();
  const { port } = socket.address() as AddressInfo;
  let closed = false;

  return {
    address: `127.0.0.1:${port}`,
    keep,
    close: async () => {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => socket.close(() => resolve()));
      await rotating;
      flush();
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}

/** The last byte of the file at `path`. */
async function lastByte(path: string): Promise<number | undefined> {
  const file = await openFile(path, 'r');
  try {
    const { size } = await file.stat();
    if (size === 0) return undefined;
    const { buffer } = await file.read(Buffer.alloc(1), 0, 1, size - 1);
    return buffer[0];
  } finally {
    await file.close();
  }
}

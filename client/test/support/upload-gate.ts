import { createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A proxy that lets a run's first uploads through and stops the rest, whatever the machine's speed. */
export interface UploadGate {
  url: string;
  /** Resolves once the last request let through has ended (stored, and answered or its reply lost) and a later one is held. */
  reached: Promise<void>;
  /** The status the host gave the request whose reply was lost (`loseNext`). */
  lostStatus(): number | undefined;
  close(): Promise<void>;
}

/**
 * A proxy to the host `target` for `POST /drive/upload`: the first `answered` requests go through; with
 * `loseNext`, the next is stored by the host but its answer never reaches the client (a lost reply); any later
 * one is held and never reaches the host. From `reached` on, nothing more lands. Other requests pass.
 */
export async function uploadGate(target: string, { answered, loseNext = false }: { answered: number; loseNext?: boolean }): Promise<UploadGate> {
  const upstream = new URL(target);
  const open = new Set<Socket>();
  const through = answered + (loseNext ? 1 : 0);
  let uploads = 0;
  let lastEnded = false;
  let held = false;
  let lostStatus: number | undefined;
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const check = () => lastEnded && held && reach();
  const ended = () => {
    lastEnded = true;
    check();
  };
  const server = createServer((req, res) => {
    const upload = req.method === 'POST' && req.url?.split('?')[0] === '/drive/upload' ? ++uploads : 0;
    if (upload > through) {
      // Held: never reaches the host, so the run stores nothing more.
      held = true;
      return check();
    }
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if (loseNext && upload === through) {
        answer.resume();
        answer.on('end', () => {
          lostStatus = answer.statusCode;
          ended();
        });
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      if (upload === through) answer.on('end', ended);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reached,
    lostStatus: () => lostStatus,
    close: () => {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

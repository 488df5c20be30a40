import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * `node --import tsx test/bench/stalled-bodies.ts [project dir]`: how much a local host grows while 150
 * clients with no key each send most of a 4.5 MiB upload body and stall (issue 12: the body must not be held
 * before the key is checked). Prints the host's resident memory before and with the stalled clients.
 */
async function main(): Promise<void> {
  const root = resolve(process.argv[2] ?? join(__dirname, '..', '..'));
  const dir = mkdtempSync(join(tmpdir(), 'drive-stalled-'));
  const host = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', DRIVE_DATA_DIR: dir, DRIVE_API_KEYS: 's:stalled-key-29hVHaTbDrEgNFVFcigNCYZW' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  host.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const rssMiB = () => Number(execSync(`ps -o rss= -p ${host.pid}`).toString().trim()) / 1024;
  try {
    while (!/listening on/.test(output)) await new Promise((done) => setTimeout(done, 100));
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(output)![1]);
    await new Promise((done) => setTimeout(done, 1000));
    const before = rssMiB();
    const chunk = Buffer.alloc(64 * 1024, 1);
    const sockets: Socket[] = Array.from({ length: 150 }, () => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /drive/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 4718592\r\n\r\n');
        let sent = 0;
        const pump = (): void => {
          while (sent < 4_600_000 && socket.write(chunk)) sent += chunk.length;
          if (sent < 4_600_000) socket.once('drain', pump);
        };
        pump();
      });
      socket.on('error', () => undefined);
      return socket;
    });
    await new Promise((done) => setTimeout(done, 8000));
    const during = rssMiB();
    console.log(JSON.stringify({ clients: 150, rssBeforeMiB: Math.round(before), rssWithStalledClientsMiB: Math.round(during), growthMiB: Math.round(during - before) }));
    for (const socket of sockets) socket.destroy();
  } finally {
    host.kill('SIGTERM');
    await new Promise((done) => host.on('exit', done));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

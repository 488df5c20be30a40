import { connect } from 'node:net';
import { DriveClient, type ErrorJson, type FileJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// Requests an attacker would send, each found to end or harm the local host (issue 12): the host must answer
// every one cleanly, stay up, and never reach a handler's failure it did not catch.

const KEY = 'robust-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  // A short request timeout, so the slow sender's case takes seconds (the default is 30 s).
  host = await startHost({ DRIVE_API_KEYS: `robust:${KEY}`, DRIVE_RATE_LIMITS: 'off', DRIVE_LOCAL_REQUEST_TIMEOUT_SECONDS: '2' });
  drive = new DriveClient(host.url, KEY);
  await drive.upload([{ data: 'x'.repeat(64 * 1024), filename: 'big.bin' }]);
});

afterAll(() => stopHost(host));

/** The host still answers, and nothing it ran failed unheard. */
async function expectHostWell(): Promise<void> {
  expect((await drive.list()).status).toBe(200);
  expect(host.output()).not.toMatch(/uncaught exception|unhandled rejection|Error \[ERR_|Unhandled 'error' event/);
}

/** Sends `head` and `body` on a raw socket; resolves with the answer once it is whole, or with what came before the host closed the socket. */
function raw(head: string, body: Buffer = Buffer.alloc(0)): Promise<string> {
  const port = Number(new URL(host.url).port);
  return new Promise((resolve) => {
    let reply = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.concat([Buffer.from(head), body])));
    // Until the answer is whole (its head and the body its Content-Length names) or the host closes the
    // connection: no time limit, which a busy machine would pass (Jest's timeout is the backstop).
    const whole = () => {
      const end = reply.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(reply.slice(0, end));
      return end >= 0 && length !== null && Buffer.byteLength(reply.slice(end + 4)) >= Number(length[1]);
    };
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (whole()) {
        socket.destroy();
        resolve(reply);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(reply));
  });
}

/** A multipart body that ends inside its first part (no closing boundary), with the headers that announce it whole. */
function truncatedUpload(partHeaders: string): string {
  const body = `--b\r\n${partHeaders}\r\n\r\n${'y'.repeat(2000)}`;
  return `POST /drive/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

describe('the local host under attack', () => {
  it.each([
    ['a file part under another name than "files"', 'Content-Disposition: form-data; name="file"; filename="a.txt"'],
    ['a file part named "files[]"', 'Content-Disposition: form-data; name="files[]"; filename="a.txt"'],
    ['a metadata part sent as a file type', 'Content-Disposition: form-data; name="metadata"\r\nContent-Type: application/octet-stream'],
  ])('answers a multipart body that ends inside %s with a 400, and stays up', async (_, partHeaders) => {
    const reply = await raw(truncatedUpload(partHeaders));
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain('"bad_request"');
    await expectHostWell();
  });

  it('stays up when clients give up on downloads before the first byte, with a key or without', async () => {
    for (let i = 0; i < 30; i++) {
      const auth = i % 2 === 0 ? `Authorization: Bearer ${KEY}\r\n` : '';
      const method = i % 3 === 0 ? 'HEAD' : 'GET';
      await new Promise<void>((resolve) => {
        const socket = connect(Number(new URL(host.url).port), '127.0.0.1', () => {
          socket.write(`${method} /drive/download?path=/big.bin HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
          setTimeout(() => socket.destroy(), i % 6);
        });
        socket.on('error', () => undefined);
        socket.on('close', () => resolve());
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expectHostWell();
    expect(host.output()).not.toMatch(/"level":"error"[^\n]*client closed/);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('answers a header and a query parameter named %s as any other, on every route', async (name) => {
    const targets = ['/drive/list', '/drive/download?path=/big.bin', '/drive/keys', '/', '/drive/upload'];
    for (const target of targets) {
      const url = `${host.url}${target}${target.includes('?') ? '&' : '?'}${name}=1`;
      const method = target === '/drive/upload' ? 'POST' : 'GET';
      for (const headers of [{ [name]: 'x' }, { [name]: 'x', Authorization: `Bearer ${KEY}` }]) {
        const res = await fetch(url, { method, headers });
        await res.arrayBuffer();
        expect({ target, headers: Object.keys(headers), status: res.status }).toEqual({ target, headers: Object.keys(headers), status: expect.any(Number) });
        expect(res.status).toBeLessThan(500);
      }
    }
    await expectHostWell();
  });

  it.each([
    ['no key', ''],
    ['an unknown key', 'Authorization: Bearer unknown-key-29hVHaTbDrEgNFVFcigNCYZW\r\n'],
    ['a malformed Authorization header', 'Authorization: Basic abc\r\n'],
  ])('refuses %s with 401 before reading the body it declares', async (_, auth) => {
    // Headers only: the 4.5 MiB body never comes. The answer must not wait for it.
    const reply = await raw(`POST /drive/upload HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 4718592\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 401 /);
    expect(reply).toContain('"unauthorized"');
  });

  it('answers 30 of 30 uploads of 1 MiB with a wrong key, five at a time, with their JSON 401 (never a broken connection)', async () => {
    // The host answers before the body and must still let each client, mid-send, read that answer.
    const outcomes: string[] = [];
    const one = async () => {
      const form = new FormData();
      form.append('files', new Blob([Buffer.alloc(1024 * 1024, 'k')]), 'k.bin');
      try {
        const res = await fetch(`${host.url}/drive/upload`, { method: 'POST', body: form, headers: { Authorization: 'Bearer wrong-key-R0usiepXdS8DWuMQlx8K9I5TJ8X' } });
        const body = (await res.json()) as ErrorJson;
        outcomes.push(`${res.status} ${body.error.code}`);
      } catch (error) {
        outcomes.push(`network error: ${String((error as { cause?: unknown }).cause ?? error)}`);
      }
    };
    for (let round = 0; round < 6; round++) await Promise.all(Array.from({ length: 5 }, one));
    expect(outcomes).toEqual(Array(30).fill('401 unauthorized'));
    await expectHostWell();
  });

  it("builds an upload's url from the host's own address, whatever Host and X-Forwarded-Proto the client sends", async () => {
    const form = new FormData();
    form.append('files', new Blob(['u']), 'url.txt');
    for (const proto of ['X-Forwarded-Proto', 'x-forwarded-proto']) {
      const res = await json<{ data: FileJson[] }>(
        fetch(`${host.url}/drive/upload`, {
          method: 'POST',
          body: form,
          headers: { Authorization: `Bearer ${KEY}`, Host: 'evil.example', [proto]: 'javascript:alert(1)//', 'X-Forwarded-Host': 'evil.example' },
        }),
      );
      expect(res.status).toBe(200);
      expect(res.body.data[0].url).toBe(`${host.url}/drive/download?path=/url.txt`);
    }
  });

  it('answers a request whose body is not sent whole in time with a 408, and a later one as usual', async () => {
    // Only the first of 10 declared bytes: the host must not wait for the rest beyond its request timeout.
    const reply = await raw(`POST /drive/folders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`);
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
    // Cut off by the host's own request timeout (DRIVE_LOCAL_REQUEST_TIMEOUT_SECONDS, 2 s), not by the client.
    expect(reply).toContain('the request was not sent whole within 2 s');
    const ok = await json<ErrorJson>(drive.createFolder({ path: '/after-slow' }));
    expect(ok.status).toBe(200);
  });
});

import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningHost, removeDataDir, startHost } from '../support/local-host';

// Review of issue 26: an Idempotency-Key is scoped to the API key's id alone (`idem#<keyId>#<key>`), but a
// configured key keeps its id when DRIVE_API_KEYS gives its secret another drive, role or prefix (the host
// reconciles the record in place, `KeyAdmin.ensure`). A retry within 24 hours then gets the answer the key
// had under its old drive or prefix, and nothing is done where the key now points.

const SECRET = 'idem-rekeyed-secret-8Kp3Wz6Nc7Hq2Lm9Vx4R';

let dataDir: string;
let host: RunningHost | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-rekeyed-'));
});

afterEach(async () => {
  await host?.stop();
  host = undefined;
  await removeDataDir(dataDir);
});

/** (Re)starts the host on the same data dir with `keys` as DRIVE_API_KEYS. */
async function restart(keys: string): Promise<RunningHost> {
  await host?.stop();
  host = await startHost({ DRIVE_API_KEYS: keys, DRIVE_RATE_LIMITS: 'off' }, dataDir);
  return host;
}

function uploadBody(name: string, data: string, folder: string): { body: Buffer; contentType: string } {
  const boundary = 'idempotency0rekeyed0boundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${data}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify([{ folder }])}\r\n--${boundary}--\r\n`,
  );
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

async function upload(running: RunningHost, folder: string, idempotencyKey?: string): Promise<{ status: number; replayed: string | null }> {
  const { body, contentType } = uploadBody('x.txt', 'x', folder);
  const res = await fetch(`${running.url}/drive/upload`, {
    method: 'POST',
    body,
    headers: { Authorization: `Bearer ${SECRET}`, 'Content-Type': contentType, ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
  });
  await res.text();
  return { status: res.status, replayed: res.headers.get('idempotent-replayed') };
}

async function listStatus(running: RunningHost, folder: string): Promise<number> {
  const res = await fetch(`${running.url}/drive/list?folder=${encodeURIComponent(folder)}`, { headers: { Authorization: `Bearer ${SECRET}` } });
  await res.text();
  return res.status;
}

describe('Idempotency-Key of a key whose drive or prefix changed', () => {
  it('does not replay another drive\'s answer: the retry on the key\'s new drive stores the file there', async () => {
    const idempotencyKey = randomUUID();
    const first = await upload(await restart(`alpha:${SECRET}:read-write`), '/moved', idempotencyKey);

    // The same secret is given to drive beta (same key id), and the job retries its request.
    const beta = await restart(`beta:${SECRET}:read-write`);
    const retry = await upload(beta, '/moved', idempotencyKey);

    expect(first.status).toBe(200);
    // Today: 200 replayed, and beta has no /moved (404): the client is told its file is stored where it is not.
    expect({ retry, listed: await listStatus(beta, '/moved') }).toEqual({ retry: { status: 200, replayed: null }, listed: 200 });
  });

  it('does not replay an answer the key may no longer get: confined to /team, an upload outside it is 403', async () => {
    const idempotencyKey = randomUUID();
    const first = await upload(await restart(`gamma:${SECRET}:read-write`), '/outside', idempotencyKey);

    const confined = await restart(`gamma:${SECRET}:read-write:/team`);
    const fresh = await upload(confined, '/outside', randomUUID());
    const retry = await upload(confined, '/outside', idempotencyKey);

    expect([first.status, fresh.status]).toEqual([200, 403]);
    // Today: 200 replayed, an answer about a folder this key may no longer reach.
    expect(retry).toEqual({ status: 403, replayed: null });
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { type RunningHost, setKeyExpiry, sharedHost, stopHost } from '../../../test/support/local-host';
import { TestIssuer } from '../../../test/support/oidc-issuer';
import { run } from '../../src/cli/main';
import { Drive } from '../../src/drive';
import { runCli } from '../support/cli-process';
import { type TreeFile, writeTree } from '../support/trees';

// Issue 25, "Done when": the CLI uploads a folder with only an OIDC token (no key), re-exchanges during a batch
// longer than its key's life, and asks a GitHub-Actions-shaped token endpoint for its token, against a local
// host trusting a real issuer on loopback.

const ADMIN = 'oidc-cli-admin-Rk4Tz8Wq2Mn6Yb1Vc7Hs3Jd5';
const SUBJECT = 'repo:acme/etl:ref:refs/heads/main';

interface MintedKey {
  id: string;
  trust_id?: string;
  expires_at?: string | null;
}

let host: RunningHost;
let issuer: TestIssuer;
let dir: string;
const admin = () => new Drive({ baseUrl: host.url, apiKey: ADMIN });

async function api<T>(method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${host.url}${route}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: T }).data;
}

/** A trust rule for `subject` (the first rule that matches decides: each test has its own), upload-only on `prefix`. */
async function addRule(prefix: string, options: { audience?: string; subject?: string } = {}): Promise<string> {
  const rule = { issuer: issuer.url, audience: options.audience ?? 'drive', subject: options.subject ?? SUBJECT, role: 'upload-only', prefix, max_ttl_seconds: 600 };
  const made = await api<{ trust: { id: string } }>('POST', '/drive/trust', rule);
  return made.trust.id;
}

async function keysOfRule(trustId: string): Promise<MintedKey[]> {
  return (await api<{ keys: MintedKey[] }>('GET', '/drive/keys')).keys.filter((key) => key.trust_id === trustId);
}

async function pathsBelow(folder: string): Promise<string[]> {
  const listing = await admin().list(folder, { recursive: true });
  return listing.files.map((file) => file.path).sort();
}

beforeAll(async () => {
  issuer = await TestIssuer.start();
  // The worker's host for files without rate limits (`sharedHost`: no token exchange is limited by address
  // there either). Drive `default`, the CLI's when DRIVE_OIDC_DRIVE is unset, is this file's alone among them.
  host = await sharedHost({ DRIVE_RATE_LIMITS: 'off', DRIVE_API_KEYS: `default:${ADMIN}:admin` });
  dir = await mkdtemp(join(tmpdir(), 'drive-oidc-'));
});

afterAll(async () => {
  await stopHost(host);
  await issuer.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('drive CLI with an OIDC token instead of a key', () => {
  it('uploads a folder with only DRIVE_OIDC_TOKEN set, under the rule it matched', async () => {
    // Prepare
    const trustId = await addRule('/ingest');
    const tree = await writeTree(join(dir, 'plain'), [
      { relative: 'a.csv', size: 1200 },
      { relative: 'sub/b.bin', size: 5000 },
    ]);

    // Act
    const cli = await runCli(['upload', join(dir, 'plain'), '--to', '/ingest/plain', '--json'], { DRIVE_URL: host.url, DRIVE_OIDC_TOKEN: await issuer.sign({}) });

    // Assess
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.json<{ ok: boolean }>().ok).toBe(true);
    expect(await pathsBelow('/ingest/plain')).toEqual(tree.map((file) => `/ingest/plain/${file.relative}`).sort());
    const minted = await keysOfRule(trustId);
    expect(minted).toHaveLength(1);
    // The key is never printed.
    expect(`${cli.stdout.toString()}${cli.stderr}`).not.toMatch(/drv_/);
  });

  it('outside its rule’s prefix the minted key is refused (403), and the CLI says so', async () => {
    await writeTree(join(dir, 'outside'), [{ relative: 'x.txt', size: 10 }]);
    const cli = await runCli(['upload', join(dir, 'outside'), '--to', '/elsewhere', '--json'], { DRIVE_URL: host.url, DRIVE_OIDC_TOKEN: await issuer.sign({}) });
    expect(cli.code).toBe(1);
    expect(cli.json<{ failed: { status: number }[] }>().failed.map((file) => file.status)).toEqual([403]);
  });

  it('reads the token from --oidc-token-file', async () => {
    await writeTree(join(dir, 'from-file'), [{ relative: 'f.txt', size: 100 }]);
    const file = join(dir, 'token');
    await writeFile(file, `${await issuer.sign({})}\n`);
    const cli = await runCli(['upload', join(dir, 'from-file'), '--to', '/ingest/from-file', '--oidc-token-file', file, '--json'], { DRIVE_URL: host.url });
    expect(cli.code).toBe(0);
    expect(await pathsBelow('/ingest/from-file')).toEqual(['/ingest/from-file/f.txt']);
  });

  it('re-exchanges during a batch that outlives its key, with no sleep: the key’s stored end is moved to the past mid-batch', async () => {
    // Prepare: three files too big to share a request, sent one at a time.
    const sub = 'repo:acme/etl:ref:refs/heads/long';
    const trustId = await addRule('/long', { subject: sub });
    const tree: TreeFile[] = await writeTree(join(dir, 'long'), [
      { relative: '1.bin', size: 3_000_000 },
      { relative: '2.bin', size: 3_000_000 },
      { relative: '3.bin', size: 3_000_000 },
    ]);
    // The CLI in this process, so that its fetch can end the key just before the second upload request.
    const realFetch = globalThis.fetch;
    let uploads = 0;
    let expired: string | undefined;
    const fetchSpy: typeof fetch = async (input, init) => {
      if (new URL(String(input)).pathname === '/drive/upload' && ++uploads === 2) {
        const [first] = await keysOfRule(trustId);
        await setKeyExpiry(host.dataDir, first.id, new Date(Date.now() - 1000));
        expired = first.id;
      }
      return realFetch(input, init);
    };
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));

    // Act
    globalThis.fetch = fetchSpy;
    let code: number;
    try {
      const io = { stdout: stdout as unknown as NodeJS.WriteStream, stderr: stderr as unknown as NodeJS.WriteStream, env: { DRIVE_URL: host.url, DRIVE_OIDC_TOKEN: await issuer.sign({ sub }) } };
      code = await run(['upload', join(dir, 'long'), '--to', '/long', '-c', '1', '--json'], io);
    } finally {
      globalThis.fetch = realFetch;
    }

    // Assess: every file landed; a second key was minted after the first ended.
    expect(err).toBe('');
    expect(code).toBe(0);
    expect((JSON.parse(out) as { uploaded: unknown[] }).uploaded).toHaveLength(3);
    expect(uploads).toBe(4); // three files, one of them sent twice: its first try met the ended key (401)
    expect(await pathsBelow('/long')).toEqual(tree.map((file) => `/long/${file.relative}`).sort());
    const minted = await keysOfRule(trustId);
    expect(minted).toHaveLength(2);
    expect(minted.map((key) => key.id)).toContain(expired);
    expect(minted.filter((key) => Date.parse(key.expires_at!) > Date.now())).toHaveLength(1);
  });
});

/** A GitHub Actions runner's ID-token endpoint: `GET <url>&audience=…` with `Authorization: bearer <request token>`. */
async function runnerEndpoint(requestToken: string): Promise<{ server: Server; url: string; seen: { url: string; authorization?: string }[] }> {
  const seen: { url: string; authorization?: string }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    const url = new URL(req.url ?? '/', 'http://runner');
    if (req.headers.authorization !== `bearer ${requestToken}` || url.pathname !== '/idtoken') return void res.writeHead(401).end('{"message":"Bad credentials"}');
    const audience = url.searchParams.get('audience') ?? 'https://github.com/acme';
    void issuer.sign({ aud: audience }).then((value) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ count: 1, value })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/idtoken?api-version=2.0`, seen };
}

describe('drive CLI in GitHub Actions', () => {
  it('asks the runner’s token endpoint for a token of DRIVE_OIDC_AUDIENCE and uploads with it', async () => {
    // Prepare
    const audience = 'https://drive.example.com';
    const trustId = await addRule('/actions', { audience });
    const runner = await runnerEndpoint('runner-request-token');
    await writeTree(join(dir, 'actions'), [{ relative: 'build.log', size: 2048 }]);

    try {
      // Act
      const cli = await runCli(['upload', join(dir, 'actions'), '--to', '/actions', '--json'], {
        DRIVE_URL: host.url,
        ACTIONS_ID_TOKEN_REQUEST_URL: runner.url,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'runner-request-token',
        DRIVE_OIDC_AUDIENCE: audience,
      });

      // Assess
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      expect(runner.seen).toEqual([{ url: `/idtoken?api-version=2.0&audience=${encodeURIComponent(audience)}`, authorization: 'bearer runner-request-token' }]);
      expect(await pathsBelow('/actions')).toEqual(['/actions/build.log']);
      expect(await keysOfRule(trustId)).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => runner.server.close(() => resolve()));
    }
  });

  it('without the audience the runner’s default one matches no rule: 401, and nothing uploaded', async () => {
    const runner = await runnerEndpoint('runner-request-token');
    await writeTree(join(dir, 'no-audience'), [{ relative: 'x.txt', size: 10 }]);
    try {
      const cli = await runCli(['upload', join(dir, 'no-audience'), '--to', '/actions/none'], {
        DRIVE_URL: host.url,
        ACTIONS_ID_TOKEN_REQUEST_URL: runner.url,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'runner-request-token',
      });
      expect(cli.code).toBe(1);
      expect(cli.stderr).toContain("the token's audience (aud) matches no trust rule of its issuer (unauthorized, 401)");
      expect(runner.seen.map((request) => request.url)).toEqual(['/idtoken?api-version=2.0']);
    } finally {
      await new Promise<void>((resolve) => runner.server.close(() => resolve()));
    }
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DriveClient } from '../support/api-client';
import { TestIssuer } from '../support/oidc-issuer';
import { nodeArgs } from '../support/host-bundle-files';
import { type RunningHost, removeDataDir, startHost } from '../support/local-host';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..', '..');

/** Runs `npm run keys -- …` (its entry point) on `dataDir` and returns stdout. */
async function keys(dataDir: string, ...args: string[]): Promise<string> {
  // This run's bundle of the key tool (test/support/host-bundle.ts), as fsck's: tsx would load it anew each time.
  const { stdout } = await run(process.execPath, [...nodeArgs('bin/keys.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DRIVE_DATA_DIR: dataDir, DRIVE_ACCESS_TABLE: '' },
  });
  return stdout;
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)!;

let dataDir: string;
let host: RunningHost;
/** A key made before the host first started. */
let offline: string;

// One host for the file, started after a key was made offline: the tests use different drives of it.
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-keys-'));
  offline = lastLine(await keys(dataDir, 'create', '--drive', 'offline', '--name', 'made offline'));
  host = await startHost({ DRIVE_RATE_LIMITS: 'off' }, dataDir);
});

afterAll(async () => {
  await host?.stop();
  await removeDataDir(dataDir);
});

describe('npm run keys', () => {
  it('creates a key while npm start is not running, and the host accepts it', async () => {
    expect(offline).toMatch(/^drv_[A-Za-z0-9_-]{43}$/);
    expect(host.output()).not.toContain('shown only this once');
    expect((await new DriveClient(host.url, offline).list()).status).toBe(200);
  });

  it('creates, lists and revokes keys against a running host; a revoked key gets 401 at once', async () => {
    const created = await keys(dataDir, 'create', '--drive', 'team', '--name', 'nightly job');
    const secret = lastLine(created);
    const keyId = /Created read-write key ([0-9a-f]{16})/.exec(created)![1];
    const drive = new DriveClient(host.url, secret);
    expect((await drive.createFolder({ path: '/reports' })).status).toBe(200);

    const listed = await keys(dataDir, 'list');
    // Used a moment ago: "last used" is a timestamp, not "-".
    expect(listed).toMatch(new RegExp(`${keyId}\\s+team\\s+read-write\\s+/\\s+nightly job\\s+\\S+\\s+20\\S+\\s+…${secret.slice(-4)}\\s+active`));
    expect(listed).not.toContain(secret);

    await keys(dataDir, 'revoke', keyId);
    const after = await drive.list();
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    expect(await keys(dataDir, 'list')).toMatch(new RegExp(`${keyId}.*revoked`));
  });

  it('creates keys of any role, confined to a folder: the API holds each to its role and prefix', async () => {
    const admin = lastLine(await keys(dataDir, 'create', '--drive', 'roles', '--name', 'first admin', '--role', 'admin'));
    const reader = lastLine(await keys(dataDir, 'create', '--drive', 'roles', '--name', 'reports reader', '--role', 'read-only', '--prefix', '/reports'));
    const adminClient = new DriveClient(host.url, admin);
    expect((await adminClient.upload([{ data: 'q3', filename: 'q3.txt' }], [{ folder: '/reports' }])).status).toBe(200);
    expect((await adminClient.upload([{ data: 'secret', filename: 'pay.txt' }], [{ folder: '/payroll' }])).status).toBe(200);

    const readerClient = new DriveClient(host.url, reader);
    expect(await (await readerClient.download({ path: '/reports/q3.txt' })).text()).toBe('q3');
    expect((await readerClient.download({ path: '/payroll/pay.txt' })).status).toBe(403);
    expect((await readerClient.upload([{ data: 'x', filename: 'x.txt' }], [{ folder: '/reports' }])).status).toBe(403);
    expect(await keys(dataDir, 'list')).toMatch(/read-only\s+\/reports\s+reports reader/);

    await expect(keys(dataDir, 'create', '--drive', 'roles', '--name', 'x', '--role', 'owner')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--role must be one of') });
    await expect(keys(dataDir, 'create', '--drive', 'roles', '--name', 'x', '--role', 'admin', '--prefix', '/reports')).rejects.toMatchObject({ stderr: expect.stringContaining('admin key reaches the whole drive') });
  });

  it('fails with a usage message for a bad command, and names an unknown key', async () => {
    await expect(keys(dataDir, 'create', '--drive', 'x')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--name') });
    await expect(keys(dataDir, 'revoke', 'ffffffffffffffff')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('No key with id') });
  });
});

describe('npm run keys -- trust', () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await TestIssuer.start();
  });
  afterAll(async () => {
    await issuer?.stop();
  });

  /** POST /drive/token for drive `fed` with a token of the test issuer's carrying `claims`. */
  async function exchange(claims: Record<string, unknown>): Promise<Response> {
    const token = await issuer.sign(claims);
    return fetch(`${host.url}/drive/token`, { method: 'POST', body: JSON.stringify({ drive: 'fed', token }), headers: { 'Content-Type': 'application/json' } });
  }

  it('adds a rule the exchange honours, lists it with its live minted keys, and revokes the rule and its keys', async () => {
    // Prepare: a rule made by the tool, and a key minted under it through the API.
    const added = await keys(dataDir, 'trust', 'add', '--drive', 'fed', '--issuer', issuer.url, '--audience', 'drive', '--subject', 'repo:acme/etl:ref:refs/heads/*',
      '--claim', 'repository_owner=acme', '--role', 'upload-only', '--prefix', '/ingest', '--max-ttl', '600');
    const id = /Added trust rule ([0-9a-f]{16}) to drive "fed"/.exec(added)![1];
    expect(added).toContain('get upload-only keys on /ingest for at most 600 s');
    expect((await exchange({ repository_owner: 'someone-else' })).status).toBe(401);
    const minted = (await (await exchange({ repository_owner: 'acme' })).json()) as { data: { key: string; expires_at: string; role: string; prefix: string; trust_id: string } };
    expect(minted.data).toMatchObject({ role: 'upload-only', prefix: '/ingest', trust_id: id });
    expect(Date.parse(minted.data.expires_at) - Date.now()).toBeLessThanOrEqual(600_000);
    const job = new DriveClient(host.url, minted.data.key);
    expect((await job.upload([{ data: 'rows', filename: 'rows.csv' }], [{ folder: '/ingest' }])).status).toBe(200);
    const keyId = new RegExp(`([0-9a-f]{16})\\s+fed\\s+upload-only\\s+/ingest\\s+trust ${id}`).exec(await keys(dataDir, 'list'))![1];

    // Act and assess: the list shows the rule and the key live under it, with its subject and end.
    const listed = await keys(dataDir, 'trust', 'list', '--drive', 'fed');
    expect(listed).toContain(`${id}  drive "fed"  active`);
    expect(listed).toContain(`tokens of ${issuer.url} for audience "drive" with subject "repo:acme/etl:ref:refs/heads/*" and claims repository_owner=acme`);
    expect(listed).toMatch(new RegExp(`${keyId}\\s+repo:acme/etl:ref:refs/heads/main\\s+${minted.data.expires_at}`));

    expect(await keys(dataDir, 'trust', 'revoke', id)).toContain(`Revoked trust rule ${id} of drive "fed" and 1 live key minted under it.`);
    expect((await job.upload([{ data: 'more', filename: 'more.csv' }], [{ folder: '/ingest' }])).status).toBe(401);
    expect((await exchange({ repository_owner: 'acme' })).status).toBe(401);
    const after = await keys(dataDir, 'trust', 'list', '--drive', 'fed');
    expect(after).toMatch(new RegExp(`${id}  drive "fed"  revoked 20`));
    expect(after).toContain('no live minted keys');
  });

  it('refuses a rule POST /drive/trust refuses, in its words, and names an unknown rule', async () => {
    const add = (...args: string[]) => keys(dataDir, 'trust', 'add', '--drive', 'fed', '--audience', 'drive', '--subject', 'repo:acme/etl:*', ...args);
    await expect(add('--issuer', issuer.url, '--role', 'admin')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('role must be one of upload-only, read-write, read-only; a trust rule never grants admin') });
    await expect(add('--issuer', issuer.url, '--role', 'read-only', '--max-ttl', '59')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('max_ttl_seconds must be a whole number from 60 to 43200') });
    await expect(add('--issuer', 'http://issuer.example.com', '--role', 'read-only')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('issuer must be an https URL') });
    await expect(add('--issuer', issuer.url, '--role', 'read-only', '--claim', 'novalue')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--claim must be name=value') });
    await expect(keys(dataDir, 'trust', 'add', '--drive', 'fed', '--issuer', issuer.url, '--subject', 's', '--role', 'read-only')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('audience is required') });
    await expect(keys(dataDir, 'trust', 'revoke', 'ffffffffffffffff')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('No trust rule with id ffffffffffffffff') });
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DriveClient } from '../support/api-client';
import { type RunningHost, removeDataDir, startHost } from '../support/local-host';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..', '..');

/** Runs `npm run keys -- …` (its entry point) on `dataDir` and returns stdout. */
async function keys(dataDir: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bin/keys.ts', ...args], {
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

import { type RunningHost, startHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import { driveEnv, runCli } from '../support/cli-process';

// `drive mv` against the local host. DRIVE_MOVE_BUDGET_MS=0 makes every folder move a job, which the CLI
// follows to its end, showing its progress.

const KEY = 'client-cli-move-key-oFGRbyvwuP5fmk1g';

let host: RunningHost;
let env: Record<string, string>;
let drive: Drive;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `default:${KEY}`, DRIVE_RATE_LIMITS: 'off', DRIVE_MOVE_BUDGET_MS: '0', DRIVE_JOB_STEP_MS: '0' });
  env = driveEnv(host.url, KEY);
  drive = new Drive({ baseUrl: host.url, apiKey: KEY });
});

afterAll(() => stopHost(host));

/** The bytes of the file at `path`. */
async function textAt(path: string): Promise<string> {
  return new Response((await drive.download(path)).body).text();
}

describe('drive mv against the local host', () => {
  it('moves a file to a new path, keeping its id, and says where it went', async () => {
    // Prepare
    const stored = await drive.upload({ path: '/mv/a.txt', data: 'alpha' });

    // Act
    const run = await runCli(['mv', '/mv/a.txt', '/mv/renamed.txt'], env);

    // Assess
    expect({ code: run.code, out: String(run.stdout), err: run.stderr }).toEqual({ code: 0, out: 'moved /mv/a.txt -> /mv/renamed.txt\n', err: '' });
    const listing = await drive.list('/mv');
    expect(listing.files.map((file) => [file.path, file.id])).toEqual([['/mv/renamed.txt', stored.id]]);
    expect(await textAt('/mv/renamed.txt')).toBe('alpha');
  });

  it('moves into a folder named with a trailing slash, making it, and prints the entry with --json', async () => {
    await drive.upload({ path: '/mv/b.txt', data: 'bravo' });

    const run = await runCli(['mv', '/mv/b.txt', '/mv/archive/2026/', '--json'], env);

    expect(run.code).toBe(0);
    expect(run.json()).toEqual({ id: expect.any(String), name: 'b.txt', path: '/mv/archive/2026/b.txt', size: 5, created_at: expect.any(String) });
    expect(await textAt('/mv/archive/2026/b.txt')).toBe('bravo');
  });

  it('refuses a taken destination with exit 1 and the API’s 409, and replaces the file with -f', async () => {
    // Prepare
    await drive.uploadMany([
      { path: '/mv/new.txt', data: 'new' },
      { path: '/mv/old.txt', data: 'old' },
    ]);

    // Act
    const refused = await runCli(['mv', '/mv/new.txt', '/mv/old.txt'], env);
    const forced = await runCli(['mv', '-f', '/mv/new.txt', '/mv/old.txt'], env);

    // Assess
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('drive mv: /mv/old.txt is taken; pass -f to replace the file there (conflict, 409)\n');
    expect(forced.code).toBe(0);
    expect(await textAt('/mv/old.txt')).toBe('new');
    await expect(drive.stat('/mv/new.txt')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('follows a folder move that goes on as a job, showing its progress, to its end', async () => {
    // Prepare
    // Steps of 0 ms move one thing each (a page of files, or a folder): the job crosses several, whatever the machine.
    const paths = Array.from({ length: 24 }, (_, i) => `/tree/d${i % 3}/f${i}.txt`);
    expect((await drive.uploadMany(paths.map((path) => ({ path, data: path })))).failed).toEqual([]);

    // Act
    const run = await runCli(['mv', '/tree', '/moved/tree'], env);

    // Assess
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^\/tree is being moved to \/moved\/tree \(job [0-9a-f-]{36}\): \d+ file\(s\) so far\n/);
    expect(String(run.stdout)).toBe('moved /tree -> /moved/tree/\n');
    const moved = await drive.list('/moved/tree', { recursive: true });
    expect(moved.files.map((file) => file.path).sort()).toEqual(paths.map((path) => `/moved${path}`).sort());
    await expect(drive.list('/tree')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('prints the folder entry of a job with --json, and nothing on stderr', async () => {
    await drive.uploadMany([{ path: '/tree2/x/1.txt', data: '1' }, { path: '/tree2/2.txt', data: '2' }]);

    const run = await runCli(['mv', '/tree2', '/moved/tree2', '--json'], env);

    expect({ code: run.code, err: run.stderr }).toEqual({ code: 0, err: '' });
    expect(run.json()).toEqual({ id: expect.any(String), name: 'tree2', path: '/moved/tree2' });
  });

  it('exits 1 with not_found for a source that holds nothing, and 2 for a command line it cannot run', async () => {
    const missing = await runCli(['mv', '/nothing/here.txt', '/there.txt', '--json'], env);
    const usage = await runCli(['mv', '/only-one'], env);

    expect(missing.code).toBe(1);
    expect(missing.json()).toEqual({ error: { code: 'not_found', message: expect.stringContaining('/nothing/here.txt'), status: 404 } });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('mv takes a source and a destination path');
  });
});

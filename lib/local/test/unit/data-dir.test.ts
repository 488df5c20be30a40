import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirError, openDataDir, tightenedMessage } from '../../data-dir';

// The data dir holds stored bytes, key hashes and traces: the host makes it its owner's alone, and a folder it
// cannot use stops the start at once with a message that names it.

let parent: string;

beforeEach(async () => {
  parent = await mkdtemp(join(tmpdir(), 'drive-datadir-'));
});

afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

/** `/proc` refuses every write even to root, so these cases fail on any Linux machine, as root or not. */
const onLinux = process.platform === 'linux' ? it : it.skip;

describe('openDataDir', () => {
  it('creates a missing data dir and its parents for its owner alone, and says nothing', async () => {
    const dir = join(parent, 'a', 'b', 'data');

    const opened = await openDataDir(dir);

    expect(opened).toEqual({ path: dir });
    expect(tightenedMessage(opened)).toBeUndefined();
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(parent, 'a'))).mode & 0o777).toBe(0o700);
  });

  it('makes a data dir other users could read private, and says so once', async () => {
    const dir = join(parent, 'data');
    await openDataDir(dir);
    await chmod(dir, 0o755);

    const first = await openDataDir(dir);
    const second = await openDataDir(dir);

    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(tightenedMessage(first)).toBe(`the data dir ${dir} was readable by other users (mode 0755); it is now its owner's alone (0700)`);
    expect(tightenedMessage(second)).toBeUndefined();
  });

  it('leaves what the process creates afterwards to its owner alone (umask 077)', async () => {
    const dir = join(parent, 'data');
    await openDataDir(dir);

    await writeFile(join(dir, 'record.json'), '{}');

    expect((await stat(join(dir, 'record.json'))).mode & 0o777).toBe(0o600);
  });

  it('refuses a file where the data dir should be, naming it', async () => {
    const file = join(parent, 'a-file');
    await writeFile(file, 'x');

    await expect(openDataDir(file)).rejects.toThrow(new DataDirError(`the data dir ${file} is a file, not a folder; set DRIVE_DATA_DIR to a folder`));
    await expect(openDataDir(join(file, 'data'))).rejects.toThrow(/^the data dir .*a-file\/data is not writable \(ENOTDIR/);
  });

  onLinux('refuses an existing folder it cannot write (/proc/self), naming it', async () => {
    await expect(openDataDir('/proc/self')).rejects.toThrow(/^the data dir \/proc\/self is not writable \(E[A-Z]+: .*\); set DRIVE_DATA_DIR to a folder this user can write$/);
  });

  onLinux('fails at once on a path under /proc that cannot be made (Node\'s recursive mkdir never returns there)', async () => {
    await expect(openDataDir('/proc/drive-no-such/data')).rejects.toThrow(/^the data dir \/proc\/drive-no-such\/data is not writable \(ENOENT: .*at \/proc\/drive-no-such\)/);
  });
});

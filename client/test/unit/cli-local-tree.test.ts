import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../src/cli/args';
import { collectFiles, remotePath } from '../../src/cli/local-tree';

describe('Function: collectFiles', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drive-tree-'));
    await mkdir(join(dir, 'out', 'a', 'b'), { recursive: true });
    await writeFile(join(dir, 'out', 'top.csv'), 'top');
    await writeFile(join(dir, 'out', 'a', 'b', 'deep.csv'), 'deeper');
    await writeFile(join(dir, 'single.txt'), '1');
  });

  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('puts a directory’s files below --to keeping their tree, and a file at --to/<name>, sorted by drive path', async () => {
    const { files, skipped } = await collectFiles([join(dir, 'out'), join(dir, 'single.txt')], '/in');
    expect(files).toEqual([
      { local: join(dir, 'out', 'a', 'b', 'deep.csv'), remote: '/in/a/b/deep.csv', size: 6 },
      { local: join(dir, 'single.txt'), remote: '/in/single.txt', size: 1 },
      { local: join(dir, 'out', 'top.csv'), remote: '/in/top.csv', size: 3 },
    ]);
    expect(skipped).toEqual([]);
  });

  it('follows a link to a file and skips a link to a directory (a loop could never end)', async () => {
    await symlink(join(dir, 'single.txt'), join(dir, 'out', 'link.txt'));
    await symlink(join(dir, 'out'), join(dir, 'out', 'a', 'loop'));
    const { files, skipped } = await collectFiles([join(dir, 'out')], '/');
    expect(files.map((file) => file.remote)).toEqual(['/a/b/deep.csv', '/link.txt', '/top.csv']);
    expect(skipped).toEqual([join(dir, 'out', 'a', 'loop')]);
  });

  it('refuses two sources that land on one drive path', async () => {
    await mkdir(join(dir, 'other'));
    await writeFile(join(dir, 'other', 'top.csv'), 'clash');
    await expect(collectFiles([join(dir, 'out'), join(dir, 'other')], '/in')).rejects.toThrow(UsageError);
    await expect(collectFiles([join(dir, 'out'), join(dir, 'other')], '/in')).rejects.toThrow(/would both go to \/in\/top.csv/);
  });

  it('refuses a source that does not exist', async () => {
    await expect(collectFiles([join(dir, 'nope')], '/')).rejects.toThrow(/no such file or directory/);
  });
});

describe('Function: remotePath', () => {
  it('joins below / and other folders, in NFC (as the server stores paths)', () => {
    expect(remotePath('/', ['a', 'b'])).toBe('/a/b');
    expect(remotePath('/x', ['a'])).toBe('/x/a');
    expect(remotePath('/x', ['cafe\u0301.txt'])).toBe('/x/caf\u00e9.txt');
  });
});

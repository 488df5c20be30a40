import { mkdir, mkdtemp, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, parseCommand } from '../../src/cli/args';
import { retryLine } from '../../src/cli/main';
import { changeLine, summaryLine } from '../../src/cli/sync-command';
import { fileContentEtag } from '../../src/content-etag';
import { PathFilter } from '../../src/sync/filter';
import { readLocalIndex } from '../../src/sync/local-index';
import { type SyncReport, endpointsOf, stableEtag } from '../../src/sync/sync';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'drive-sync-unit-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readLocalIndex', () => {
  it('indexes files and folders (NFC), reports link loops and dangling links, skips partial downloads and excluded folders', async () => {
    const root = join(dir, 'tree');
    await mkdir(join(root, 'a/empty'), { recursive: true });
    await mkdir(join(root, 'node_modules/x'), { recursive: true });
    await writeFile(join(root, 'a/f.txt'), 'abc');
    await writeFile(join(root, 'Cafe\u0301.txt'), 'nfd');
    await writeFile(join(root, 'a/.f.txt.drive-123-456'), 'half a download');
    await writeFile(join(root, 'node_modules/x/big'), 'x');
    await symlink('..', join(root, 'a/up'));
    await symlink('nowhere', join(root, 'dangling'));
    await symlink('f.txt', join(root, 'a/link.txt'));

    const index = await readLocalIndex(root, new PathFilter([{ kind: 'exclude', pattern: 'node_modules/' }]));

    expect([...index.files.keys()].sort()).toEqual(['Café.txt'.normalize('NFC'), 'a/f.txt', 'a/link.txt']);
    expect([...index.folders].sort()).toEqual(['a', 'a/empty']);
    expect(index.issues.map((issue) => [issue.relative, issue.reason])).toEqual([
      ['a/up', expect.stringContaining('symbolic link loop')],
      ['dangling', expect.stringContaining('a symbolic link to nothing')],
    ]);
  });
});

describe('stableEtag: a local file that changes while it is read', () => {
  it('is read again once, and its second reading counts', async () => {
    const path = join(dir, 'changing.txt');
    await writeFile(path, 'first');
    const entry = { relative: 'changing.txt', path, size: 5, mtimeMs: (await stat(path)).mtimeMs };
    let reads = 0;
    const hash: typeof fileContentEtag = async (file, size, form, parts) => {
      const etag = await fileContentEtag(file, size, form, parts);
      if (++reads === 1) await utimes(path, new Date(), new Date(Date.now() + 5000)); // touched while read
      return etag;
    };

    const etag = await stableEtag(entry, 'single', undefined, hash);

    expect(reads).toBe(2);
    expect(etag).toBe(await fileContentEtag(path, 5, 'single'));
  });

  it('fails after a second change', async () => {
    const path = join(dir, 'busy.txt');
    await writeFile(path, 'busy');
    const entry = { relative: 'busy.txt', path, size: 4, mtimeMs: 0 };
    let t = Date.now();
    const hash: typeof fileContentEtag = async (file, size, form, parts) => {
      const etag = await fileContentEtag(file, size, form, parts);
      t += 5000;
      await utimes(path, new Date(t), new Date(t));
      return etag;
    };

    await expect(stableEtag(entry, 'single', undefined, hash)).rejects.toThrow(`${path} changed while it was read (size or modification time moved), twice`);
  });
});

describe('drive sync arguments', () => {
  const base = { delete: false, maxDelete: 1000, dryRun: false, sizeOnly: false, filters: [] };

  it('takes the drive side from drive:, else from the leading "/"', () => {
    expect(parseCommand(['sync', './out', '/backup'])).toMatchObject({ ...base, name: 'sync', src: { local: './out' }, dst: { drive: '/backup' } });
    expect(parseCommand(['sync', 'drive:/backup/', 'out'])).toMatchObject({ src: { drive: '/backup' }, dst: { local: 'out' } });
    expect(parseCommand(['sync', '/abs/local', 'drive:/b'])).toMatchObject({ src: { local: '/abs/local' }, dst: { drive: '/b' } });
    expect(() => parseCommand(['sync', 'a', 'b'])).toThrow('one side of sync must be a drive folder');
    expect(() => parseCommand(['sync', 'drive:/a', 'drive:/b'])).toThrow('not two drive folders');
    expect(() => parseCommand(['sync', 'a'])).toThrow('sync takes a source and a destination, got 1 path(s)');
  });

  it('keeps --exclude and --include in the order given', () => {
    expect((parseCommand(['sync', 'a', '/b', '--exclude', '*.log', '--include', 'keep.log', '--exclude', 'tmp/']) as Extract<Command, { name: 'sync' }>).filters).toEqual([
      { kind: 'exclude', pattern: '*.log' },
      { kind: 'include', pattern: 'keep.log' },
      { kind: 'exclude', pattern: 'tmp/' },
    ]);
  });

  it('reads --delete, --max-delete (-1 no limit), --dry-run, --size-only, --quiet', () => {
    expect(parseCommand(['sync', 'a', '/b', '--delete', '--max-delete', '-1', '-n', '--size-only', '-q'])).toMatchObject({ delete: true, maxDelete: -1, dryRun: true, sizeOnly: true, quiet: true });
    expect(() => parseCommand(['sync', 'a', '/b', '--max-delete', '5'])).toThrow('--max-delete goes with --delete');
    expect(() => parseCommand(['sync', 'a', '/b', '--delete', '--max-delete', '-2'])).toThrow('--max-delete must be a whole number, or -1 for no limit (got "-2")');
  });

  it('the library reads a string side as local unless it says drive:', () => {
    expect(endpointsOf('./out', 'drive:/x/')).toEqual({ direction: 'up', local: './out', remote: '/x' });
    expect(endpointsOf({ drive: '/' }, { local: '/tmp/x' })).toEqual({ direction: 'down', local: '/tmp/x', remote: '/' });
  });
});

describe('drive sync output', () => {
  it('says each change on one line', () => {
    expect(changeLine({ action: 'upload', path: '/b/x.csv', relative: 'x.csv', reason: 'new', size: 1229, ok: true })).toBe('uploaded /b/x.csv (new, 1.2 KiB)');
    expect(changeLine({ action: 'delete', path: '/b/old', relative: 'old', ok: true, dryRun: true })).toBe('would delete /b/old');
    expect(changeLine({ action: 'mkdir', path: '/b/e', relative: 'e', ok: true })).toBe('created /b/e/');
  });

  it('sums up as the issue asks', () => {
    const report: SyncReport = { direction: 'up', source: 'a', destination: 'drive:/b', dryRun: false, transferred: { files: 12, bytes: 3.1 * 1024 * 1024 }, deleted: 2, foldersCreated: 0, unchanged: 9870, failed: [], interrupted: false, seconds: 4.21 };
    expect(summaryLine(report)).toBe('uploaded 12 (3.1 MiB), deleted 2, unchanged 9,870, failed 0 in 4.2 s');
  });

  it('says a retry with the call, the attempt and the reason', () => {
    expect(retryLine('upload', { method: 'POST', path: '/drive/upload', url: 'http://h:3000/drive/upload', attempt: 2, attempts: 6, reason: 'the gateway timed out (504)', waitMs: 1234 })).toBe('drive upload: POST http://h:3000/drive/upload: attempt 2 of 6 in 1.2 s (the gateway timed out (504))');
    expect(retryLine('ls', { method: 'GET', path: '/drive/list', url: 'http://h:3000/drive/list', attempt: 3, attempts: 6, reason: 'no answer (ECONNREFUSED)', waitMs: 50 })).toBe('drive ls: GET http://h:3000/drive/list: attempt 3 of 6 in 0.1 s (no answer (ECONNREFUSED))');
    // A wait the server asked for (429, or an earlier attempt still running) has no bound of attempts.
    expect(retryLine('upload', { method: 'POST', path: '/drive/upload', url: 'http://h:3000/drive/upload', attempt: 2, reason: 'rate limited (429)', waitMs: 1000 })).toBe('drive upload: POST http://h:3000/drive/upload: attempt 2 in 1.0 s (rate limited (429))');
  });
});

import { createHash } from 'node:crypto';
import { PathFilter } from '../../src/sync/filter';
import type { LocalEntry, LocalIndex } from '../../src/sync/local-index';
import { type Plan, type PlanOptions, type RemoteFile, type RemotePage, planSync } from '../../src/sync/plan';

/** A content ETag (hex MD5) standing for the content named `c`. */
const MD5 = (c: string) => createHash('md5').update(c).digest('hex');

/** A local index of `files` (relative → [size, content letter]); the content letter makes the fake ETag. */
function index(files: Record<string, [number, string]>, folders: string[] = []): LocalIndex {
  const map = new Map<string, LocalEntry>();
  for (const [relative, [size, content]] of Object.entries(files)) map.set(relative, { relative, path: `/local/${relative}#${content}`, size, mtimeMs: 0 });
  const all = new Set(folders);
  for (const relative of map.keys()) for (let i = relative.indexOf('/'); i > 0; i = relative.indexOf('/', i + 1)) all.add(relative.slice(0, i));
  return { files: map, folders: all, issues: [] };
}

async function* pages(...list: RemotePage[]): AsyncGenerator<RemotePage> {
  for (const page of list) yield page;
}

const file = (relative: string, size: number, content: string): RemoteFile => ({ relative, size, etag: MD5(content) });

function options(overrides: Partial<PlanOptions> = {}): PlanOptions & { hashed: string[] } {
  const hashed: string[] = [];
  return {
    direction: 'up',
    delete: false,
    sizeOnly: false,
    filter: new PathFilter(),
    etagOf: async (entry) => {
      hashed.push(entry.relative);
      return MD5(entry.path.split('#')[1]);
    },
    hashed,
    ...overrides,
  };
}

const summary = (plan: Plan) => ({
  transfers: plan.transfers.map((t) => `${t.reason} ${t.relative}`),
  deletes: plan.deletes.map((d) => d.relative),
  mkdirs: plan.mkdirs,
  rmdirs: plan.rmdirs,
  unchanged: plan.unchanged,
  failed: plan.failed.map((f) => f.relative),
});

describe('planSync', () => {
  it('going up: new, changed by size, changed by content, unchanged, and (with delete) extra files, across pages', async () => {
    const local = index({ 'new.txt': [1, 'n'], 'a/size.txt': [2, 's'], 'a/content.txt': [3, 'x'], 'b/same.txt': [4, 'q'] });
    const opts = options({ delete: true });

    const plan = await planSync(
      local,
      pages(
        { files: [file('a/content.txt', 3, 'y'), file('a/size.txt', 5, 's')], folders: ['a'] },
        { files: [file('b/same.txt', 4, 'q'), file('b/extra.txt', 9, 'e')], folders: ['b'] },
      ),
      opts,
    );

    expect(summary(plan)).toEqual({ transfers: ['changed a/content.txt', 'changed a/size.txt', 'new new.txt'], deletes: ['b/extra.txt'], mkdirs: [], rmdirs: [], unchanged: 1, failed: [] });
    // Only files of equal size are hashed.
    expect(opts.hashed.sort()).toEqual(['a/content.txt', 'b/same.txt']);
  });

  it('without delete, extra destination files stay and are not counted', async () => {
    const plan = await planSync(index({}), pages({ files: [file('x', 1, 'x')], folders: ['f'] }), options());
    expect(summary(plan)).toMatchObject({ deletes: [], rmdirs: [] });
  });

  it('--size-only: same size is unchanged, and nothing is hashed', async () => {
    const opts = options({ sizeOnly: true });
    const plan = await planSync(index({ 'a.txt': [3, 'x'] }), pages({ files: [file('a.txt', 3, 'y')], folders: [] }), opts);
    expect([plan.unchanged, plan.transfers.length, opts.hashed]).toEqual([1, 0, []]);
  });

  it('a drive file with no content ETag cannot be proved equal: it is sent again', async () => {
    const plan = await planSync(index({ 'a.txt': [3, 'x'] }), pages({ files: [{ relative: 'a.txt', size: 3, etag: 'f3a1b2c4-0000-id' }], folders: [] }), options());
    expect(summary(plan).transfers).toEqual(['changed a.txt']);
  });

  it('a local file that cannot be hashed fails alone going up', async () => {
    const opts = options({
      etagOf: async (entry) => {
        if (entry.relative === 'bad.txt') throw new Error('bad.txt changed while it was read, twice');
        return MD5('q');
      },
    });
    const plan = await planSync(index({ 'bad.txt': [1, 'b'], 'ok.txt': [1, 'q'] }), pages({ files: [file('bad.txt', 1, 'b'), file('ok.txt', 1, 'q')], folders: [] }), opts);
    expect(summary(plan)).toMatchObject({ transfers: [], unchanged: 1, failed: ['bad.txt'] });
    expect(plan.failed[0].reason).toContain('changed while it was read');
  });

  it('going down: drive-only files are new, local-only ones deleted (with delete), changed ones fetched', async () => {
    const local = index({ 'keep.txt': [1, 'k'], 'old.txt': [1, 'o'], 'diff.txt': [2, 'a'] }, ['gone']);
    const plan = await planSync(local, pages({ files: [file('keep.txt', 1, 'k'), file('diff.txt', 2, 'b'), file('sub/new.txt', 7, 'n')], folders: ['sub', 'empty'] }), options({ direction: 'down', delete: true }));
    expect(summary(plan)).toEqual({ transfers: ['changed diff.txt', 'new sub/new.txt'], deletes: ['old.txt'], mkdirs: ['empty'], rmdirs: ['gone'], unchanged: 1, failed: [] });
    expect(plan.transfers[1].size).toBe(7);
  });

  it('going down, a drive path that would climb out of the local folder is refused', async () => {
    const plan = await planSync(index({}), pages({ files: [file('../escape', 1, 'x')], folders: [] }), options({ direction: 'down' }));
    expect(summary(plan)).toMatchObject({ transfers: [], failed: ['../escape'] });
  });

  it('makes only the empty folders the uploads will not make; removes extra drive folders deepest first', async () => {
    const local = index({ 'a/f.txt': [1, 'f'] }, ['empty', 'x', 'x/y']);
    const plan = await planSync(local, pages({ files: [file('a/f.txt', 1, 'f')], folders: ['a', 'gone', 'gone/deeper'] }), options({ delete: true }));
    expect(summary(plan)).toMatchObject({ mkdirs: ['empty', 'x/y'], rmdirs: ['gone/deeper', 'gone'] });
  });

  it('filters both sides: an excluded path is not sent, not compared, not deleted', async () => {
    const opts = options({ delete: true, filter: new PathFilter([{ kind: 'exclude', pattern: '*.log' }, { kind: 'exclude', pattern: 'tmp/' }]) });
    const local = index({ 'a.log': [1, 'a'], 'keep.txt': [1, 'k'], 'tmp/x': [1, 'x'] });
    const plan = await planSync(local, pages({ files: [file('b.log', 1, 'b'), file('tmp/y', 1, 'y'), file('keep.txt', 1, 'k')], folders: ['tmp'] }), opts);
    expect(summary(plan)).toEqual({ transfers: [], deletes: [], mkdirs: [], rmdirs: [], unchanged: 1, failed: [] });
  });

  it('holds an unchanged file as a count, not an entry: 10,000 unchanged files leave an empty plan', async () => {
    const files: Record<string, [number, string]> = {};
    const remote: RemoteFile[] = [];
    for (let i = 0; i < 10_000; i++) {
      files[`f${i}`] = [1, 'z'];
      remote.push(file(`f${i}`, 1, 'z'));
    }
    const list = Array.from({ length: 10 }, (_, p) => ({ files: remote.slice(p * 1000, (p + 1) * 1000), folders: [] }));
    const plan = await planSync(index(files), pages(...list), options({ delete: true }));
    expect(summary(plan)).toEqual({ transfers: [], deletes: [], mkdirs: [], rmdirs: [], unchanged: 10_000, failed: [] });
  });
});

import { PathFilter } from '../../src/sync/filter';

const ex = (pattern: string) => ({ kind: 'exclude' as const, pattern });
const inc = (pattern: string) => ({ kind: 'include' as const, pattern });

/** The paths of `paths` the filter keeps (folders end in `/`). */
function kept(filter: PathFilter, paths: string[]): string[] {
  return paths.filter((path) => (path.endsWith('/') ? !filter.excludesFolder(path.slice(0, -1)) : !filter.excludesFile(path)));
}

describe('PathFilter: --exclude / --include as .gitignore lines', () => {
  const paths = ['a.log', 'important.log', 'd/x.log', 'd/important.log', 'build/', 'build/out.bin', 'build/keep.txt', 'src/build/gen.ts', 'top.txt', 'd/top.txt', 'docs/a.md', 'docs/x/y/b.md', 'README.md', 'café ü.txt'];

  it('keeps everything without rules', () => {
    expect(kept(new PathFilter(), paths)).toEqual(paths);
  });

  it('matches a bare name at any depth, and a later --include takes a file back', () => {
    expect(kept(new PathFilter([ex('*.log'), inc('important.log')]), paths).filter((p) => p.includes('log'))).toEqual(['important.log', 'd/important.log']);
  });

  it('a trailing slash names folders (and all they hold); a leading slash anchors at the synced folder', () => {
    const filter = new PathFilter([ex('build/'), ex('/top.txt')]);
    expect(kept(filter, paths)).not.toEqual(expect.arrayContaining(['build/', 'build/out.bin', 'src/build/gen.ts', 'top.txt']));
    expect(kept(filter, paths)).toEqual(expect.arrayContaining(['d/top.txt', 'a.log']));
    expect(filter.excludesFile('src/build/gen.ts')).toBe(true);
  });

  it('cannot take back a file below an excluded folder, as git cannot', () => {
    expect(new PathFilter([ex('build/'), inc('build/keep.txt')]).excludesFile('build/keep.txt')).toBe(true);
  });

  it('** matches any depth', () => {
    const filter = new PathFilter([ex('docs/**/*.md')]);
    expect([filter.excludesFile('docs/a.md'), filter.excludesFile('docs/x/y/b.md'), filter.excludesFile('README.md')]).toEqual([true, true, false]);
  });

  it('an --include given first keeps only what it matches, at any depth, and marks the filter onlyIncluded', () => {
    const filter = new PathFilter([inc('*.md')]);
    expect(kept(filter, paths).filter((p) => !p.endsWith('/'))).toEqual(['docs/a.md', 'docs/x/y/b.md', 'README.md']);
    expect(filter.onlyIncluded).toBe(true);
    expect(new PathFilter([ex('*.md')]).onlyIncluded).toBe(false);
  });

  it('matches names with spaces and non-ASCII letters', () => {
    expect(new PathFilter([ex('café *')]).excludesFile('café ü.txt')).toBe(true);
  });

  it('refuses an empty pattern', () => {
    expect(() => new PathFilter([ex(' ')])).toThrow('--exclude needs a pattern');
  });
});

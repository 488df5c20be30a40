import ignore, { type Ignore } from 'ignore';

/** One `--exclude` or `--include`, in the order given. */
export interface FilterRule {
  kind: 'exclude' | 'include';
  pattern: string;
}

/**
 * Which paths a sync leaves alone, by `.gitignore` rules (the `ignore` package, which follows git's own
 * matcher): each `--exclude P` is a `.gitignore` line `P`, each `--include P` the line `!P`, read in the order
 * given, the last rule that matches a path deciding. So, as in git:
 *
 * - `*.log` matches at any depth; `/build` only at the top of the synced folder; `build/` only a folder
 *   (and everything in it); `docs/**\/*.md` any `.md` below `docs`; `?` one character, `[a-z]` a class.
 * - `--exclude '*.log' --include important.log` keeps `important.log` (the later rule wins).
 * - A file below an excluded folder cannot be included again (`--exclude build/ --include build/keep.txt`
 *   still leaves `build/keep.txt` out), because git does not look inside an excluded folder either.
 *
 * One addition: when the first rule is an `--include`, everything not included is left out (`--include
 * '*.csv'` syncs only the CSV files, at any depth), which is `*` then `!*\/` before the rules in git's terms;
 * folders are then synced only as the way to an included file (no empty folders are made or removed).
 *
 * The same rules filter both sides, by the path relative to the synced folder. An excluded path is neither
 * sent, nor compared, nor deleted.
 */
export class PathFilter {
  private readonly matcher: Ignore | undefined;
  /** True when the rules begin with an `--include`: only what is included is synced, and no empty folders. */
  readonly onlyIncluded: boolean;

  constructor(readonly rules: readonly FilterRule[] = []) {
    for (const rule of rules) {
      if (rule.pattern.trim() === '') throw new TypeError(`--${rule.kind} needs a pattern`);
      if (/[\r\n]/.test(rule.pattern)) throw new TypeError(`--${rule.kind} pattern has a line break`);
    }
    this.onlyIncluded = rules.length > 0 && rules[0].kind === 'include';
    if (rules.length === 0) return;
    const lines = this.onlyIncluded ? ['*', '!*/'] : [];
    for (const rule of rules) lines.push(rule.kind === 'exclude' ? rule.pattern : `!${rule.pattern}`);
    this.matcher = ignore().add(lines);
  }

  /** True when the file at `relative` (no leading slash, `/` between names) is left out. */
  excludesFile(relative: string): boolean {
    return this.matcher?.ignores(relative) ?? false;
  }

  /** True when the folder at `relative` (and so all it holds) is left out. */
  excludesFolder(relative: string): boolean {
    return this.matcher?.ignores(`${relative}/`) ?? false;
  }
}

/**
 * Folders this process found standing, live, above a record it had just written (the read after the write,
 * protocol/README.md, "Writers", step 5), each for `ttlMs`. An upload of one file into one of them skips its
 * first read (`uploadOne`): that read only refuses early and makes missing folders, and the read after the
 * write is what keeps the protocol. A stale entry costs a write and its undo where the read would have
 * refused first, and the same answer. A warm Lambda holds one per container, as it holds verified keys.
 */
export class LiveFolders {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 1000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether `path` (and every folder above it) was found live less than `ttlMs` ago. */
  has(drive: string, path: string): boolean {
    const key = `${drive}\n${path}`;
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > this.clock()) return true;
    this.until.delete(key);
    return false;
  }

  /** `paths` and the folders above them were read live, just now, after a record below them was written. */
  note(drive: string, paths: readonly string[]): void {
    if (this.ttlMs <= 0) return;
    const until = this.clock() + this.ttlMs;
    for (const path of paths) {
      const key = `${drive}\n${path}`;
      // Oldest first out: a Map keeps insertion order, so a refreshed entry moves to the end.
      this.until.delete(key);
      this.until.set(key, until);
      if (this.until.size > this.max) this.until.delete(this.until.keys().next().value!);
    }
  }

  /** A read found one of `paths` (or a folder above it) gone, taken or marked. */
  forget(drive: string, paths: readonly string[]): void {
    for (const path of paths) this.until.delete(`${drive}\n${path}`);
  }
}

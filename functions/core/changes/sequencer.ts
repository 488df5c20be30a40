import { type ChangeLog, type LoggedChange, MAX_COMMIT_ITEMS, type MarkKey, type MoveHalf, type MoveMark, type SequencerState, type StreamRecord } from './change-log';
import { type UnplacedChange, aloneChange, mapRecord, pairChange } from './change-mapping';

/** How long a partition's progress is kept after its last record: past the stream's 24 hours, no record of it comes again. */
const PROGRESS_KEPT_MS = 25 * 60 * 60 * 1000;

export interface SequencerOptions {
  /** How long a move's first half waits for its second before each is emitted alone (`changesPairWaitSeconds`). */
  pairWaitMs: number;
  /** The clock (epoch ms). */
  now: () => number;
  /** Told of each half emitted alone (a metric with an alarm, expected at zero). */
  onUnpaired?: (half: MoveHalf) => void;
}

/** Whether stream sequence number `a` comes before `b` (decimal strings without leading zeros, of any length). */
export function sequenceBefore(a: string, b: string): boolean {
  return a.length !== b.length ? a.length < b.length : a < b;
}

/**
 * Turns a batch of one shard's stream records (in the shard's order) into changes appended to each drive's
 * log, each once, in per-path order (docs/change-feed-design.md, "Sequencing"; progress is noted by partition,
 * as a Lambda event names no shard). Returns the sequence number
 * to hand the batch back from (Lambda's `batchItemFailures`) when a record waits for its move's other half,
 * else undefined. A retried batch skips what is done already; a lost commit condition reads again and goes round.
 */
export async function sequenceBatch(log: ChangeLog, records: readonly StreamRecord[], options: SequencerOptions): Promise<string | undefined> {
  const drives = [...new Set(records.map((record) => record.drive))];
  let retryFrom: string | undefined;
  for (const drive of drives) {
    const own = records.filter((record) => record.drive === drive);
    const deferred = await sequenceDrive(log, drive, own, options);
    if (deferred !== undefined && (retryFrom === undefined || sequenceBefore(deferred, retryFrom))) retryFrom = deferred;
  }
  return retryFrom;
}

/**
 * Emits alone the halves of `drive` that waited longer than the pair wait, with no record to sequence: for a
 * drive whose stream went quiet with a half waiting (its pair's record comes later in the stream otherwise).
 */
export async function settleHalves(log: ChangeLog, drive: string, options: SequencerOptions): Promise<void> {
  await sequenceDrive(log, drive, [], options);
}

async function sequenceDrive(log: ChangeLog, drive: string, records: readonly StreamRecord[], options: SequencerOptions): Promise<string | undefined> {
  for (;;) {
    const state = await log.readState(drive);
    const marks = await log.readMarks(drive, markKeysOf(records));
    const plan = new Plan(state, records, marks, options);
    plan.run();
    let committed = true;
    for (const commit of plan.commits) {
      if (!(await log.commit(drive, commit.state, commit.changes, commit.marks))) {
        committed = false;
        break;
      }
    }
    if (committed) return plan.firstDeferred();
  }
}

/** The marks a batch's file records may have: a removal's by its id, path and arrival, a moved record's by what it notes of its source. */
function markKeysOf(records: readonly StreamRecord[]): MarkKey[] {
  const keys: MarkKey[] = [];
  for (const record of records) {
    if (record.new?.kind === 'file' && record.new.moveId !== undefined && record.new.movedFrom !== undefined) keys.push({ id: record.new.id, from: record.new.movedFrom, arrival: record.new.moveArrival ?? '' });
    else if (record.event === 'REMOVE' && record.old?.kind === 'file') keys.push({ id: record.old.id, from: record.old.path, arrival: record.old.movedAt ?? '' });
  }
  return keys;
}

interface Commit {
  state: SequencerState;
  changes: LoggedChange[];
  marks: MarkKey[];
}

/** One drive's part of a batch, worked out in memory: the transactions to write, in order. */
class Plan {
  readonly commits: Commit[] = [];
  private readonly state: SequencerState;
  private changes: LoggedChange[] = [];
  private marksToDelete: MarkKey[] = [];
  /** Records processed in this plan, by sequence number. */
  private readonly processed = new Set<string>();
  private readonly skipped = new Set<string>();
  private readonly deferred: StreamRecord[] = [];
  /** Whether the halves changed since the last commit. */
  private dirty = false;

  constructor(
    stored: SequencerState,
    private readonly records: readonly StreamRecord[],
    private readonly marks: ReadonlyMap<string, MoveMark>,
    private readonly options: SequencerOptions,
  ) {
    this.state = structuredClone(stored);
  }

  run(): void {
    const now = this.options.now();
    for (const [partition, progress] of Object.entries(this.state.partitions)) if (now - progress.touched > PROGRESS_KEPT_MS) delete this.state.partitions[partition];
    for (const [key, half] of Object.entries(this.state.halves)) {
      if (now - half.since < this.options.pairWaitMs) continue;
      this.room(2);
      delete this.state.halves[key];
      this.dirty = true;
      this.place([aloneChange(half)]);
      if (half.mark) this.marksToDelete.push(half.mark);
      this.options.onUnpaired?.(half);
    }
    for (const record of this.records) {
      if (this.isDone(record)) {
        this.skipped.add(record.sequence);
        continue;
      }
      if (this.isHeld(record.path) || this.deferred.some((waiting) => waiting.path === record.path)) {
        this.deferred.push(record);
        continue;
      }
      this.process(record, now);
    }
    this.flush();
  }

  /** The first record handed back, if any. */
  firstDeferred(): string | undefined {
    return this.deferred[0]?.sequence;
  }

  private process(record: StreamRecord, now: number): void {
    this.room(3);
    const mapped = mapRecord(record, this.marks);
    this.processed.add(record.sequence);
    if ('changes' in mapped) {
      this.place(mapped.changes);
      return;
    }
    const other = this.state.halves[mapped.pairKey];
    this.dirty = true;
    if (!other || other.side === mapped.half.side) {
      this.state.halves[mapped.pairKey] = { ...mapped.half, since: now };
      return;
    }
    delete this.state.halves[mapped.pairKey];
    this.place([pairChange(other, mapped.half)]);
    const mark = other.mark ?? mapped.half.mark;
    if (mark) this.marksToDelete.push(mark);
    this.release(other.held);
  }

  /** Processes, in order, the records that waited for `path`'s hold, until one holds it again. */
  private release(path: string): void {
    while (!this.isHeld(path)) {
      const index = this.deferred.findIndex((record) => record.path === path);
      if (index < 0) return;
      const [record] = this.deferred.splice(index, 1);
      this.process(record, this.options.now());
    }
  }

  private isHeld(path: string): boolean {
    return Object.values(this.state.halves).some((half) => half.held === path);
  }

  private isDone(record: StreamRecord): boolean {
    const progress = this.state.partitions[record.partition];
    return progress !== undefined && (!sequenceBefore(progress.last, record.sequence) || progress.done.includes(record.sequence));
  }

  private place(changes: readonly UnplacedChange[]): void {
    for (const change of changes) this.changes.push({ ...change, position: ++this.state.head, loggedAt: this.options.now() });
  }

  /** Writes what is planned so far as one transaction if `more` items might not fit beside it. */
  private room(more: number): void {
    if (1 + this.changes.length + this.marksToDelete.length + more > MAX_COMMIT_ITEMS) this.flush();
  }

  private flush(): void {
    const touched = this.noteProgress();
    if (this.changes.length === 0 && this.marksToDelete.length === 0 && !touched && !this.dirty) return;
    this.dirty = false;
    this.state.version++;
    this.commits.push({ state: structuredClone(this.state), changes: this.changes, marks: this.marksToDelete });
    this.changes = [];
    this.marksToDelete = [];
  }

  /** Sets each partition's progress from the records processed so far; whether it moved. */
  private noteProgress(): boolean {
    let moved = false;
    const now = this.options.now();
    for (const partition of new Set(this.records.map((record) => record.partition))) {
      const before = this.state.partitions[partition];
      const progress = before ? { ...before, done: [...before.done] } : { last: '0', done: [], touched: now };
      let prefix = true;
      for (const record of this.records) {
        if (record.partition !== partition) continue;
        const done = this.processed.has(record.sequence) || this.skipped.has(record.sequence);
        if (!done) prefix = false;
        else if (prefix) {
          if (sequenceBefore(progress.last, record.sequence)) progress.last = record.sequence;
        } else if (!progress.done.includes(record.sequence)) progress.done.push(record.sequence);
      }
      progress.done = progress.done.filter((sequence) => sequenceBefore(progress.last, sequence));
      if (!before || before.last !== progress.last || before.done.length !== progress.done.length) {
        progress.touched = now;
        this.state.partitions[partition] = progress;
        moved = true;
      }
    }
    return moved;
  }
}

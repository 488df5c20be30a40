import { type ChangeLog, EMPTY_STATE, type LoggedChange, type MarkKey, type MoveMark, type SequencerState, markKey } from '../../functions/core/changes/change-log';

/**
 * The `changes` table in memory, with the conditions of the DynamoDB adapter. `pause`, when given, is awaited
 * before each call takes effect and between the halves of a commit's changes becoming visible, so a test can
 * interleave concurrent sequencers and readers, and a read can see part of a committing transaction (as a
 * DynamoDB `Query` may).
 */
export class MemoryChangeLog implements ChangeLog {
  readonly states = new Map<string, SequencerState>();
  readonly logs = new Map<string, Map<number, LoggedChange>>();
  readonly marks = new Map<string, Map<string, MoveMark>>();
  /** Commits made (each one transaction), for tests to count. */
  commits = 0;

  constructor(private readonly pause: (label: string) => Promise<void> = async () => {}) {}

  /** Writes a move mark, as `FileRecords.move`'s transaction does. */
  putMark(drive: string, mark: MoveMark): void {
    if (!this.marks.has(drive)) this.marks.set(drive, new Map());
    this.marks.get(drive)!.set(markKey(mark), { ...mark });
  }

  async readState(drive: string): Promise<SequencerState> {
    await this.pause('readState');
    return structuredClone(this.states.get(drive) ?? EMPTY_STATE);
  }

  async readMarks(drive: string, keys: readonly MarkKey[]): Promise<Map<string, MoveMark>> {
    await this.pause('readMarks');
    const found = new Map<string, MoveMark>();
    for (const key of keys) {
      const mark = this.marks.get(drive)?.get(markKey(key));
      if (mark) found.set(markKey(key), { ...mark });
    }
    return found;
  }

  async commit(drive: string, state: SequencerState, changes: readonly LoggedChange[], marks: readonly MarkKey[]): Promise<boolean> {
    await this.pause('commit');
    if (1 + changes.length + marks.length > 100) throw new Error(`a transaction of ${1 + changes.length + marks.length} items`);
    const stored = this.states.get(drive) ?? EMPTY_STATE;
    if (stored.version !== state.version - 1) return false;
    const log = this.logs.get(drive) ?? new Map<number, LoggedChange>();
    this.logs.set(drive, log);
    // A put conditional on its position being free: a failure is a sequencer bug, not a race.
    for (const change of changes) if (log.has(change.position)) throw new Error(`position ${change.position} of ${drive} written twice`);
    this.commits++;
    this.states.set(drive, structuredClone(state));
    for (const mark of marks) this.marks.get(drive)?.delete(markKey(mark));
    // The transaction is committed (its condition held); readers see its changes in two steps, the later half first.
    const half = Math.floor(changes.length / 2);
    for (const change of changes.slice(half)) log.set(change.position, structuredClone(change));
    if (half > 0) {
      await this.pause('commit-visible');
      for (const change of changes.slice(0, half)) log.set(change.position, structuredClone(change));
    }
    return true;
  }

  async read(drive: string, after: number, limit: number): Promise<LoggedChange[]> {
    await this.pause('read');
    const log = this.logs.get(drive);
    if (!log) return [];
    return [...log.values()]
      .filter((change) => change.position > after)
      .sort((a, b) => a.position - b.position)
      .slice(0, limit)
      .map((change) => structuredClone(change));
  }

  async readBefore(drive: string, before: number | undefined, limit: number): Promise<{ changes: LoggedChange[]; more: boolean }> {
    await this.pause('readBefore');
    const older = [...(this.logs.get(drive)?.values() ?? [])].filter((change) => before === undefined || change.position < before).sort((a, b) => b.position - a.position);
    return { changes: older.slice(0, limit).map((change) => structuredClone(change)), more: older.length > limit };
  }

  async newest(drive: string): Promise<number> {
    await this.pause('newest');
    const positions = [...(this.logs.get(drive)?.keys() ?? [])];
    return positions.length === 0 ? 0 : Math.max(...positions);
  }
}

import type { DriveNode } from '../ports';

/** The kinds of change the feed gives (the contract), which a webhook may pick among. */
export const CHANGE_TYPES = ['file.created', 'file.replaced', 'file.deleted', 'file.moved', 'folder.created', 'folder.deleted', 'folder.moved'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/**
 * A change as the log holds it: its place in the drive's log (1, 2, 3… without gaps), what happened, where,
 * when, and the node as it stood after (before, for a delete). Rendered for clients at read time.
 */
export interface LoggedChange {
  position: number;
  type: ChangeType;
  path: string;
  /** The old path of a move. */
  from?: string;
  /** When the write happened (ISO 8601). */
  at: string;
  node: DriveNode;
  /** When the sequencer logged it (epoch ms): a hole before a change logged long ago is no commit in flight. */
  loggedAt: number;
}

/**
 * A node's image in the nodes table's stream: the node, and the attributes a move leaves on what it wrote
 * (`movedFrom`, `moveId` and `moveArrival` on a moved file record; `movedFrom` and `moveJob` on the folder a
 * folder move made; `ended: 'stopped'` as a stopped move unmarks a folder).
 */
export type NodeImage = DriveNode & { movedFrom?: string; moveId?: string; moveArrival?: string; moveJob?: string; ended?: 'stopped' };

/**
 * What tells one departure of a file from a path from another: its id, the path, and how it arrived there
 * (its record's `movedAt` then, empty if it never moved). A file that leaves a path, comes back and leaves
 * again before the sequencer has seen the first does so under two keys.
 */
export interface MarkKey {
  id: string;
  from: string;
  arrival: string;
}

/** One record of the nodes table's stream, as the sequencer is handed it. */
export interface StreamRecord {
  /**
   * The item's partition (`<drive>#<parent path>`), by which the sequencer notes how far it is: a Lambda
   * event does not name its shard, but a partition's records are in one shard, in order of their sequence
   * numbers (decimal digits, ordered as numbers).
   */
  partition: string;
  sequence: string;
  event: 'INSERT' | 'MODIFY' | 'REMOVE';
  drive: string;
  /** The item's path (its key). */
  path: string;
  old?: NodeImage;
  new?: NodeImage;
  /** When the write happened (the stream record's time, ISO 8601). */
  at: string;
}

/** A move's mark, written in the move's transaction: the sequencer pairs the move's two stream records by it. */
export interface MoveMark extends MarkKey {
  to: string;
  moveId: string;
}

/** One half of a move the sequencer has seen and waits to pair, holding its item's path. */
export interface MoveHalf {
  side: 'source' | 'destination';
  kind: 'file' | 'folder';
  /** The item held: later records of it wait for the pair. */
  held: string;
  from: string;
  to: string;
  /** The node as the half's record has it (the destination's new image; the source's old one). */
  node: DriveNode;
  /** The change the half makes alone if its pair never comes (`changesPairWaitSeconds`). */
  alone: ChangeType;
  at: string;
  /** When the sequencer noted it (epoch ms), for the pair wait. */
  since: number;
  /** The file's move mark, deleted when the pair is made. */
  mark?: MarkKey;
}

/** Where the sequencer is in one partition of the nodes table (its records come in one shard, in order). */
export interface PartitionProgress {
  /** Every record of the partition up to this sequence number is done. */
  last: string;
  /** Records after `last` done already (processed past one that waited for its pair). */
  done: string[];
  /** When this entry was last written (epoch ms): entries 25 hours old are dropped, their records past the stream's 24 hours. */
  touched: number;
}

/** The sequencer's state for one drive: the log's head, its version (the commit's condition), progress and halves. */
export interface SequencerState {
  head: number;
  version: number;
  partitions: Record<string, PartitionProgress>;
  halves: Record<string, MoveHalf>;
}

export const EMPTY_STATE: SequencerState = { head: 0, version: 0, partitions: {}, halves: {} };

/**
 * The `changes` table as the sequencer writes it and readers read it. Reads are strongly consistent, but a
 * read may see part of a transaction that is committing (DynamoDB's read-committed `Query`).
 */
export interface ChangeLog {
  /** The drive's sequencer state (or `EMPTY_STATE` for a drive with none yet). */
  readState(drive: string): Promise<SequencerState>;
  /** The move marks among `keys` that exist, by `markKey`. */
  readMarks(drive: string, keys: readonly MarkKey[]): Promise<Map<string, MoveMark>>;
  /**
   * In one transaction: `state` written if the stored one still has version `state.version - 1`, each change
   * put if its position is free, and the marks deleted. False, writing nothing, if another invocation wrote the
   * drive's state meanwhile. At most `MAX_COMMIT_ITEMS` items (the state, the changes and the marks).
   */
  commit(drive: string, state: SequencerState, changes: readonly LoggedChange[], marks: readonly MarkKey[]): Promise<boolean>;
  /** At most `limit` changes of the drive after `after`, in position order, as one consistent read finds them. */
  read(drive: string, after: number, limit: number): Promise<LoggedChange[]>;
  /** The last position the drive's log holds (0 if none). */
  newest(drive: string): Promise<number>;
  /**
   * In one call (one `Query`, newest first): at most `limit` changes of the drive before position `before`
   * (all, when undefined), in descending position order. DynamoDB may give fewer (its 1 MB page); `more` when
   * the log may hold older ones than those given.
   */
  readBefore(drive: string, before: number | undefined, limit: number): Promise<{ changes: LoggedChange[]; more: boolean }>;
}

/** DynamoDB's limit of items in one transaction. */
export const MAX_COMMIT_ITEMS = 100;

/** The key a move mark is found by. */
export function markKey(mark: MarkKey): string {
  return `${mark.id}\u0000${mark.from}\u0000${mark.arrival}`;
}

/** How long a transaction can be caught committing: a hole before a change logged longer ago is for good (the TTL's). */
export const COMMIT_VISIBLE_MS = 60_000;

/**
 * What `readChanges` found: the changes after the position asked for, as far as the log is contiguous, and the
 * position to read from next. `expired` when the change after `after` is gone for good while later ones stand
 * (the TTL took it): the reader's answer is `410 cursor_expired`.
 */
export type ChangeRead = { changes: LoggedChange[]; position: number; expired?: false } | { expired: true; changes: []; position: number };

/**
 * The changes of `drive` after position `after`, at most `limit` of them, in order and without a gap: the
 * reading port the feed's routes and the webhooks' dispatcher share. A hole (a transaction caught committing)
 * ends the read before it; the next read finds it filled.
 */
export async function readChanges(log: ChangeLog, drive: string, after: number, limit: number, now = Date.now()): Promise<ChangeRead> {
  const found = await log.read(drive, after, limit);
  const changes: LoggedChange[] = [];
  for (const change of found) {
    if (change.position !== after + changes.length + 1) break;
    changes.push(change);
  }
  // Position after + 1 is missing where later ones stand: a transaction caught committing (the next read finds
  // it), unless the change after the hole was logged too long ago for that: then the TTL took it. (No call
  // more: a request's calls stay the same whatever the log holds.)
  if (changes.length === 0 && found.length > 0 && found[0].loggedAt < now - COMMIT_VISIBLE_MS) return { expired: true, changes: [], position: after };
  return { changes, position: changes.at(-1)?.position ?? after };
}

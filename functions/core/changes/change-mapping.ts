import type { DriveNode } from '../ports';
import { type ChangeType, type LoggedChange, type MarkKey, type MoveHalf, type MoveMark, type NodeImage, type StreamRecord, markKey } from './change-log';

/** A change before the sequencer gives it a position. */
export type UnplacedChange = Omit<LoggedChange, 'position' | 'loggedAt'>;

/** What one stream record makes: changes (none, for a write no reader would notice), or one half of a move. */
export type Mapped = { changes: UnplacedChange[] } | { pairKey: string; half: Omit<MoveHalf, 'since'> };

/** The pair key of a file move's halves: its mark's key. */
export function filePairKey(mark: MarkKey): string {
  return `file\u0000${markKey(mark)}`;
}

/** The pair key of a folder move's halves: the job and the folder's old path, known at both ends. */
export function folderPairKey(job: string, from: string): string {
  return `folder\u0000${job}\u0000${from}`;
}

/**
 * The change a stream record of the nodes table makes, from its images and the move marks found for it
 * (docs/change-feed-design.md, "How a write becomes a change"); a pure function.
 */
export function mapRecord(record: StreamRecord, marks: ReadonlyMap<string, MoveMark>): Mapped {
  const { old: before, new: after } = record;
  if (after?.kind === 'file') return mapFileWrite(record, after, before, marks);
  if (after?.kind === 'folder') return mapFolderWrite(record, after, before);
  if (before?.kind === 'file') {
    const key = { id: before.id, from: before.path, arrival: before.movedAt ?? '' };
    const mark = marks.get(markKey(key));
    if (mark) return { pairKey: filePairKey(key), half: { side: 'source', kind: 'file', held: record.path, from: before.path, to: mark.to, node: plain(before), at: record.at, alone: 'file.deleted', mark: key } };
    return one('file.deleted', before.path, plain(before), record.at);
  }
  if (before?.kind === 'folder') {
    if (before.moving !== undefined && before.moveJob === before.moving) return { changes: [] }; // a refused move's destination: never shown
    if (before.moving !== undefined) {
      return { pairKey: folderPairKey(before.moving, before.path), half: { side: 'source', kind: 'folder', held: record.path, from: before.path, to: '', node: plain(before), at: record.at, alone: 'folder.deleted' } };
    }
    return one('folder.deleted', before.path, plain(before), record.at);
  }
  return { changes: [] };
}

function mapFileWrite(record: StreamRecord, after: NodeImage & { kind: 'file' }, before: NodeImage | undefined, marks: ReadonlyMap<string, MoveMark>): Mapped {
  const replacing = before?.kind === 'file' ? 'file.replaced' : 'file.created';
  const changes: UnplacedChange[] = before?.kind === 'folder' ? [change('folder.deleted', before.path, plain(before), record.at)] : [];
  if (after.moveId !== undefined && after.movedFrom !== undefined && after.moveId !== before?.moveId) {
    const key = { id: after.id, from: after.movedFrom, arrival: after.moveArrival ?? '' };
    const mark = marks.get(markKey(key));
    if (mark?.moveId === after.moveId && changes.length === 0) {
      return { pairKey: filePairKey(key), half: { side: 'destination', kind: 'file', held: record.path, from: after.movedFrom, to: after.path, node: plain(after), at: record.at, alone: replacing, mark: key } };
    }
  }
  // The same record written again (an SDK retry, a `pending` note): nothing a reader would see.
  if (before?.kind === 'file' && before.id === after.id) return { changes: [] };
  changes.push(change(replacing, after.path, plain(after), after.movedAt ?? after.createdAt));
  return { changes };
}

function mapFolderWrite(record: StreamRecord, after: NodeImage & { kind: 'folder' }, before: NodeImage | undefined): Mapped {
  if (before?.kind === 'folder' && before.id === after.id) {
    const job = before.moving;
    // The end of a move's level: the job's own mark cleared from the folder it made.
    if (job !== undefined && after.moving === undefined && after.moveJob === job && after.movedFrom !== undefined) {
      if (after.ended === 'stopped') return one('folder.created', after.path, plain(after), record.at);
      return { pairKey: folderPairKey(job, after.movedFrom), half: { side: 'destination', kind: 'folder', held: record.path, from: after.movedFrom, to: after.path, node: plain(after), at: record.at, alone: 'folder.created' } };
    }
    // Marks set or cleared, `kept` noted, the same folder written again: nothing a reader would see.
    return { changes: [] };
  }
  const changes: UnplacedChange[] = [];
  if (before) changes.push(change(before.kind === 'file' ? 'file.deleted' : 'folder.deleted', before.path, plain(before), record.at));
  // A move's destination shows when its level is done (above); a folder made anew, now.
  if (after.moving === undefined) changes.push(change('folder.created', after.path, plain(after), after.createdAt));
  return { changes };
}

/** The node without the stream's bookkeeping attributes or its marks. */
export function plain(image: NodeImage): DriveNode {
  if (image.kind === 'folder') return { kind: 'folder', id: image.id, path: image.path, createdAt: image.createdAt };
  const { movedFrom: _a, moveId: _b, moveArrival: _f, moveJob: _c, ended: _d, pending: _e, ...file } = image as NodeImage & { kind: 'file' };
  return file;
}

function change(type: ChangeType, path: string, node: DriveNode, at: string, from?: string): UnplacedChange {
  return { type, path, ...(from !== undefined ? { from } : {}), at, node };
}

function one(type: ChangeType, path: string, node: DriveNode, at: string): Mapped {
  return { changes: [change(type, path, node, at)] };
}

/** The change a pair of halves makes: a move from the source's path to the destination's, as the destination stands. */
export function pairChange(first: Omit<MoveHalf, 'since'>, second: Omit<MoveHalf, 'since'>): UnplacedChange {
  const destination = first.side === 'destination' ? first : second;
  return change(destination.kind === 'file' ? 'file.moved' : 'folder.moved', destination.to, destination.node, destination.at, destination.from);
}

/** The change a half makes alone, its pair having waited too long. */
export function aloneChange(half: Omit<MoveHalf, 'since'>): UnplacedChange {
  return half.side === 'source' ? change(half.alone, half.from, half.node, half.at) : change(half.alone, half.to, half.node, half.at);
}

import type { MoveMark, NodeImage, StreamRecord } from '../../../functions/core/changes/change-log';
import { markKey } from '../../../functions/core/changes/change-log';
import { type Mapped, mapRecord } from '../../../functions/core/changes/change-mapping';

// docs/change-feed-design.md, "How a write becomes a change": each row of its table.

const AT = '2026-11-27T10:00:00.000Z';
const file = (path: string, id = 'f1', extra: Partial<NodeImage> = {}): NodeImage =>
  ({ kind: 'file', id, path, size: 3, contentType: 'text/plain', createdAt: '2026-11-27T09:00:00.000Z', objectKey: `k-${id}`, etag: `e-${id}`, ...extra }) as NodeImage;
const folder = (path: string, id = 'd1', extra: Partial<NodeImage> = {}): NodeImage => ({ kind: 'folder', id, path, createdAt: '2026-11-27T09:00:00.000Z', ...extra }) as NodeImage;

function record(event: StreamRecord['event'], path: string, old?: NodeImage, next?: NodeImage): StreamRecord {
  return { partition: 'd#/', sequence: '1', event, drive: 'd', path, ...(old ? { old } : {}), ...(next ? { new: next } : {}), at: AT };
}

const types = (mapped: Mapped) => ('changes' in mapped ? mapped.changes.map((change) => `${change.type} ${change.from ?? ''}${change.from ? '>' : ''}${change.path}`) : [`half ${mapped.half.side}`]);
const noMarks = new Map<string, MoveMark>();
const marks = (...list: MoveMark[]) => new Map(list.map((mark) => [markKey(mark), mark]));

describe('mapRecord', () => {
  describe('files', () => {
    it('makes an INSERT file.created, with the record as it stands', () => {
      const mapped = mapRecord(record('INSERT', '/a/x', undefined, file('/a/x', 'f1', { pending: 'u1' })), noMarks);
      expect(types(mapped)).toEqual(['file.created /a/x']);
      expect('changes' in mapped && mapped.changes[0].node).toEqual(file('/a/x'));
    });

    it('makes a MODIFY to another id file.replaced, and one to the same id nothing', () => {
      expect(types(mapRecord(record('MODIFY', '/a/x', file('/a/x', 'f1'), file('/a/x', 'f2')), noMarks))).toEqual(['file.replaced /a/x']);
      expect(types(mapRecord(record('MODIFY', '/a/x', file('/a/x', 'f1', { pending: 'u1' }), file('/a/x', 'f1')), noMarks))).toEqual([]);
    });

    it('makes a REMOVE without a mark file.deleted, with the record as it stood', () => {
      const mapped = mapRecord(record('REMOVE', '/a/x', file('/a/x')), noMarks);
      expect(types(mapped)).toEqual(['file.deleted /a/x']);
      expect('changes' in mapped && mapped.changes[0]).toMatchObject({ at: AT, node: { id: 'f1' } });
    });

    it('makes both records of a marked move halves with one pair key, and the mark found by how the file arrived', () => {
      const mark: MoveMark = { id: 'f1', from: '/a/x', arrival: '2026-11-27T09:30:00.000Z', to: '/b/x', moveId: 'm2' };
      const source = mapRecord(record('REMOVE', '/a/x', file('/a/x', 'f1', { movedAt: mark.arrival, moveId: 'm1' })), marks(mark));
      const destination = mapRecord(record('INSERT', '/b/x', undefined, file('/b/x', 'f1', { movedAt: AT, movedFrom: '/a/x', moveId: 'm2', moveArrival: mark.arrival })), marks(mark));
      expect('pairKey' in source && 'pairKey' in destination && source.pairKey === destination.pairKey).toBe(true);
      expect('half' in source && source.half).toMatchObject({ side: 'source', held: '/a/x', from: '/a/x', to: '/b/x', alone: 'file.deleted' });
      expect('half' in destination && destination.half).toMatchObject({ side: 'destination', held: '/b/x', from: '/a/x', to: '/b/x', alone: 'file.created' });
    });

    it('does not take a later write of a moved record, or a removal under another arrival, for a move', () => {
      const mark: MoveMark = { id: 'f1', from: '/a/x', arrival: '', to: '/b/x', moveId: 'm2' };
      const moved = file('/b/x', 'f1', { movedAt: AT, movedFrom: '/a/x', moveId: 'm2', moveArrival: '' });
      // The same moved record noted again (its moveId unchanged); an undo's put back of it without its mark.
      expect(types(mapRecord(record('MODIFY', '/b/x', moved, { ...moved, pending: 'u9' } as NodeImage), marks(mark)))).toEqual([]);
      expect(types(mapRecord(record('INSERT', '/b/x', undefined, moved), noMarks))).toEqual(['file.created /b/x']);
      expect(types(mapRecord(record('REMOVE', '/a/x', file('/a/x', 'f1', { movedAt: 'another time' })), marks(mark)))).toEqual(['file.deleted /a/x']);
    });

    it('makes a marked move over a file a half that is file.replaced alone', () => {
      const mark: MoveMark = { id: 'f1', from: '/a/x', arrival: '', to: '/b/x', moveId: 'm2' };
      const mapped = mapRecord(record('MODIFY', '/b/x', file('/b/x', 'f9'), file('/b/x', 'f1', { movedFrom: '/a/x', moveId: 'm2' })), marks(mark));
      expect('half' in mapped && mapped.half.alone).toBe('file.replaced');
    });
  });

  describe('folders', () => {
    it('makes an INSERT of an unmarked folder folder.created, and of a move destination nothing yet', () => {
      expect(types(mapRecord(record('INSERT', '/a', undefined, folder('/a')), noMarks))).toEqual(['folder.created /a']);
      expect(types(mapRecord(record('INSERT', '/b', undefined, folder('/b', 'd2', { moving: 'J', moveJob: 'J', movedFrom: '/a' })), noMarks))).toEqual([]);
    });

    it('makes nothing of marks set or cleared, or kept noted', () => {
      expect(types(mapRecord(record('MODIFY', '/a', folder('/a'), folder('/a', 'd1', { deleting: 'recursive' })), noMarks))).toEqual([]);
      expect(types(mapRecord(record('MODIFY', '/a', folder('/a'), folder('/a', 'd1', { moving: 'J' })), noMarks))).toEqual([]);
      expect(types(mapRecord(record('MODIFY', '/a', folder('/a', 'd1', { moving: 'J' }), folder('/a')), noMarks))).toEqual([]);
      expect(types(mapRecord(record('MODIFY', '/a', folder('/a'), folder('/a', 'd1', { kept: true })), noMarks))).toEqual([]);
    });

    it("makes the job's unmark of the folder it made a destination half, or folder.created once the job stopped", () => {
      const before = folder('/b', 'd2', { moving: 'J', moveJob: 'J', movedFrom: '/a' });
      const after = folder('/b', 'd2', { moveJob: 'J', movedFrom: '/a' });
      const half = mapRecord(record('MODIFY', '/b', before, after), noMarks);
      expect('half' in half && half.half).toMatchObject({ side: 'destination', kind: 'folder', from: '/a', to: '/b' });
      expect(types(mapRecord(record('MODIFY', '/b', before, { ...after, ended: 'stopped' } as NodeImage), noMarks))).toEqual(['folder.created /b']);
      // Another job's unmark of a folder an old move made: no move.
      expect(types(mapRecord(record('MODIFY', '/b', { ...after, moving: 'K' } as NodeImage, after), noMarks))).toEqual([]);
    });

    it("makes the REMOVE of a move's source the other half, of a refused move's destination nothing, of any other folder folder.deleted", () => {
      const source = mapRecord(record('REMOVE', '/a', folder('/a', 'd1', { moving: 'J' })), noMarks);
      const destination = mapRecord(record('MODIFY', '/b', folder('/b', 'd2', { moving: 'J', moveJob: 'J', movedFrom: '/a' }), folder('/b', 'd2', { moveJob: 'J', movedFrom: '/a' })), noMarks);
      expect('pairKey' in source && 'pairKey' in destination && source.pairKey === destination.pairKey).toBe(true);
      expect(types(mapRecord(record('REMOVE', '/b', folder('/b', 'd2', { moving: 'J', moveJob: 'J' })), noMarks))).toEqual([]);
      expect(types(mapRecord(record('REMOVE', '/a', folder('/a', 'd1', { deleting: 'recursive' })), noMarks))).toEqual(['folder.deleted /a']);
    });
  });
});

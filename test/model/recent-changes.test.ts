import type { Caller } from '../../functions/core/access';
import { COMMIT_VISIBLE_MS, EMPTY_STATE, type LoggedChange } from '../../functions/core/changes/change-log';
import { decodeRecentPage, encodeRecentPage, RECENT_QUERIES, RECENT_SCAN, recentChanges } from '../../functions/core/changes/recent';
import { MemoryChangeLog } from './memory-change-log';

// GET /drive/changes/recent's read of the log (functions/core/changes/recent.ts) on the in-memory log: newest
// first, confined, paged without a change lost or repeated, and a bounded count of queries whatever the log holds.

const NOW = Date.parse('2026-03-02T09:30:00Z');
const DRIVE = 'd';
const admin: Caller = { keyId: 'k', drive: DRIVE, role: 'admin', prefix: '/' };
const team: Caller = { keyId: 't', drive: DRIVE, role: 'read-only', prefix: '/team' };

function change(position: number, path: string, loggedAt = NOW - 10 * COMMIT_VISIBLE_MS, from?: string): LoggedChange {
  const node = { kind: 'file' as const, id: `f${position}`, path, size: 1, contentType: 'text/plain', etag: 'e', createdAt: '2026-03-02T09:00:00Z', modifiedAt: '2026-03-02T09:00:00Z' } as unknown as LoggedChange['node'];
  return { position, type: from ? 'file.moved' : 'file.created', path, ...(from ? { from } : {}), at: '2026-03-02T09:00:00Z', node, loggedAt };
}

/** A log holding `changes`, committed in one transaction each (so holes are whatever `changes` leaves out). */
async function logOf(changes: LoggedChange[]): Promise<MemoryChangeLog> {
  const log = new MemoryChangeLog();
  log.logs.set(DRIVE, new Map(changes.map((c) => [c.position, c])));
  log.states.set(DRIVE, { ...structuredClone(EMPTY_STATE), head: Math.max(0, ...changes.map((c) => c.position)), version: 1 });
  return log;
}

/** A log counting its `readBefore` calls and the items they asked for. */
function counted(log: MemoryChangeLog) {
  const calls: number[] = [];
  const readBefore = log.readBefore.bind(log);
  log.readBefore = async (drive, before, limit) => {
    calls.push(limit);
    return readBefore(drive, before, limit);
  };
  return calls;
}

/** Every page of `subtree` from the newest, as a reader paging with `next_before` gets them. */
async function allPages(log: MemoryChangeLog, caller: Caller, subtree: string, limit: number) {
  const positions: number[] = [];
  let page = await recentChanges(log, caller, { subtree }, { limit, now: NOW });
  const first = page.cursor.position;
  for (let i = 0; i < 1000; i++) {
    positions.push(...page.changes.map((c) => c.position));
    if (!page.next) break;
    // The token travels as text, as a client holds it.
    page = await recentChanges(log, caller, { page: decodeRecentPage(encodeRecentPage(page.next)) }, { limit, now: NOW });
  }
  return { positions, first };
}

describe('recentChanges', () => {
  it('gives the newest first, at most limit, and pages back through all of them once', async () => {
    const log = await logOf(Array.from({ length: 25 }, (_, i) => change(i + 1, `/a/${i + 1}.txt`)));
    const page = await recentChanges(log, admin, { subtree: '/' }, { limit: 10, now: NOW });
    expect(page.changes.map((c) => c.position)).toEqual([25, 24, 23, 22, 21, 20, 19, 18, 17, 16]);
    expect(page.cursor.position).toBe(25);
    expect(page.next?.before).toBe(16);
    const { positions } = await allPages(log, admin, '/', 10);
    expect(positions).toEqual(Array.from({ length: 25 }, (_, i) => 25 - i));
  });

  it("keeps to the folder: another folder's changes are passed; a move in is a creation, a move out a deletion", async () => {
    const log = await logOf([change(1, '/team/a.txt'), change(2, '/other/b.txt'), change(3, '/team/b.txt', undefined, '/other/b.txt'), change(4, '/other/a.txt', undefined, '/team/a.txt'), change(5, '/teams/x.txt')]);
    const page = await recentChanges(log, team, { subtree: '/team' }, { limit: 20, now: NOW });
    expect(page.changes.map((c) => [c.position, c.type, c.path, c.from])).toEqual([
      [4, 'file.deleted', '/team/a.txt', undefined],
      [3, 'file.created', '/team/b.txt', undefined],
      [1, 'file.created', '/team/a.txt', undefined],
    ]);
    expect(page.next).toBeUndefined();
    await expect(recentChanges(log, team, { subtree: '/' }, { limit: 20, now: NOW })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(recentChanges(log, team, { page: { drive: DRIVE, subtree: '/other', before: 3, loggedAt: NOW } }, { limit: 20, now: NOW })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(recentChanges(log, { ...admin, drive: 'e' }, { page: { drive: DRIVE, subtree: '/', before: 3, loggedAt: NOW } }, { limit: 20, now: NOW })).rejects.toMatchObject({ code: 'validation_error' });
  });

  it(`reads at most ${RECENT_QUERIES} queries and ${RECENT_SCAN} items a request, however sparse the folder's changes`, async () => {
    // 3,000 changes, one in 700 in /rare: a request reads on until its scan ends, then says where to go on.
    const log = await logOf(Array.from({ length: 3000 }, (_, i) => change(i + 1, (i + 1) % 700 === 0 ? `/rare/${i + 1}` : `/busy/${i + 1}`)));
    const calls = counted(log);
    const page = await recentChanges(log, admin, { subtree: '/rare' }, { limit: 20, now: NOW });
    expect(calls).toEqual([20, RECENT_SCAN - 20]);
    expect(page.changes.map((c) => c.position)).toEqual([2800, 2100]);
    expect(page.next?.before).toBe(3000 - RECENT_SCAN + 1);
    const { positions } = await allPages(log, admin, '/rare', 20);
    expect(positions).toEqual([2800, 2100, 1400, 700]);
    // A reader of everything needs one query of `limit` items.
    calls.length = 0;
    await recentChanges(log, admin, { subtree: '/' }, { limit: 20, now: NOW });
    expect(calls).toEqual([20]);
  });

  it('ends a page above a hole that a committing transaction leaves, and gives the change on the next page', async () => {
    // 1-10 logged long ago; 11-14 committing now: 13 and 14 visible, 11 and 12 not yet.
    const fresh = (p: number) => change(p, `/a/${p}`, NOW - 100);
    const log = await logOf([...Array.from({ length: 10 }, (_, i) => change(i + 1, `/a/${i + 1}`)), fresh(13), fresh(14)]);
    const page = await recentChanges(log, admin, { subtree: '/' }, { limit: 20, now: NOW });
    expect(page.changes.map((c) => c.position)).toEqual([14, 13]);
    expect(page.next?.before).toBe(13);
    // The commit lands; the next page starts where the last ended.
    log.logs.get(DRIVE)!.set(11, fresh(11));
    log.logs.get(DRIVE)!.set(12, fresh(12));
    const older = await recentChanges(log, admin, { page: decodeRecentPage(encodeRecentPage(page.next!)) }, { limit: 20, now: NOW });
    expect(older.changes.map((c) => c.position)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(older.next).toBeUndefined();
  });

  it('passes a hole below a change logged long ago (the TTL took it), on the page and at its start', async () => {
    const log = await logOf([1, 2, 4, 5, 7, 8].map((p) => change(p, `/a/${p}`)));
    const { positions } = await allPages(log, admin, '/', 2);
    expect(positions).toEqual([8, 7, 5, 4, 2, 1]);
  });

  it('gives a feed cursor at the newest position read (0 for an empty log), and none older', async () => {
    const empty = await recentChanges(await logOf([]), admin, { subtree: '/team' }, { limit: 5, now: NOW });
    expect(empty).toEqual({ changes: [], cursor: { drive: DRIVE, subtree: '/team', position: 0, at: Math.floor(NOW / 1000) } });
    const log = await logOf([change(1, '/x/1'), change(2, '/x/2')]);
    const page = await recentChanges(log, admin, { subtree: '/team' }, { limit: 5, now: NOW });
    expect(page).toEqual({ changes: [], cursor: { drive: DRIVE, subtree: '/team', position: 2, at: Math.floor(NOW / 1000) } });
  });

  it('refuses a page token it did not give, and a feed cursor as one', () => {
    for (const text of ['x', Buffer.from('{"v":1,"k":"recent","d":"d","p":"/","b":0,"l":1}').toString('base64url'), Buffer.from('{"v":1,"d":"d","p":"/","s":4,"t":1}').toString('base64url')]) {
      expect(() => decodeRecentPage(text)).toThrow('before is not a page this route gave');
    }
  });
});

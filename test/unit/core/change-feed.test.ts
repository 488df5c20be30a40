import type { Caller } from '../../../functions/core/access';
import type { LoggedChange } from '../../../functions/core/changes/change-log';
import { decodeCursor, encodeCursor, inSubtree, latestCursor, readFeed } from '../../../functions/core/changes/feed';
import { MemoryChangeLog } from '../../model/memory-change-log';

// The feed's reads over the log in memory, with a clock the test drives: expiry, scope, long poll.

const DAY = 86_400;
const caller: Caller = { keyId: 'k', drive: 'd', role: 'read-only', prefix: '/' };
const file = (path: string, id = 'f') => ({ kind: 'file' as const, id, path, size: 1, contentType: 'text/plain', createdAt: 'c', objectKey: 'o', etag: 'e' });

/** A clock that moves only when the feed sleeps, running `onSleep` at each sleep. */
function fakeClock(start: number, onSleep: (now: number) => void = () => undefined) {
  let now = start;
  return { now: () => now, sleep: async (ms: number) => { now += ms; onSleep(now); } };
}

async function append(log: MemoryChangeLog, ...changes: Omit<LoggedChange, 'position' | 'loggedAt'>[]): Promise<void> {
  const state = await log.readState('d');
  const placed = changes.map((change, i) => ({ ...change, position: state.head + i + 1, loggedAt: 0 }));
  await log.commit('d', { ...state, head: state.head + changes.length, version: state.version + 1 }, placed, []);
}

const options = (clock: ReturnType<typeof fakeClock>, extra: Partial<Parameters<typeof readFeed>[3]> = {}) => ({ limit: 100, timeoutMs: 0, deadline: Number.MAX_SAFE_INTEGER, retentionSeconds: 7 * DAY, clock, ...extra });

describe('the change feed', () => {
  it('round-trips a cursor and refuses one it never gave with a 422', () => {
    const cursor = { drive: 'd', subtree: '/a', position: 12, at: 1_700_000_000 };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    for (const bad of ['garbage', Buffer.from('{"v":2}').toString('base64url'), Buffer.from('{"v":1,"d":"d","p":"x","s":1,"t":1}').toString('base64url')]) {
      expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ code: 'validation_error' }) as unknown as Error);
    }
  });

  it('answers a cursor older than the retention 410, by its own time, and one a day younger in full', async () => {
    const log = new MemoryChangeLog();
    const clock = fakeClock(10 * DAY * 1000);
    const cursor = await latestCursor(log, caller, '/', clock);
    await append(log, { type: 'file.created', path: '/x', at: 'a', node: file('/x') });
    const later = fakeClock((10 + 7) * DAY * 1000);
    expect((await readFeed(log, caller, cursor, options(later))).changes).toHaveLength(1);
    const tooLate = fakeClock((10 + 7) * DAY * 1000 + 1001);
    await expect(readFeed(log, caller, cursor, options(tooLate))).rejects.toMatchObject({ code: 'cursor_expired', status: 410 });
  });

  it('answers 410 when the change after the cursor is gone for good while later ones stand (the TTL took it)', async () => {
    const log = new MemoryChangeLog();
    await append(log, { type: 'file.created', path: '/x', at: 'a', node: file('/x') }, { type: 'file.deleted', path: '/x', at: 'a', node: file('/x') });
    log.logs.get('d')!.delete(1);
    // Logged (at 0) a minute before: no transaction is still committing position 1.
    const clock = fakeClock(60_001);
    await expect(readFeed(log, caller, { drive: 'd', subtree: '/', position: 0, at: 60 }, options(clock))).rejects.toMatchObject({ code: 'cursor_expired' });
    expect((await readFeed(log, caller, { drive: 'd', subtree: '/', position: 1, at: 60 }, options(clock))).changes.map((change) => change.position)).toEqual([2]);
    // Logged just now: a commit caught midway, read as nothing yet.
    expect((await readFeed(log, caller, { drive: 'd', subtree: '/', position: 0, at: 0 }, options(fakeClock(1000)))).changes).toEqual([]);
  });

  it('keeps the position and renews the time when nothing came, and waits for a change when asked', async () => {
    const log = new MemoryChangeLog();
    const start = { drive: 'd', subtree: '/', position: 0, at: 0 };
    const empty = await readFeed(log, caller, start, options(fakeClock(5000)));
    expect(empty).toEqual({ changes: [], next: { ...start, at: 5 }, hasMore: false });
    // A change arrives after 2 s of a 25 s long poll: answered then, not at the end.
    let arrived = false;
    const clock = fakeClock(0, (now) => {
      if (now >= 2000 && !arrived) {
        arrived = true;
        void append(log, { type: 'file.created', path: '/x', at: 'a', node: file('/x') });
      }
    });
    const page = await readFeed(log, caller, start, options(clock, { timeoutMs: 25_000 }));
    expect(page.changes.map((change) => change.path)).toEqual(['/x']);
    expect(clock.now()).toBeLessThan(3000);
    // Nothing comes: an empty answer at the timeout, or before the deadline if that is sooner.
    const idle = fakeClock(0);
    expect((await readFeed(log, caller, { ...start, position: 1 }, options(idle, { timeoutMs: 25_000 }))).changes).toEqual([]);
    expect(idle.now()).toBeGreaterThanOrEqual(24_750);
    const short = fakeClock(0);
    await readFeed(log, caller, { ...start, position: 1 }, options(short, { timeoutMs: 25_000, deadline: 1000 }));
    expect(short.now()).toBeLessThanOrEqual(1000);
  });

  it('stops at limit with has_more, and a subtree\'s follower passes the rest of the drive', async () => {
    const log = new MemoryChangeLog();
    for (let i = 0; i < 5; i++) await append(log, { type: 'file.created', path: `/other/${i}`, at: 'a', node: file(`/other/${i}`) }, { type: 'file.created', path: `/team/${i}`, at: 'a', node: file(`/team/${i}`) });
    const team: Caller = { ...caller, prefix: '/team' };
    const page = await readFeed(log, team, { drive: 'd', subtree: '/team', position: 0, at: 0 }, options(fakeClock(0), { limit: 3 }));
    expect(page.changes.map((change) => change.path)).toEqual(['/team/0', '/team/1', '/team/2']);
    expect(page).toMatchObject({ hasMore: true, next: { position: 6 } });
    await expect(readFeed(log, team, { drive: 'd', subtree: '/', position: 0, at: 0 }, options(fakeClock(0)))).rejects.toMatchObject({ status: 403 });
    await expect(readFeed(log, caller, { drive: 'other', subtree: '/', position: 0, at: 0 }, options(fakeClock(0)))).rejects.toMatchObject({ status: 422 });
  });

  it('shows a move into the subtree as created, out of it as deleted at its old path, and one outside not at all', () => {
    const move = (from: string, to: string): LoggedChange => ({ position: 1, type: 'file.moved', path: to, from, at: 'a', node: file(to), loggedAt: 0 });
    expect(inSubtree(move('/team/a', '/team/b'), '/team')).toMatchObject({ type: 'file.moved', from: '/team/a', path: '/team/b' });
    expect(inSubtree(move('/other/a', '/team/a'), '/team')).toEqual({ position: 1, type: 'file.created', path: '/team/a', at: 'a', node: file('/team/a'), loggedAt: 0 });
    expect(inSubtree(move('/team/a', '/other/a'), '/team')).toEqual({ position: 1, type: 'file.deleted', path: '/team/a', at: 'a', node: file('/team/a'), loggedAt: 0 });
    expect(inSubtree(move('/other/a', '/other/b'), '/team')).toBeUndefined();
    expect(inSubtree(move('/teams/a', '/teams/b'), '/team')).toBeUndefined();
  });
});

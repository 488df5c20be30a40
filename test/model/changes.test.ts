import { type ChangeLog, type LoggedChange, type NodeImage, type StreamRecord, readChanges } from '../../functions/core/changes/change-log';
import { sequenceBatch, settleHalves } from '../../functions/core/changes/sequencer';
import type { FileNode } from '../../functions/core/ports';
import { MemoryChangeLog } from './memory-change-log';

// The sequencer against a model of DynamoDB Streams: writes to a nodes table make stream records, split by
// partition into 1-4 shards (each item's records in order, a move's two halves apart), delivered in batches
// by one poller a shard running at once, with sequencer deaths before and after a commit and Lambda's retries,
// while a follower reads the log (seeing part of a committing transaction at times). Property: the follower
// gets every change once, and each path's changes in the order they were made.

/** mulberry32: a seeded generator of numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A change as the test compares it: what happened, where, to which file. */
const key = (change: { type: string; path: string; from?: string; id: string }) => `${change.type} ${change.from ?? ''}>${change.path} ${change.id}`;

type Mark = { drive: string; id: string; from: string; arrival: string; to: string; moveId: string };

interface World {
  shards: StreamRecord[][];
  /** The move marks the moves wrote (in the changes table, in the move's transaction). */
  marks: Mark[];
  /** The changes the writes made, in the order made (the test's single writer makes them one at a time). */
  expected: { drive: string; type: string; path: string; from?: string; id: string }[];
}

const DRIVES = ['d', 'e'];
const PATHS = ['/a/1', '/a/2', '/b/1', '/b/2', '/c/1'];

/** Makes `operations` random file writes, deletes and moves on a model nodes table, with their stream. */
function makeWorld(next: () => number, operations: number): World {
  const shardCount = 1 + Math.floor(next() * 4);
  const shards: StreamRecord[][] = Array.from({ length: shardCount }, () => []);
  const items = new Map<string, NodeImage>();
  const expected: World['expected'] = [];
  const marks: Mark[] = [];
  let sequence = 0;
  let ids = 0;
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)];
  const shardOf = (drive: string, path: string) => {
    const partition = `${drive}#${path.slice(0, path.lastIndexOf('/'))}`;
    return [...partition].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) >>> 0, 7) % shardCount;
  };
  const write = (drive: string, path: string, image: NodeImage | undefined, at: string) => {
    const old = items.get(`${drive}#${path}`);
    if (JSON.stringify(old) === JSON.stringify(image)) return; // no record for a write that changes nothing
    if (image) items.set(`${drive}#${path}`, image);
    else items.delete(`${drive}#${path}`);
    const event = !old ? 'INSERT' : image ? 'MODIFY' : 'REMOVE';
    shards[shardOf(drive, path)].push({ partition: `${drive}#${path.slice(0, path.lastIndexOf('/'))}`, sequence: String(++sequence), event, drive, path, ...(old ? { old } : {}), ...(image ? { new: image } : {}), at });
  };
  const file = (path: string, at: string): FileNode => ({ kind: 'file', id: `f${++ids}`, path, size: 1, contentType: 'text/plain', createdAt: at, objectKey: `k${ids}`, etag: `e${ids}` });
  for (let i = 0; i < operations; i++) {
    const drive = pick(DRIVES);
    const path = pick(PATHS);
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    const held = items.get(`${drive}#${path}`);
    const what = next();
    if (what < 0.35 || !held) {
      const made = file(path, at);
      write(drive, path, made, at);
      expected.push({ drive, type: held ? 'file.replaced' : 'file.created', path, id: made.id });
    } else if (what < 0.45) {
      write(drive, path, { ...held, pending: `u${i}` } as NodeImage, at); // the same record noted again: no change
    } else if (what < 0.65) {
      write(drive, path, undefined, at);
      expected.push({ drive, type: 'file.deleted', path, id: held.id });
    } else {
      const to = pick(PATHS.filter((other) => other !== path));
      const moveId = `m${i}`;
      const { pending: _, ...record } = held as NodeImage & { kind: 'file' };
      const arrival = held.kind === 'file' ? (held.movedAt ?? '') : '';
      marks.push({ drive, id: held.id, from: path, arrival, to, moveId });
      // One transaction: the destination's record first, then the source's removal, as DynamoDB Local streams it.
      write(drive, to, { ...record, path: to, movedAt: at, movedFrom: path, moveId, moveArrival: arrival }, at);
      write(drive, path, undefined, at);
      expected.push({ drive, type: 'file.moved', path: to, from: path, id: held.id });
    }
  }
  return { shards, marks, expected };
}

/** A log that dies at random: before a commit (nothing written) or after one (written, the answer lost). */
function mortal(log: ChangeLog, next: () => number): ChangeLog {
  return {
    readState: (drive) => log.readState(drive),
    readMarks: (drive, keys) => log.readMarks(drive, keys),
    read: (drive, after, limit) => log.read(drive, after, limit),
    newest: (drive) => log.newest(drive),
    readBefore: (drive, before, limit) => log.readBefore(drive, before, limit),
    commit: async (drive, state, changes, marks) => {
      if (next() < 0.1) throw new Error('died before the commit');
      const made = await log.commit(drive, state, changes, marks);
      if (next() < 0.1) throw new Error('died after the commit');
      return made;
    },
  };
}

interface Run {
  followed: Map<string, LoggedChange[]>;
  expected: World['expected'];
  unpaired: number;
  invocations: number;
}

async function run(seed: number, operations: number, pairWaitMs: number): Promise<Run> {
  const next = random(seed);
  const world = makeWorld(next, operations);
  let now = 0;
  // Each call waits a random few turns of the event loop: concurrent pollers and the follower interleave.
  const pause = async () => {
    now += Math.floor(next() * 300);
    for (let turns = Math.floor(next() * 3); turns > 0; turns--) await new Promise((resolve) => setImmediate(resolve));
  };
  const log = new MemoryChangeLog(pause);
  for (const mark of world.marks) log.putMark(mark.drive, mark);
  let unpaired = 0;
  let invocations = 0;
  const options = { pairWaitMs, now: () => now, onUnpaired: () => unpaired++ };
  const checkpoints = world.shards.map(() => 0);
  const drained = () => world.shards.every((records, shard) => checkpoints[shard] >= records.length);

  // One poller a shard (parallelization factor 1), in batches of 1-6 records, retrying what fails.
  const poll = async (shard: number) => {
    const records = world.shards[shard];
    for (let idle = 0; checkpoints[shard] < records.length; ) {
      await pause();
      const batch = records.slice(checkpoints[shard], checkpoints[shard] + 1 + Math.floor(next() * 6));
      invocations++;
      if (invocations > 50_000) throw new Error('the sequencer stopped moving');
      try {
        const retryFrom = await sequenceBatch(mortal(log, next), batch, options);
        const handed = retryFrom === undefined ? batch.length : batch.findIndex((record) => record.sequence === retryFrom);
        checkpoints[shard] += handed;
        idle = handed === 0 ? idle + 1 : 0;
        if (idle > 0) now += 1000; // Lambda retries a batch handed back after a while
      } catch {
        // Lambda hands the same batch again.
      }
    }
  };
  const followed = new Map<string, LoggedChange[]>(DRIVES.map((drive) => [drive, []]));
  const follow = async () => {
    const positions = new Map(DRIVES.map((drive) => [drive, 0]));
    for (;;) {
      const pollersDone = drained();
      for (const drive of DRIVES) {
        const read = await readChanges(log, drive, positions.get(drive)!, 1 + Math.floor(next() * 7), now);
        if (read.expired) throw new Error('nothing expires here');
        followed.get(drive)!.push(...read.changes);
        positions.set(drive, read.position);
      }
      const caughtUp = await Promise.all(DRIVES.map(async (drive) => positions.get(drive) === (log.states.get(drive)?.head ?? 0)));
      if (pollersDone && caughtUp.every(Boolean) && DRIVES.every((drive) => Object.keys(log.states.get(drive)?.halves ?? {}).length === 0)) return;
      const waiting = DRIVES.some((drive) => Object.keys(log.states.get(drive)?.halves ?? {}).length > 0);
      if (pollersDone && waiting) {
        // Halves left waiting for a pair are emitted alone by the next invocation after the wait.
        now += pairWaitMs + 1;
        for (const drive of DRIVES) await settleHalves(log, drive, options);
      }
      await pause();
    }
  };
  await Promise.all([...world.shards.map((_, shard) => poll(shard)), follow()]);
  return { followed, expected: world.expected, unpaired, invocations };
}

/** Each path's changes (by `path` and by `from`), in order. */
function perPath(changes: readonly { type: string; path: string; from?: string; id: string }[]): Map<string, string[]> {
  const paths = new Map<string, string[]>();
  for (const change of changes) {
    for (const path of new Set([change.path, ...(change.from !== undefined ? [change.from] : [])])) {
      if (!paths.has(path)) paths.set(path, []);
      paths.get(path)!.push(key(change));
    }
  }
  return paths;
}

/** A move as the two changes it is when its halves never met. */
function unpair(change: { type: string; path: string; from?: string; id: string; replaced?: boolean }): { type: string; path: string; id: string }[] {
  if (change.type !== 'file.moved') return [change];
  return [
    { type: 'file.deleted', path: change.from!, id: change.id },
    { type: 'file.created|replaced', path: change.path, id: change.id },
  ];
}
const loosen = (change: { type: string; path: string; id: string }) => ({ ...change, type: change.type === 'file.created' || change.type === 'file.replaced' ? 'file.created|replaced' : change.type });

describe('the sequencer, over a sharded stream', () => {
  it.each(Array.from({ length: 60 }, (_, i) => i + 1))('gives every change once, in per-path order (seed %i)', async (seed) => {
    const { followed, expected, unpaired } = await run(seed, 40, 1e12);
    expect(unpaired).toBe(0);
    for (const drive of DRIVES) {
      const got = followed.get(drive)!.map((change) => ({ type: change.type, path: change.path, ...(change.from !== undefined ? { from: change.from } : {}), id: change.node.id }));
      const wanted = expected.filter((change) => change.drive === drive).map(({ drive: _, ...change }) => change);
      expect(got.map(key).sort()).toEqual(wanted.map(key).sort());
      expect(perPath(got)).toEqual(perPath(wanted));
      expect(followed.get(drive)!.map((change) => change.position)).toEqual(got.map((_, i) => i + 1));
    }
  });

  it.each(Array.from({ length: 30 }, (_, i) => i + 1))('with no wait for pairs, still gives every write once, in per-path order (seed %i)', async (seed) => {
    const { followed, expected } = await run(1000 + seed, 40, 0);
    for (const drive of DRIVES) {
      const got = followed.get(drive)!.flatMap((change) => unpair({ type: change.type, path: change.path, ...(change.from !== undefined ? { from: change.from } : {}), id: change.node.id })).map(loosen);
      const wanted = expected.filter((change) => change.drive === drive).flatMap(unpair).map(loosen);
      expect(got.map(key).sort()).toEqual(wanted.map(key).sort());
      expect(perPath(got)).toEqual(perPath(wanted));
    }
  });
});

import fc from 'fast-check';
import { acceptCopy } from '../../functions/core/copy';
import { createFolder } from '../../functions/core/create-folder';
import { deleteFiles } from '../../functions/core/delete-files';
import { acceptDelete } from '../../functions/core/delete-folder';
import { DriveError } from '../../functions/core/errors';
import { advanceJob, resumeStalledJobs } from '../../functions/core/jobs';
import { JOURNAL_SWEEP_AFTER_MS, sweepJournal } from '../../functions/core/journal';
import { acceptMove } from '../../functions/core/move';
import { purgeItem, sweepTrash } from '../../functions/core/purge';
import { restoreFile } from '../../functions/core/restore';
import { PURGE_LEASE_MS, type TrashPolicy } from '../../functions/core/trash';
import { ROOT, parentOf } from '../../functions/core/paths';
import type { DriveNode, FileNode } from '../../functions/core/ports';
import { LiveFolders } from '../../functions/core/live-folders';
import { uploadFiles } from '../../functions/core/upload';
import { type MemoryPorts, gatePorts, memoryPorts } from './memory-ports';
import { StepScheduler } from './step-scheduler';

// The write-ordering protocol (functions/core/protocol/README.md) checked by generated interleavings: a few
// requests (uploads, mkdirs, recursive and empty deletes, file deletes, folder and file moves, folder copies)
// run at once on a small tree, every port call waiting for fast-check's scheduler, which picks the order in
// which the calls in flight take effect; the worker steps of the jobs they start join in. Then every job is
// driven to its end and the journal swept, and the invariants and each request's promised outcome checked.
// Budgets are 0 (hand the job on at once) or too big to run out: nothing depends on the machine's speed.

const DRIVE = 'd';
const BIG = 1e12;
/**
 * Runs of each generated property: 500 in `npm test`, 2,000 in `npm run test:model-deep`, which `.ci/run` runs
 * after the chaos tests (docs/testing.md). The first 500 of a seed's runs are the first quarter of its 2,000.
 */
const RUNS = Number(process.env.MODEL_RUNS ?? 500);
/**
 * Runs of each fixed-seed race below (a closed gap's requests, in the orders seed 23 picks): 300 a race in
 * `npm test`, 1,000 in `npm run test:model-deep` (CI runs it), and `MODEL_RACE_RUNS=3000` replays each as far as it
 * ran before issue 23. fast-check's runs of one seed are one stream, so the 300 are the first of the 1,000 and
 * those the first of the 3,000. Every run whose values are new is an order of its own (most races: 846 distinct
 * port-call traces in the first 1,000 runs, 2,431 in 3,000, counted 2026-11-27), so the lower count samples
 * fewer orders; the search for new gaps is the generated runs' above, with `MODEL_RUNS` and `MODEL_SEED=random`.
 */
const RACE_RUNS = Number(process.env.MODEL_RACE_RUNS ?? 300);

/** The tree every run starts from: folders /a, /a/b, /d; files /a/f, /a/b/g, /d/h. */
const SEED_FOLDERS = ['/a', '/a/b', '/d'];
const SEED_FILES = ['/a/f', '/a/b/g', '/d/h'];

type Op =
  /** `warm`: its process holds every folder above its paths as live (`LiveFolders`, stale at worst): one file skips its first read. */
  | { kind: 'upload'; paths: readonly string[]; warm?: boolean }
  | { kind: 'mkdir'; path: string }
  | { kind: 'delete'; path: string; recursive: boolean; budget: number }
  | { kind: 'deleteFiles'; paths: readonly string[] }
  | { kind: 'move'; from: string; to: string; budget: number }
  | { kind: 'copy'; from: string; to: string; budget: number }
  /** With trash on: restores the newest trash row taken from `path` to it, or purges it (issue 28). */
  | { kind: 'restore'; path: string; overwrite: boolean }
  | { kind: 'purge'; path: string };

const budget = fc.constantFrom(0, BIG);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('upload' as const), paths: fc.subarray(['/a/f', '/a/b/u', '/d/u', '/a/b/c/u', '/n/u'], { minLength: 1, maxLength: 2 }), warm: fc.boolean() }),
  fc.record({ kind: fc.constant('mkdir' as const), path: fc.constantFrom('/a/b/c', '/d/m', '/a/n') }),
  fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom('/a', '/a/b', '/d'), recursive: fc.boolean(), budget }),
  fc.record({ kind: fc.constant('deleteFiles' as const), paths: fc.constantFrom(['/a/f'], ['/a/b/g', '/d/h']) }),
  fc.record({ kind: fc.constant('move' as const), from: fc.constantFrom('/a/b', '/a', '/d', '/a/f'), to: fc.constantFrom('/d/b', '/m', '/a/m'), budget }),
  fc.record({ kind: fc.constant('copy' as const), from: fc.constantFrom('/a', '/a/b', '/d'), to: fc.constantFrom('/c', '/d/c'), budget }),
);

/**
 * Scenarios of protocol bugs this model found that are not fixed yet (the protocol's README, "Known gaps"):
 * left out of the generated runs so that the rest stays checked, each pinned by a test below that shows it.
 */
const KNOWN_GAPS: Record<string, (ops: readonly Op[]) => boolean> = {
  // None open. Gap 12 was the last: see "closed gap: gap 12, …" below.
};

const knownGap = (ops: readonly Op[]) => Object.values(KNOWN_GAPS).some((gap) => gap(ops));

/**
 * The generated runs use one fixed seed, so that `npm test` passes or fails the same on every run and machine:
 * a random seed would turn each gap still unknown into a flaky failure. `MODEL_SEED=<n>` replays a seed a run
 * printed; `MODEL_SEED=random` searches afresh (with `MODEL_RUNS` for more runs), which is how gaps are found.
 */
const seedOption = (): { seed?: number } => {
  const wanted = process.env.MODEL_SEED;
  if (wanted === 'random') {
    // A seed drawn here rather than by fast-check, so that a passing search can be reported and replayed too.
    const drawn = Math.floor(Math.random() * 2 ** 32) - 2 ** 31;
    process.stdout.write(`model: MODEL_SEED=${drawn}\n`);
    return { seed: drawn };
  }
  // MODEL_PATH (with MODEL_SEED): fast-check's path of a failure, to replay that one case alone.
  return { seed: wanted ? Number(wanted) : 20261126, ...(process.env.MODEL_PATH ? { path: process.env.MODEL_PATH } : {}) };
};

/** What a request answered: its value, or the code of the DriveError it threw. */
type Answer = { ok: true; value: unknown } | { ok: false; code: string };

const EXPECTED_CODES = new Set(['conflict', 'not_found', 'validation_error', 'rate_limited']);

/** The bytes an op uploads to `path`: unique, so the checks can tell whose bytes an object holds. */
const bytesOf = (index: number, path: string) => Buffer.from(`op${index}:${path}`);

const below = (path: string, top: string) => path === top || path.startsWith(`${top}/`);

function seed(ports: MemoryPorts): void {
  const createdAt = new Date().toISOString();
  for (const path of SEED_FOLDERS) ports.nodes.write(DRIVE, { kind: 'folder', id: `seed${path}`, path, createdAt });
  for (const path of SEED_FILES) {
    const id = `seed${path}`;
    ports.nodes.write(DRIVE, { kind: 'file', id, path, size: 1, contentType: 'text/plain', createdAt, objectKey: `${DRIVE}/${id}`, etag: 'e' });
    void ports.objects.put(`${DRIVE}/${id}`, Buffer.from(`seed:${path}`), 'text/plain');
  }
}

type Deps = MemoryPorts & { trashPolicy?: TrashPolicy };

/** The trash row a restore or purge op works on: the newest taken from `path` (read straight from the store, before the race's calls). */
function rowFor(ports: MemoryPorts, path: string): string | undefined {
  return ports.trash
    .all(DRIVE)
    .map(({ row }) => row)
    .filter((row) => row.path === path)
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0]?.id;
}

/** The trash ops of each run, by index: the row each one aimed at (for the checks). */
type Aimed = Map<number, string | undefined>;

function run(deps: Deps, o: Op, index: number, aimed: Aimed = new Map()): Promise<unknown> {
  switch (o.kind) {
    case 'restore': {
      const id = aimed.get(index);
      return id === undefined ? Promise.resolve('nothing to restore') : restoreFile(deps, DRIVE, id, { overwrite: o.overwrite });
    }
    case 'purge': {
      const id = aimed.get(index);
      return id === undefined ? Promise.resolve('nothing to purge') : purgeItem(deps, DRIVE, id, `purge${index}`);
    }
    case 'upload':
      return uploadFiles(o.warm ? { ...deps, liveFolders: believedLive(o.paths) } : deps, DRIVE, o.paths.map((path) => ({ filename: 'x', data: bytesOf(index, path) })), o.paths.map((path) => ({ path })));
    case 'mkdir':
      return createFolder(deps.nodes, DRIVE, o.path, deps.jobs);
    case 'delete':
      return acceptDelete(deps, DRIVE, o.path, o.recursive, o.budget);
    case 'deleteFiles':
      return deleteFiles(deps, DRIVE, o.paths);
    case 'move':
      return acceptMove(deps, DRIVE, o.from, o.to, {}, o.budget);
    case 'copy':
      return acceptCopy(deps, DRIVE, o.from, o.to, {}, o.budget);
  }
}

/**
 * A cache that holds the folders above `paths` live whatever stands there: the stalest a warm upload function's
 * `LiveFolders` can be (a folder since marked, moved, deleted, or never made), so a one-file upload skips its
 * first read and only its record's condition and the read after its write keep the protocol.
 */
function believedLive(paths: readonly string[]): LiveFolders {
  const cache = new LiveFolders(BIG);
  cache.note(DRIVE, paths.map(parentOf));
  return cache;
}

/** The checks of one step: an object named by two of records, trash rows and members, which no moment may hold. */
function twiceNamed(ports: MemoryPorts): string | undefined {
  const seen = new Map<string, string>();
  for (const node of ports.nodes.storedFiles()) {
    if (seen.has(node.objectKey)) return `object ${node.objectKey} is named by two records`;
    seen.set(node.objectKey, `record ${node.path}`);
  }
  for (const [key, holder] of ports.trash.namedKeys()) {
    if (seen.has(key)) return `object ${key} is named by ${seen.get(key)} and ${holder}`;
    seen.set(key, holder);
  }
  return undefined;
}

/** Every object key a trash row or member names. */
const trashKeys = (ports: MemoryPorts) => new Set([...ports.trash.namedKeys()].map(([key]) => key));

/**
 * What requests that died left, which the protocol allows (README, "Invariants": kept once the requests that
 * touched them have ended, or finished by their job, the same request again, or fsck).
 */
interface Deaths {
  /** The requests that died. */
  killed: Set<number>;
  /** Ids of the nodes each request wrote (folders made, records put). */
  wrote: Map<number, Set<string>>;
  /** Object keys of records each request replaced: deleted by its last step, which a death skips (fsck's orphans). */
  replaced: Map<number, Set<string>>;
  /**
   * Object keys each upload stored: an upload of one file keeps no journal entry (docs/hot-path-design.md), so
   * what a dead one stored and recorded nowhere is the scheduled consistency check's to delete.
   */
  stored: Map<number, Set<string>>;
}

/**
 * Runs `ops` at once under `s`, the worker steps of their jobs joining in; then every job to its end, and the
 * sweep. A request with a number in `dies` stops for good before that many port calls (as a killed Lambda).
 */
async function scenario(
  s: StepScheduler,
  ops: readonly Op[],
  workerBudget: number,
  dies: readonly (number | undefined)[] = [],
  trashPolicy?: TrashPolicy,
): Promise<{ answers: Answer[]; ports: MemoryPorts; violations: string[]; deaths: Deaths; aimed: Aimed }> {
  const ports = memoryPorts();
  seed(ports);
  // With the trash on, every request trashes what it removes: the seed files' rows are there from the start
  // for the restores and purges to aim at (as if deleted before the race).
  const aimed: Aimed = new Map();
  if (trashPolicy) {
    for (const path of ['/a/z', '/d/z']) {
      const id = `seed${path}`;
      ports.nodes.write(DRIVE, { kind: 'file', id, path, size: 1, contentType: 'text/plain', createdAt: new Date().toISOString(), objectKey: `${DRIVE}/${id}`, etag: 'e' });
      void ports.objects.put(`${DRIVE}/${id}`, Buffer.from(`seed:${path}`), 'text/plain');
      await deleteFiles({ ...ports, trashPolicy }, DRIVE, [path]);
    }
    ops.forEach((o, i) => {
      if (o.kind === 'restore' || o.kind === 'purge') aimed.set(i, rowFor(ports, o.path));
    });
  }
  const violations: string[] = [];
  const deaths: Deaths = { killed: new Set(), wrote: new Map(), replaced: new Map(), stored: new Map() };
  const step = async (label: string) => {
    await s.gate(label);
    const twice = twiceNamed(ports);
    if (twice) violations.push(`${twice}, before ${label}`);
  };
  const gated = { ...gatePorts(ports, step), ...(trashPolicy ? { trashPolicy } : {}) };
  const answers: Answer[] = [];
  /** The worker steps started while the requests run. */
  const tasks: Promise<unknown>[] = [];
  // Requests that ended (answered, or died: a request that died may still reject later, through a branch of
  // it that had not reached a call yet), and worker steps that ended.
  const ended = new Set<number>();
  let stepsEnded = 0;
  const track = (task: Promise<unknown>) => tasks.push(task.finally(() => stepsEnded++));
  /** The ports of request `index`: they stop answering for good after its `dies` calls. */
  const portsOf = (index: number) => {
    const limit = dies[index];
    if (limit === undefined) return gated;
    const policy = trashPolicy ? { trashPolicy } : {};
    let calls = 0;
    const wrote = new Set<string>();
    const replaced = new Set<string>();
    const stored = new Set<string>();
    deaths.wrote.set(index, wrote);
    deaths.replaced.set(index, replaced);
    if (ops[index].kind === 'upload') deaths.stored.set(index, stored);
    const mortal = gatePorts(ports, async (label, call) => {
      if (calls++ >= limit) {
        // Counted as ended: nothing of it runs again.
        if (!deaths.killed.has(index)) {
          deaths.killed.add(index);
          ended.add(index);
        }
        await new Promise(() => undefined);
      }
      await step(label);
      const node = call.args[1] as { id?: string; path?: string } | undefined;
      if ((call.method === 'createFolder' || call.method === 'putFile') && node?.id) wrote.add(node.id);
      if (call.port === 'objects' && call.method === 'put') stored.add(call.args[0] as string);
      if (call.method === 'putFile' && node?.path) {
        const there = ports.nodes.peek(DRIVE, node.path);
        if (there?.kind === 'file' && there.id !== node.id) replaced.add(there.objectKey);
      }
      // A restore writes the trashed record back: what a dead one restored may stand below a removed folder.
      if (call.port === 'records' && call.method === 'restore') {
        const row = call.args[1] as { file?: { id: string } };
        if (row.file) wrote.add(row.file.id);
      }
    });
    return { ...mortal, ...policy };
  };
  const settle = (index: number, promise: Promise<unknown>) =>
    promise.then(
      (value) => void (answers[index] = { ok: true, value }),
      (error: unknown) => {
        if (error instanceof DriveError && EXPECTED_CODES.has(error.code)) answers[index] = { ok: false, code: error.code };
        else violations.push(`request ${index} (${JSON.stringify(ops[index])}) threw ${error instanceof Error ? error.stack : String(error)}`);
        answers[index] = answers[index] ?? { ok: false, code: 'unexpected' };
      },
    );
  // A worker step starts as each job is handed on, while the requests still run (a few; the rest wait their turn).
  let workers = 0;
  ports.queue.onSend = () => {
    if (workers >= 3) return;
    const message = ports.queue.take()!;
    workers++;
    track(advanceJob(gated, message.id, message.drive, workerBudget).catch((error: unknown) => violations.push(`worker step threw ${String(error)}`)));
  };
  ops.forEach((o, i) => void settle(i, run(portsOf(i), o, i, aimed)).finally(() => ended.add(i)));
  await s.run(() => ended.size === ops.length && stepsEnded === tasks.length);
  // Every job to its end, one step at a time, straight on the stores.
  ports.queue.onSend = () => undefined;
  // The sweep sends on the jobs whose request died before handing them on.
  if (deaths.killed.size > 0) await resumeStalledJobs(ports, new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS));
  for (let steps = 0; ; steps++) {
    const message = ports.queue.take();
    if (!message) break;
    // A message sent with a delay arrives that much later: a claim it found held has lapsed by then.
    if (message.delaySeconds) ports.clock.advance(message.delaySeconds * 1000);
    if (steps === 200) {
      violations.push(`jobs still running after 200 steps: ${JSON.stringify([...ports.jobs.jobs.values()].filter((job) => job.status === 'running'))}`);
      break;
    }
    // Time passes between steps that wait: every upload has surely ended, and the sweep closes what they
    // left open (a move waits for a file's journal entry to close).
    if (steps > 0 && steps % 20 === 0) await sweepJournal(ports, new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS));
    await advanceJob({ ...ports, ...(trashPolicy ? { trashPolicy } : {}) }, message.id, message.drive, workerBudget).catch((error: unknown) => violations.push(`job step threw ${String(error)}`));
  }
  // The sweep, once every upload has surely ended.
  const before = checkQuiet(ports, deaths);
  violations.push(...before);
  await sweepJournal(ports, new Date(Date.now() + 2 * JOURNAL_SWEEP_AFTER_MS));
  // The trash's sweep once a dead purge's lease has lapsed: it finishes that purge (no row is due by its own time yet).
  if (trashPolicy) await sweepTrash(ports, new Date(Date.now() + 2 * PURGE_LEASE_MS));
  // The scheduled consistency check, past its grace period (every request has surely ended): it deletes each
  // object no record, journal entry, session or trash item names (functions/core/consistency-check.ts). Only
  // an upload that died may have left one (checkQuiet allows no other).
  const named = new Set([...ports.nodes.all(DRIVE).flatMap((node) => (node.kind === 'file' ? [node.objectKey] : [])), ...trashKeys(ports)]);
  const journaled = new Set(await ports.journal.openKeys());
  await ports.objects.deleteMany([...ports.objects.objects.keys()].filter((key) => !named.has(key) && !journaled.has(key)));
  return { answers, ports, violations, deaths, aimed };
}

/** What the requests that died may leave: nodes they wrote without their folder, replaced bytes, bytes stored unrecorded. */
function leftByDeaths(deaths: Deaths) {
  const killed = [...deaths.killed];
  const wrote = new Set(killed.flatMap((i) => [...(deaths.wrote.get(i) ?? [])]));
  const replaced = new Set(killed.flatMap((i) => [...(deaths.replaced.get(i) ?? [])]));
  const stored = new Set(killed.flatMap((i) => [...(deaths.stored.get(i) ?? [])]));
  return { wrote, replaced, stored };
}

/** The invariants once every request and job has ended (before the sweep). */
function checkQuiet(ports: MemoryPorts, deaths: Deaths): string[] {
  const problems: string[] = [];
  const left = leftByDeaths(deaths);
  const nodes = ports.nodes.all(DRIVE);
  const byPath = new Map(nodes.map((node) => [node.path, node]));
  // An entry names its files' bytes, and those its withdrawn writer left to the sweep (gap 12).
  const journaled = new Set([...ports.journal.entries.values()].flatMap((entry) => [...entry.files, ...(ports.journal.left.get(entry.id) ?? [])].map((file) => file.objectKey)));
  const named = new Set<string>();
  for (const node of nodes) {
    if (node.kind === 'folder' && (node.deleting || node.moving)) problems.push(`folder ${node.path} is left marked ${JSON.stringify({ deleting: node.deleting, moving: node.moving })}`);
    const parent = parentOf(node.path);
    // A writer that died before its second read may leave what it wrote below a folder a delete removed.
    if (parent !== ROOT && byPath.get(parent)?.kind !== 'folder' && !left.wrote.has(node.id)) problems.push(`${node.path} has no folder above it`);
    if (node.kind === 'file') {
      if (!ports.objects.objects.has(node.objectKey)) problems.push(`record ${node.path} has no bytes`);
      named.add(node.objectKey);
    }
  }
  // Trash items hold their bytes, but under a row a purge claimed (a purge that died: the sweep finishes it).
  const trash = ports.trash.all(DRIVE);
  for (const { row, members } of trash) {
    const held = [...(row.file ? [row.file] : []), ...members.flatMap((member) => (member.file ? [member.file] : []))];
    for (const file of held) if (!ports.objects.objects.has(file.objectKey) && row.purging === undefined) problems.push(`trash item ${row.path} (${file.path}) has no bytes`);
    if (row.restoring !== undefined || (row.purging !== undefined && deaths.killed.size === 0)) problems.push(`trash row ${row.path} is left claimed ${JSON.stringify({ restoring: row.restoring, purging: row.purging })}`);
    if (row.state !== 'trashed') problems.push(`trash row ${row.path} is left ${row.state}`);
    for (const file of held) named.add(file.objectKey);
  }
  // Bytes a dead upload stored and recorded nowhere (one file: no journal entry) wait for the scheduled check.
  for (const key of ports.objects.objects.keys()) if (!named.has(key) && !journaled.has(key) && !left.replaced.has(key) && !left.stored.has(key)) problems.push(`object ${key} is named by no record and no journal entry`);
  for (const job of ports.jobs.jobs.values()) if (job.status !== 'done') problems.push(`job ${job.kind} ${job.path} is still running`);
  // A place reserved by a request that died before it wrote its job is taken back by the next admitJob that needs it.
  // So is the place of one that died after its job ended, before it gave the place back.
  for (const [drive, list] of ports.jobs.background) {
    const held = [...list.keys()].filter((id) => ports.jobs.jobs.has(id) && (deaths.killed.size === 0 || ports.jobs.jobs.get(id)!.status === 'running'));
    if (held.length > 0) problems.push(`drive ${drive} still lists ${held.length} background jobs`);
  }
  return problems;
}

/** The invariants after the sweep, and what each request promised. */
function checkOutcomes(ops: readonly Op[], answers: readonly Answer[], ports: MemoryPorts, deaths: Deaths, aimed: Aimed = new Map()): string[] {
  const problems: string[] = [];
  const left = leftByDeaths(deaths);
  const nodes = ports.nodes.all(DRIVE);
  const files = nodes.filter((node): node is FileNode => node.kind === 'file');
  const bodyOf = (file: FileNode) => ports.objects.stored.get(file.objectKey);
  if (ports.journal.entries.size > 0) problems.push(`${ports.journal.entries.size} journal entries left open after the sweep`);
  const named = new Set([...files.map((file) => file.objectKey), ...trashKeys(ports)]);
  for (const key of ports.objects.objects.keys()) if (!named.has(key) && !left.replaced.has(key)) problems.push(`object ${key} (${ports.objects.objects.get(key)!.body.toString()}) is named by no record after the sweep`);
  // Nothing a record names is lost: every trash item's bytes are there (no purge is left in flight by now).
  for (const key of trashKeys(ports)) if (!ports.objects.objects.has(key)) problems.push(`trash item of ${key} has no bytes after the sweep`);

  // Only a request that succeeded explains a path's state, or one that died (it answered nothing, so any of
  // its writes may stand), or one whose job completed after it answered (a delete, move or copy handed on): a
  // request that answered 409 and has no such job promised nothing, so it may have changed nothing.
  const jobDone = (o: Op) =>
    [...ports.jobs.jobs.values()].some((job) => job.status === 'done' && job.ended !== 'stopped' && ((o.kind === 'delete' && job.kind === 'delete' && job.path === o.path) || ((o.kind === 'move' || o.kind === 'copy') && job.kind === o.kind && job.path === o.from && job.to === o.to)));
  const explains = (i: number) => answers[i]?.ok === true || deaths.killed.has(i) || jobDone(ops[i]);
  // Whether some request other than `index` may have deleted, moved or replaced what was at `path`.
  const removers = (index: number, path: string) =>
    ops.filter((o, i) => {
      if (i === index || !explains(i)) return false;
      if (o.kind === 'delete') return below(path, o.path);
      if (o.kind === 'move') return below(path, o.from);
      if (o.kind === 'deleteFiles') return o.paths.includes(path);
      if (o.kind === 'upload') return o.paths.includes(path);
      if (o.kind === 'restore') return o.path === path;
      return false;
    });
  const anyDelete = ops.some((o, i) => (o.kind === 'delete' || o.kind === 'deleteFiles') && explains(i));

  ops.forEach((o, index) => {
    const answer = answers[index];
    // A request that died answered nothing.
    if (deaths.killed.has(index)) return;
    if (o.kind === 'upload') {
      for (const path of o.paths) {
        const body = bytesOf(index, path).toString();
        // Its own bytes and records, not copies a folder copy made of them (new keys, new ids).
        const keys = new Set([...ports.objects.stored].filter(([, stored]) => stored === body).map(([key]) => key));
        const holders = files.filter((file) => keys.has(file.objectKey));
        const objects = [...keys].filter((key) => ports.objects.objects.has(key));
        if (!answer.ok) {
          // Refused: nothing of it stays, records or bytes.
          if (holders.length > 0 || objects.length > 0) problems.push(`upload ${index} of ${path} answered ${answer.code} but left ${holders.map((f) => f.path).join(', ') || 'bytes'}`);
          continue;
        }
        const others = removers(index, path);
        if (others.length === 0 && byPathOf(nodes, path)?.kind === 'file' && bodyOf(byPathOf(nodes, path) as FileNode) !== body) problems.push(`upload ${index} of ${path} answered 200 but ${path} holds other bytes`);
        if (others.length === 0 && holders.every((file) => file.path !== path)) problems.push(`upload ${index} of ${path} answered 200 but is not there`);
        if (others.every((other) => other.kind === 'move') && !anyDelete && holders.length === 0) problems.push(`upload ${index} of ${path} answered 200, only moves ran, and its file is gone`);
      }
    }
    if (o.kind === 'mkdir' && answer.ok) {
      const explained = ops.some((other, i) => explains(i) && ((other.kind === 'delete' && below(o.path, other.path)) || (other.kind === 'move' && below(o.path, other.from))));
      if (!explained && byPathOf(nodes, o.path)?.kind !== 'folder') problems.push(`mkdir ${index} of ${o.path} answered 200 but no folder is there`);
    }
    if (o.kind === 'restore' || o.kind === 'purge') {
      const id = aimed.get(index);
      const row = id === undefined ? undefined : ports.trash.peek(DRIVE, id);
      const purgedBy = ops.some((other, i) => i !== index && other.kind === 'purge' && aimed.get(i) === id && explains(i));
      const restoredBy = ops.some((other, i) => i !== index && other.kind === 'restore' && aimed.get(i) === id && explains(i));
      if (o.kind === 'restore' && id !== undefined && answer.ok) {
        // Restored: the file is at its path with its id (unless a later request explains the path), and its row gone.
        const record = byPathOf(nodes, o.path);
        const others = removers(index, o.path);
        if (row) problems.push(`restore ${index} of ${o.path} answered 200 but its row ${id} is still in the trash`);
        if (others.length === 0 && record?.id !== `seed${o.path}`) problems.push(`restore ${index} of ${o.path} answered 200 but ${o.path} holds ${record?.id ?? 'nothing'}`);
      }
      // A restore that answered 409 leaves its item in the trash under its id, unless a purge or another restore took it.
      if (o.kind === 'restore' && id !== undefined && !answer.ok && answer.code === 'conflict' && !row && !purgedBy && !restoredBy) problems.push(`restore ${index} of ${o.path} answered 409 but its row ${id} is gone`);
      if (o.kind === 'purge' && id !== undefined && answer.ok) {
        if (row) problems.push(`purge ${index} of ${o.path} answered 200 but its row ${id} is still in the trash`);
        if (ports.objects.objects.has(`${DRIVE}/seed${o.path}`)) problems.push(`purge ${index} of ${o.path} answered 200 but its bytes are still stored`);
      }
    }
    if ((o.kind === 'move' || o.kind === 'copy') && answer.ok) {
      const done = answer.value as { done: boolean; node?: DriveNode };
      const explained = ops.some((other, i) => explains(i) && ((other.kind === 'delete' && below(o.to, other.path)) || (other.kind === 'move' && other !== o && below(o.to, other.from))));
      if (done.done && !explained && byPathOf(nodes, o.to) === undefined) problems.push(`${o.kind} ${index} to ${o.to} answered 200 but nothing is there`);
    }
  });

  // Seed files go only by a delete or an upload over them; a move puts them elsewhere, with their bytes.
  for (const path of SEED_FILES) {
    if (anyDelete || ops.some((o, i) => o.kind === 'upload' && o.paths.includes(path) && explains(i))) continue;
    if (!files.some((file) => file.id === `seed${path}`)) problems.push(`seed file ${path} is gone though nothing deleted or replaced it`);
  }
  // Each job's end as it says: a delete answered 200 or 202 leaves nothing of its folder there, a move nothing at its source.
  for (const job of ports.jobs.jobs.values()) {
    const there = byPathOf(nodes, job.path);
    const answered = ops.some((o, i) => o.kind === 'delete' && o.recursive && o.path === job.path && answers[i]?.ok);
    if (job.kind === 'delete' && answered && there?.id === job.folderId) problems.push(`delete job of ${job.path} ended with its folder there`);
    if (job.kind === 'move' && job.ended === 'moved' && there?.id === job.folderId) problems.push(`move job of ${job.path} ended 'moved' with its folder still there`);
  }
  return problems;
}

function byPathOf(nodes: readonly DriveNode[], path: string): DriveNode | undefined {
  return nodes.find((node) => node.path === path);
}

/**
 * The property: `ops` run in the order `order` picks, then the invariants and promises checked. A run is
 * wholly decided by its values (the scheduler is seeded by `order`, the ports are in memory), and fast-check,
 * which favours small numbers, draws some values again under one seed (569 of a fixed-seed race's 3,000 runs
 * at seed 23 repeat an earlier run): a run whose values already passed in this property is not run again. Every distinct run of the seed still runs; a failing one is never skipped, and shrinks as before.
 */
const protocolHolds = (opsArb: fc.Arbitrary<Op[]>, deathsArb: fc.Arbitrary<(number | undefined)[]> = fc.constant([]), trashPolicy?: TrashPolicy) => {
  const passed = new Set<string>();
  return fc.asyncProperty(opsArb, budget, fc.nat(), deathsArb, async (ops, workerBudget, order, dies) => {
    const values = JSON.stringify([ops, workerBudget, order, dies]);
    if (passed.has(values)) return;
    const s = new StepScheduler(order);
    const { answers, ports, violations, deaths, aimed } = await scenario(s, ops, workerBudget, dies, trashPolicy);
    const problems = [...violations, ...checkOutcomes(ops, answers, ports, deaths, aimed)];
    if (problems.length > 0) {
      const tree = ports.nodes.all(DRIVE).map((node) => `${node.path} ${node.kind} ${node.id}${node.kind === 'folder' ? ` ${node.deleting ?? ''}${node.moving ?? ''}` : ` ${node.pending ?? ''}`}`);
      const trash = ports.trash.all(DRIVE).map(({ row, members }) => `${row.id} ${row.type} ${row.path} ${row.state}${row.purging ? ' purging' : ''}${row.restoring ? ' restoring' : ''} (${members.length} members)`);
      throw new Error(`${problems.join('\n')}\nanswers: ${JSON.stringify(answers.map((a) => (a.ok ? 'ok' : a.code)))}\nnodes:\n${tree.sort().join('\n')}\ntrash:\n${trash.join('\n')}\njournal: ${[...ports.journal.entries.keys()].join(', ')}\nsteps:\n${s.trace.join('\n')}`);
    }
    passed.add(values);
  });
};

describe('the write-ordering protocol, over generated interleavings', () => {
  it(`keeps its invariants and each answer's promise (${RUNS} runs)`, async () => {
    const started = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    await fc.assert(protocolHolds(fc.array(op, { minLength: 2, maxLength: 4 }).filter((ops) => !knownGap(ops))), {
      numRuns: RUNS,
      ...seedOption(),
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    // The figure the protocol's README quotes; CPU time too, which a busy machine does not inflate.
    process.stdout.write(`model: ${RUNS} interleavings in ${seconds.toFixed(2)} s wall, ${cpuSeconds.toFixed(2)} s CPU (${Math.round(RUNS / cpuSeconds)} a CPU second)\n`);
  });

  it(`keeps them when requests die part-way (${RUNS} runs)`, async () => {
    // Each request may die before any of its first 15 port calls (a killed Lambda): its job, the sweep and
    // the journal must finish what it began, leaving only what the protocol allows an interruption to leave.
    const dies = fc.array(fc.option(fc.nat({ max: 15 }), { freq: 2, nil: undefined }), { minLength: 4, maxLength: 4 });
    const started = process.cpuUsage();
    await fc.assert(protocolHolds(fc.array(op, { minLength: 2, maxLength: 4 }).filter((ops) => !knownGap(ops)), dies), {
      numRuns: RUNS,
      ...seedOption(),
    });
    const used = process.cpuUsage(started);
    process.stdout.write(`model, with deaths: ${RUNS} interleavings in ${((used.user + used.system) / 1e6).toFixed(2)} s CPU\n`);
  });

  // The trash (issue 28): every delete and replacement trashes what it removes, restores and purges of rows
  // trashed before the race (`/a/z`, `/d/z`) join in. Checked besides the rest: no object named by two of
  // records, rows and members at any step; no trash item without bytes outside a purge; a restore answered 200
  // is there, one answered 409 leaves its row; a purge answered 200 took the row and the bytes.
  const TRASH: TrashPolicy = { days: 7 };
  const trashOp: fc.Arbitrary<Op> = fc.oneof(
    op,
    fc.record({ kind: fc.constant('restore' as const), path: fc.constantFrom('/a/z', '/d/z'), overwrite: fc.boolean() }),
    fc.record({ kind: fc.constant('purge' as const), path: fc.constantFrom('/a/z', '/d/z') }),
  );
  const trashRaces = fc.array(trashOp, { minLength: 2, maxLength: 4 }).filter((ops) => !knownGap(ops));
  it(`keeps them with the trash on, restores and purges joining in (${RUNS} runs)`, async () => {
    await fc.assert(protocolHolds(trashRaces, fc.constant([]), TRASH), { numRuns: RUNS, ...seedOption() });
  });
  it(`keeps them with the trash on when requests die part-way (${RUNS} runs)`, async () => {
    const dies = fc.array(fc.option(fc.nat({ max: 15 }), { freq: 2, nil: undefined }), { minLength: 4, maxLength: 4 });
    await fc.assert(protocolHolds(trashRaces, dies, TRASH), { numRuns: RUNS, ...seedOption() });
  });
  // The contract's races, each named: a restore racing an upload to its path, two restores of one item, a
  // purge racing a restore, a restore whose parent a delete removed, a restore into a folder being deleted or moved.
  const trashRacesNamed: [string, Op[]][] = [
    ['a restore racing an upload to the same path', [{ kind: 'restore', path: '/d/z', overwrite: false }, { kind: 'upload', paths: ['/d/z' as string] }]],
    ['two restores of one item', [{ kind: 'restore', path: '/a/z', overwrite: false }, { kind: 'restore', path: '/a/z', overwrite: true }]],
    ['a purge racing a restore', [{ kind: 'purge', path: '/a/z' }, { kind: 'restore', path: '/a/z', overwrite: false }]],
    ['a restore whose parent is deleted meanwhile', [{ kind: 'delete', path: '/a', recursive: true, budget: BIG }, { kind: 'restore', path: '/a/z', overwrite: false }]],
    ['a restore into a folder being deleted', [{ kind: 'delete', path: '/d', recursive: true, budget: 0 }, { kind: 'restore', path: '/d/z', overwrite: true }]],
    ['a restore into a folder being moved', [{ kind: 'move', from: '/a', to: '/m', budget: 0 }, { kind: 'restore', path: '/a/z', overwrite: false }]],
    ['a restore with overwrite into a folder being moved, over a file uploaded there', [{ kind: 'upload', paths: ['/a/z'] }, { kind: 'move', from: '/a', to: '/m', budget: 0 }, { kind: 'restore', path: '/a/z', overwrite: true }]],
    // An empty-folder delete removes a folder it found empty: only the restore's read above after its write
    // (a writer's step 5) keeps its file from being left without its folder.
    ['a restore into a folder an empty-folder delete takes', [{ kind: 'deleteFiles', paths: ['/a/b/g', '/d/h'] }, { kind: 'delete', path: '/d', recursive: false, budget: 0 }, { kind: 'restore', path: '/d/z', overwrite: false }]],
  ];
  it.each(trashRacesNamed)('trash race: %s', async (_name, ops) => {
    await fc.assert(protocolHolds(fc.constant(ops), fc.constant([]), TRASH), { numRuns: RACE_RUNS, seed: 23 });
  });

  // Gaps fixed since the model found them: each scenario, in the orders the seed that showed it picks, now
  // keeps the protocol (and is back in the generated runs above).
  const fixed: [string, Op[]][] = [
    // A failed writer's `removeUnused` removed a folder a move had marked meanwhile; the move's marked copy of
    // it stayed marked for good. The removal is now conditional on no mark (`{ unmarked: true }`).
    ['a failed writer leaves a folder a move marked to the move', [{ kind: 'move', from: '/a/b', to: '/d/b', budget: BIG }, { kind: 'upload', paths: ['/a/b/u', '/a/b/c/u'] }]],
    // A refused folder move removed its destination by the folder's id, which a second move of the same folder
    // to the same path had used: that move's files lost their folder. The removal is now conditional on the
    // refused job's own mark (`{ movingJob }`).
    ['the same folder moved twice to one path', [{ kind: 'move', from: '/d', to: '/m', budget: 0 }, { kind: 'move', from: '/d', to: '/m', budget: 0 }]],
    // A folder copy made its folders with `ensureFolders` and never read the folders above again (the writers'
    // step 5): an empty-folder delete of the destination's parent that found no children removed it, and the
    // copy's folder was left without it. The copy now makes its folders as a writer does (`makeFolders`).
    ['a copy makes folders and reads above again', [{ kind: 'delete', path: '/d', recursive: false, budget: 0 }, { kind: 'deleteFiles', paths: ['/a/b/g', '/d/h'] }, { kind: 'copy', from: '/a/b', to: '/d/c', budget: 0 }]],
    // A writer that failed removed the folders it made that held nothing, though a mkdir that found one there
    // meanwhile had answered 200. The mkdir now notes the folder `kept`, and the writer's removal spares it.
    ['a failed writer leaves the folder a mkdir answered', [{ kind: 'move', from: '/d', to: '/a/m', budget: 0 }, { kind: 'upload', paths: ['/d/u', '/a/b/c/u'] }, { kind: 'mkdir', path: '/a/b/c' }]],
    // Gap 10 (seed 1151547890): two mkdirs of one path below a recursive delete. The second found the folder
    // the first made and noted it `kept` with a write that made it anew if the delete had removed it
    // meanwhile; it then saw the delete's mark above and withdrew, leaving that folder, and the delete removed
    // the one above it. The note now makes nothing: it comes after the read above passed, conditional on the
    // id read (`keepFolder`), and a folder gone by then is made by the mkdir itself, as its own.
    ['a kept note makes anew a folder a delete removed', [{ kind: 'delete', path: '/a/b', recursive: true, budget: BIG }, { kind: 'mkdir', path: '/a/b/c' }, { kind: 'mkdir', path: '/a/b/c' }]],
    // Gap 11 (seed 23 once checkOutcomes counted only successes; random seed 889114381): an upload of several
    // files withdrew, found that the record it replaced was another upload's whose journal entry was still
    // open, and freed both; but that upload had passed its second read and answered 200. The withdrawing writer
    // now puts the record back first and reads the other's note after; a writer notes `withdrawn` on its
    // entry before its own undo, and only a noted record goes again.
    ['gap 11, a withdrawing upload frees the file of one about to answer 200 (a move)', [{ kind: 'move', from: '/a/b', to: '/a/m', budget: BIG }, { kind: 'upload', paths: ['/a/b/u', '/a/b/c/u'] }, { kind: 'upload', paths: ['/a/b/u', '/a/b/c/u'] }]],
    ['gap 11, a withdrawing upload frees the file of one about to answer 200 (an empty-folder delete)', [{ kind: 'upload', paths: ['/d/u', '/n/u'] }, { kind: 'upload', paths: ['/a/f', '/d/u'] }, { kind: 'delete', path: '/a', recursive: false, budget: 0 }, { kind: 'copy', from: '/a', to: '/c', budget: 0 }]],
    // Gap 12 (seed 23; pre-existing, before gap 11's fix too): an upload of several files (X) withdrew, found its
    // record taken by another upload (T) and freed what that record replaced (P: a seed file, or a third
    // upload's answered 200); then T withdrew, put X's record back, read X's note and removed it: P was lost
    // though X and T answered 409. X's note now carries what its records replaced: T puts P back in X's record's
    // place (by X's id, as X's own undo would), and X, finding its record taken, frees nothing of P but leaves
    // its bytes to its entry's sweep, which keeps them if a record at the path names them.
    ['gap 12, a withdrawing writer whose record was taken frees what it replaced (a seed file)', [{ kind: 'move', from: '/a/b', to: '/m', budget: BIG }, { kind: 'upload', paths: ['/a/f', '/a/b/u'] }, { kind: 'upload', paths: ['/a/f', '/a/b/u'] }]],
    // Gap 14 (random seed -290553027, path 17089:4:5:5:5, found by the search after gap 12's fix; on the code
    // before it too): two folder copies to one path; the second found the destination the first had made and
    // copied into it without noting it `kept`; the first saw an empty-folder delete's mark above and withdrew,
    // removing the folder it made: the second answered 200 with nothing at its destination. A copy now notes
    // its destination `kept` as a mkdir does (`makeFolders` with `keep`).
    ['gap 14, two copies to one path, the one that made it withdrawing', [{ kind: 'copy', from: '/a/b', to: '/d/c', budget: 0 }, { kind: 'copy', from: '/a', to: '/d/c', budget: 0 }, { kind: 'delete', path: '/d', recursive: false, budget: 0 }]],
    ['gap 12, a withdrawing writer whose record was taken frees what it replaced (an upload answered 200)', [{ kind: 'move', from: '/a/b', to: '/a/m', budget: BIG }, { kind: 'upload', paths: ['/a/b/u', '/a/b/c/u'] }, { kind: 'upload', paths: ['/a/b/u', '/a/b/c/u'] }, { kind: 'upload', paths: ['/a/b/u', '/a/b/c/u'] }]],
  ];
  it.each(fixed)('closed gap: %s', async (_name, ops) => {
    expect(knownGap(ops)).toBe(false);
    await fc.assert(protocolHolds(fc.constant(ops)), { numRuns: RACE_RUNS, seed: 23 });
  });

  // Gap 6: two uploads to one path that both failed: the later one's undo put back the earlier one's record
  // (its `previous`) after that upload had answered 409. The undo now asks whether the journal entry that
  // record names is still open, and if so removes its own record instead, freeing both objects. Uploads of one
  // file keep no entry (docs/hot-path-design.md): the earlier one, finding its record taken, answers as stored,
  // so the record put back is what its 200 promised. Both kinds, pinned.
  it.each([
    ['of one file each (no journal: a taken record counts as stored)', ['/a/b/u']],
    ['of two files each (journaled: the undo asks the journal)', ['/a/b/u', '/a/b/c/u']],
  ])('closed gap: two failing uploads to one path, %s', async (_name, paths) => {
    const ops: Op[] = [{ kind: 'move', from: '/a/b', to: '/a/m', budget: BIG }, { kind: 'upload', paths }, { kind: 'upload', paths }];
    expect(knownGap(ops)).toBe(false);
    await fc.assert(protocolHolds(fc.constant(ops)), { numRuns: RACE_RUNS, seed: 23 });
  });

  // The hot path's races (docs/hot-path-design.md): one-file uploads, whose record is never pending and whose
  // withdrawal counts a taken record as stored, racing moves, deletes and uploads of their own paths, with and
  // without deaths (a dead one's bytes are the scheduled check's). The generated runs above draw these too;
  // here they are all the runs draw.
  const oneFileRace = fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant('upload' as const), paths: fc.constantFrom(['/a/f'], ['/a/b/u'], ['/a/b/c/u'], ['/d/u']), warm: fc.boolean() }),
      fc.record({ kind: fc.constant('move' as const), from: fc.constantFrom('/a/b', '/a', '/a/f', '/d'), to: fc.constantFrom('/d/b', '/m', '/a/m'), budget }),
      fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom('/a', '/a/b', '/d'), recursive: fc.boolean(), budget }),
      fc.record({ kind: fc.constant('deleteFiles' as const), paths: fc.constantFrom(['/a/f'], ['/a/b/g', '/d/h']) }),
    ) as fc.Arbitrary<Op>,
    { minLength: 2, maxLength: 4 },
  ).filter((ops) => ops.some((o) => o.kind === 'upload'));
  it('keeps them for one-file uploads racing moves, deletes and uploads of their paths', async () => {
    await fc.assert(protocolHolds(oneFileRace), { numRuns: Math.ceil(RUNS / 4), ...seedOption() });
    const dies = fc.array(fc.option(fc.nat({ max: 8 }), { freq: 2, nil: undefined }), { minLength: 4, maxLength: 4 });
    await fc.assert(protocolHolds(oneFileRace, dies), { numRuns: Math.ceil(RUNS / 4), ...seedOption() });
  });

  // Review r1: "a taken record counts as stored" (docs/hot-path-design.md) answers 200 because a later request took
  // the record; but the undo of a writer that sees an `empty` mark above (an empty-folder delete that will find
  // children and answer 409, or a withdrawing writer's removeUnused) counts itself doomed and frees what it
  // replaced. The generic check above counts any other upload to the path as an explanation, even one that
  // answered 409; here only a request that answered 200 explains a 200 upload's file being gone.
  it.each([
    ['answered 200', false],
    ['answered 200 by the taken rule (it withdrew)', true],
  ])('a one-file upload %s is there unless a request that succeeded explains it', async (_name, withdrew) => {
    const ops: Op[] = [{ kind: 'upload', paths: ['/a/b/u'] }, { kind: 'upload', paths: ['/a/b/u'] }, { kind: 'delete', path: '/a/b', recursive: false, budget: BIG }];
    await fc.assert(
      fc.asyncProperty(fc.nat(), async (order) => {
        const s = new StepScheduler(order);
        const { answers, ports, violations } = await scenario(s, ops, BIG);
        const there = byPathOf(ports.nodes.all(DRIVE), '/a/b/u');
        const problems = [...violations];
        ops.forEach((o, i) => {
          if (o.kind !== 'upload' || !answers[i]?.ok) return;
          const explained = ops.some((_other, j) => j !== i && answers[j]?.ok);
          const body = there?.kind === 'file' ? ports.objects.stored.get(there.objectKey)?.toString() : undefined;
          // `withdrew`: only the 200s of the taken rule (the upload's own undo ran), the hot path's new answer.
          const key = [...ports.objects.stored].find(([, stored]) => stored.toString() === bytesOf(i, '/a/b/u').toString())?.[0];
          if (withdrew && !s.trace.some((step) => key !== undefined && step.includes(`IfSame(d, /a/b/u, ${key.split('/')[1]}`))) return;
          if (!explained && body !== bytesOf(i, '/a/b/u').toString()) problems.push(`upload ${i} answered 200, no request that answered 200 explains it, and /a/b/u holds ${there ? `${there.id} (${body})` : 'nothing'}`);
        });
        if (problems.length > 0) throw new Error(`${problems.join('\n')}\nanswers: ${JSON.stringify(answers.map((a) => (a.ok ? 'ok' : a.code)))}\nsteps:\n${s.trace.join('\n')}`);
      }),
      { numRuns: RACE_RUNS, seed: 23 },
    );
  });

  // A one-file upload killed between its bytes and its record (its first round is the put with the folder
  // read, two calls): its bytes are named by nothing, which only the scheduled check's collection may delete.
  it('leaves the bytes of a one-file upload killed after its put to the scheduled check', async () => {
    const ops: Op[] = [{ kind: 'upload', paths: ['/a/b/u'] }, { kind: 'mkdir', path: '/d/m' }];
    const s = new StepScheduler(0);
    const { ports, violations, deaths } = await scenario(s, ops, BIG, [2]);
    expect(violations).toEqual([]);
    expect(deaths.killed.has(0)).toBe(true);
    expect(deaths.stored.get(0)?.size).toBe(1);
    // Collected: no record, no object, no journal entry.
    expect(ports.nodes.peek(DRIVE, '/a/b/u')).toBeUndefined();
    expect([...ports.objects.objects.keys()].filter((key) => deaths.stored.get(0)!.has(key))).toEqual([]);
    expect(ports.journal.entries.size).toBe(0);
  });

  // Gap 13 (random seed -1021641155, with deaths; opened by gap 11's order): upload 2 withdrew, its record taken
  // by upload 0; upload 0 withdrew, put upload 2's record back and was killed before it asked whether upload 2
  // withdrew: that record, of an upload answered 409, stood, and the sweep kept it. The sweep now removes a
  // record still naming a key of an entry noted withdrawn. The order the search drew, replayed exactly.
  it('closed gap: gap 13, a writer killed between its put-back and its question leaves no record of a 409', async () => {
    const ops: Op[] = [
      { kind: 'upload', paths: ['/a/f', '/a/b/c/u'] },
      { kind: 'move', from: '/a/f', to: '/d/b', budget: 0 },
      { kind: 'upload', paths: ['/a/b/c/u', '/n/u'] },
      { kind: 'move', from: '/a/b', to: '/d/b', budget: 0 },
    ];
    const s = new StepScheduler(265006299);
    const { answers, ports, violations, deaths } = await scenario(s, ops, 0, [12]);
    expect(deaths.killed.has(0)).toBe(true);
    expect(s.trace.some((step) => step.startsWith('nodes.restoreIfSame(d, /a/b/c/u'))).toBe(true);
    expect([...violations, ...checkOutcomes(ops, answers, ports, deaths)]).toEqual([]);
  });

  // Each known gap, shown: its requests, in the orders a fixed seed picks, break the protocol. A test here that
  // fails says the gap is fixed: take it out of KNOWN_GAPS and the README, and this test with it.
  const gaps: [string, Op[], RegExp][] = [];
  // Jest refuses an empty table: none may be open.
  if (gaps.length > 0) it.each(gaps)('still has the known gap: %s (case %#)', async (name, ops, symptom) => {
    expect(KNOWN_GAPS[name](ops)).toBe(true);
    const result = await fc.check(protocolHolds(fc.constant(ops)), { numRuns: 3000, seed: 23, endOnFailure: true });
    expect(result.failed).toBe(true);
    expect(String(result.errorInstance)).toMatch(symptom);
  });

  // A move whose request died after it unmarked its source (refused: a delete had a folder above) and before
  // it removed its destination: its job finds the source taken by the delete and cannot mark it again. It
  // stopped leaving the destination marked; now it removes it (the fixed gap's test, with deaths).
  it('closed gap: a move job that cannot mark its source again clears its destination', async () => {
    const ops: Op[] = [
      { kind: 'delete', path: '/a', recursive: true, budget: 0 },
      { kind: 'move', from: '/a/b', to: '/d/b', budget: 0 },
      { kind: 'mkdir', path: '/a/n' },
      { kind: 'upload', paths: ['/n/u'] },
    ];
    await fc.assert(protocolHolds(fc.constant(ops), fc.constant([5, 8])), { numRuns: RACE_RUNS, seed: 23 });
  });

  // Found by a random seed (-748290373, 20,000 runs): a mkdir of /a/b/c and an upload to /a/b/c/u both find
  // /a/b/c missing and make it; the upload's is kept, its record written and the folders above read again
  // (live); the mkdir finds /a marked by an empty-folder delete and withdraws: its `removeUnused` removed
  // /a/b/c (unmarked, not kept), and died before it looked for children and put the folder back, leaving the
  // upload's file, answered 200, without its folder. A withdrawing writer now removes a folder as an
  // empty-folder delete does: a job noted, the folder marked `empty`, its children looked for, then removed.
  it.each([4, 5, 6, 7])('closed gap: a failed mkdir dying after %i calls leaves the folder an upload stored into', async (calls) => {
    const ops: Op[] = [{ kind: 'mkdir', path: '/a/b/c' }, { kind: 'upload', paths: ['/a/b/c/u'] }, { kind: 'delete', path: '/a', recursive: false, budget: 0 }];
    await fc.assert(protocolHolds(fc.constant(ops), fc.constant([calls, undefined, undefined, undefined])), { numRuns: RACE_RUNS, seed: 23 });
  });

  // Found by a random seed (-897269336): the second move's request died at its sixth call, after it made its
  // destination inside the first move's source and before it read above again; its job went on without that
  // read, and each job waited for the other's mark for good. A step of a move whose request did not note the
  // read as passed (`MOVE_READ_ABOVE`) now reads above both ends itself, and stops on a mark there. Deaths at
  // its sixth to eighth calls: around that read and its note, as the scheduler orders the calls.
  it.each([6, 7, 8])('closed gap: two moves into each other, one request dying after %i calls, both end', async (calls) => {
    const ops: Op[] = [
      { kind: 'move', from: '/a', to: '/d/b', budget: 0 },
      { kind: 'move', from: '/d', to: '/a/m', budget: 0 },
    ];
    expect(knownGap(ops)).toBe(false);
    await fc.assert(protocolHolds(fc.constant(ops), fc.constant([undefined, calls, undefined, undefined])), { numRuns: RACE_RUNS, seed: 23 });
  });

  // An empty-folder delete noted no job: one that died after its mark (its third call then; its fourth now,
  // after the job's note) left the folder marked until fsck --repair, and a folder move above it waited for
  // it for good. It now notes an `empty` job before its mark, which the sweep sends on and whose step
  // finishes what the request began; and an empty-folder delete may die in the generated runs too.
  it.each([3, 4, 5, 6])('closed gap: an empty-folder delete that dies after %i calls leaves its job to finish it', async (calls) => {
    const ops: Op[] = [{ kind: 'move', from: '/a', to: '/m', budget: BIG }, { kind: 'delete', path: '/a/b', recursive: false, budget: 0 }];
    await fc.assert(protocolHolds(fc.constant(ops), fc.constant([undefined, calls])), { numRuns: RACE_RUNS, seed: 23 });
  });
});

import { acceptDelete } from '../../functions/core/delete-folder';
import { deleteFiles } from '../../functions/core/delete-files';
import { type EmptyOutcome, acceptEmptyTrash } from '../../functions/core/empty-trash';
import { reportCleanUpsTo } from '../../functions/core/clean-up';
import { stepLeaseMs } from '../../functions/core/background-jobs';
import { advanceJob } from '../../functions/core/jobs';
import type { FileNode, Job } from '../../functions/core/ports';
import { type TrashPolicy, trashId } from '../../functions/core/trash';
import { uploadFiles } from '../../functions/core/upload';
import { type MemoryPorts, gatePorts, memoryPorts } from './memory-ports';

// Emptying the trash of a subtree (issue 28; docs/trash-design.md, "Purge, the sweep and fsck") on the memory
// ports: within the request's budget, or as an `empty-trash` job whose steps may die at any port call.

const DRIVE = 'd';
let ports: MemoryPorts;
/**
 * The trash's clock: the machine's at the start, and the requests to empty go by the machine's (a folder
 * delete's job stamps its row's id with it, after the start); moved on by a test.
 */
let now: number;
let policy: TrashPolicy;
const deps = () => ({ ...ports, trashPolicy: policy });

// The killed steps' failed clean-ups are what the test means: not said on stderr.
beforeAll(() => reportCleanUpsTo(() => undefined));

beforeEach(() => {
  ports = memoryPorts();
  now = Date.now();
  policy = { days: 7, by: 'key_1', now: () => now };
});

async function upload(path: string, body: string): Promise<FileNode> {
  return (await uploadFiles(deps(), DRIVE, [{ filename: 'x', data: Buffer.from(body) }], [{ path }]))[0];
}

/** Runs every queued job step to its end, each with no budget (a step still purges something): a cap on steps, not on time. */
async function drainJobs(): Promise<number> {
  let steps = 0;
  for (let message = ports.queue.take(); message; message = ports.queue.take(), steps++) {
    if (steps === 200) throw new Error('jobs did not end in 200 steps');
    await advanceJob(deps(), message.id, message.drive, 0);
  }
  return steps;
}

/**
 * The trash of the test: below /t two files deleted on their own and a folder of three files deleted as a
 * job (one row, three file members); outside it, /o/x. Returns the files below /t and the one outside.
 */
async function fillTrash(): Promise<{ inside: FileNode[]; outside: FileNode }> {
  const inside = [await upload('/t/a', 'aa'), await upload('/t/b', 'bbb'), await upload('/t/c/d', 'dddd'), await upload('/t/c/e', 'eeeee'), await upload('/t/c/f/g', 'g')];
  const outside = await upload('/o/x', 'xxxxxx');
  await deleteFiles(deps(), DRIVE, ['/t/a', '/t/b', '/o/x']);
  expect((await acceptDelete(deps(), DRIVE, '/t/c', true, 0)).done).toBe(false);
  await drainJobs();
  expect(ports.trash.all(DRIVE).map(({ row }) => `${row.type} ${row.path} ${row.state}`).sort()).toEqual(['file /o/x trashed', 'file /t/a trashed', 'file /t/b trashed', 'folder /t/c trashed']);
  return { inside, outside };
}

const TOTALS = { items: 3, files: 5, bytes: 2 + 3 + 4 + 5 + 1 };

/** Only /o/x's row is left, with its bytes; every object below /t is gone; no row is left claimed. */
function expectEmptied(inside: FileNode[], outside: FileNode): void {
  expect(ports.trash.all(DRIVE).map(({ row }) => ({ path: row.path, purging: row.purging }))).toEqual([{ path: '/o/x', purging: undefined }]);
  for (const file of inside) expect(ports.objects.objects.has(file.objectKey)).toBe(false);
  expect(ports.objects.objects.has(outside.objectKey)).toBe(true);
}

function jobOf(outcome: EmptyOutcome): Job {
  if (outcome.done) throw new Error('expected a job');
  return outcome.job;
}

describe('Function: acceptEmptyTrash', () => {
  it('empties the subtree within its budget and answers the totals, with no job', async () => {
    const { inside, outside } = await fillTrash();

    const outcome = await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 60_000);

    expect(outcome).toEqual({ done: true, emptied: TOTALS });
    expectEmptied(inside, outside);
    expect(ports.jobs.jobs.size).toBe(1); // the folder delete's, none of its own
  });

  it('hands what it did not empty to a job (budget 0), which the worker runs to done with the totals', async () => {
    const { inside, outside } = await fillTrash();

    const job = jobOf(await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 0));
    expect(job).toMatchObject({ kind: 'empty-trash', path: '/t', status: 'running', files: 0 });
    expect(await ports.jobs.inBackground(DRIVE)).toEqual([expect.objectContaining({ id: job.id })]);
    await drainJobs();

    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'done', files: TOTALS.files, items: TOTALS.items, bytes: TOTALS.bytes });
    expect(await ports.jobs.inBackground(DRIVE)).toEqual([]);
    expectEmptied(inside, outside);
  });

  it('leaves what was trashed after the request, even below its path', async () => {
    const { inside, outside } = await fillTrash();
    const job = jobOf(await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 0));
    // Trashed a minute after the request (by the trash's clock, which stamps its row's id).
    now = Date.now() + 60_000;
    const later = await upload('/t/later', 'later');
    await deleteFiles(deps(), DRIVE, ['/t/later']);

    await drainJobs();

    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'done', items: TOTALS.items });
    expect(ports.trash.all(DRIVE).map(({ row }) => row.path).sort()).toEqual(['/o/x', '/t/later']);
    for (const file of inside) expect(ports.objects.objects.has(file.objectKey)).toBe(false);
    expect(ports.objects.objects.has(later.objectKey)).toBe(true);
    expect(ports.objects.objects.has(outside.objectKey)).toBe(true);
  });

  it('leaves a row a restore or another purge holds', async () => {
    const { outside } = await fillTrash();
    const held = ports.trash.all(DRIVE).find(({ row }) => row.path === '/t/a')!.row;
    await ports.trash.claim(DRIVE, held.id, 'purge', 'another purge', new Date(now), 60_000);

    const outcome = await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 60_000);

    expect(outcome).toEqual({ done: true, emptied: { items: 2, files: 4, bytes: TOTALS.bytes - 2 } });
    expect(ports.trash.all(DRIVE).map(({ row }) => row.path).sort()).toEqual(['/o/x', '/t/a']);
    expect(ports.objects.objects.has(outside.objectKey)).toBe(true);
  });

  it('purges a folder item of 2,500 files a page of members a step, and goes on with it in the next', async () => {
    // Prepare: a trashed folder's row, written as a delete's job leaves it, its files' bytes stored.
    const at = new Date(now).toISOString();
    const row = { id: trashId(now), type: 'folder' as const, path: '/big', bytes: 0, files: 0, folderId: 'big', folderCreatedAt: at, state: 'filling' as const, reason: 'deleted' as const, deletedAt: at, purgeAt: new Date(now + 7 * 86_400_000).toISOString() };
    await ports.trash.begin(DRIVE, row);
    const keys: string[] = [];
    for (let i = 0; i < 2500; i++) {
      const key = `${DRIVE}/member-${i}`;
      await ports.objects.put(key, Buffer.from('m'), 'text/plain');
      keys.push(key);
      const file: FileNode = { kind: 'file', id: `member-${i}`, path: `/big/f${i}`, objectKey: key, etag: 'e', size: 1, contentType: 'text/plain', createdAt: at };
      await ports.trash.putMember(DRIVE, row.id, { relative: `f${i}`, file });
    }
    expect(await ports.trash.filled(DRIVE, row.id, { files: 2500, bytes: 2500, purgeAt: row.purgeAt })).toBe(true);

    // Act
    const job = jobOf(await acceptEmptyTrash(deps(), DRIVE, '/big', new Date(), 0));
    const steps = await drainJobs();

    // Assess: three pages of members, each in a step of its own (a step with no budget does one and sends the job on).
    expect(steps).toBeGreaterThanOrEqual(3);
    expect(await ports.jobs.get(DRIVE, job.id)).toMatchObject({ status: 'done', items: 1, files: 2500, bytes: 2500 });
    expect(ports.trash.all(DRIVE)).toEqual([]);
    for (const key of keys) expect(ports.objects.objects.has(key)).toBe(false);
  });

  it('answers a retry of the same attempt for its job: 202 while it runs, then 200 with its totals', async () => {
    const { inside, outside } = await fillTrash();
    const first = jobOf(await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 0, { attempt: 'scope+key' }));

    const again = await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 0, { attempt: 'scope+key' });
    expect(jobOf(again).id).toBe(first.id);
    expect([...ports.jobs.jobs.values()].filter((job) => job.kind === 'empty-trash')).toHaveLength(1);
    await drainJobs();

    expect(await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 0, { attempt: 'scope+key' })).toEqual({ done: true, emptied: TOTALS });
    // Another attempt is another emptying: nothing is left for it.
    expect(await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 0, { attempt: 'scope+other' })).toEqual({ done: true, emptied: { items: 0, files: 0, bytes: 0 } });
    expectEmptied(inside, outside);
  });

  it('takes over at once the item a first try of the same attempt died in (its claim is the attempt’s)', async () => {
    const { inside, outside } = await fillTrash();
    // The first try dies at its second row's removal: that row's bytes are gone, its claim holds.
    let removes = 0;
    const { clock: _, ...stores } = ports;
    const dying = { ...gatePorts(stores, async (_label, call) => {
      if (call.port === 'trash' && call.method === 'remove' && ++removes === 2) throw new Error('killed');
    }), trashPolicy: policy };
    await expect(acceptEmptyTrash(dying, DRIVE, '/t', new Date(), 60_000, { attempt: 'scope+key' })).rejects.toThrow('killed');
    expect(ports.trash.all(DRIVE).filter(({ row }) => row.purging !== undefined)).toHaveLength(1);

    const retried = await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 60_000, { attempt: 'scope+key' });

    // What the first try freed was never answered for; the retry answers for the other two, the held one included.
    expect(retried).toMatchObject({ done: true, emptied: { items: 2 } });
    expectEmptied(inside, outside);
  });

  // Every port call of the first step, in turn, is where it dies (it and every call after it throw, its job
  // claim never given back): the next step, once that claim lapsed, finishes the job with the same totals.
  it('finishes the job after a step killed at any port call, with exact totals', async () => {
    let survived = false;
    let killAt = 0;
    for (; !survived; killAt++) {
      if (killAt === 80) throw new Error('a step made more than 80 port calls');
      ports = memoryPorts();
      const { inside, outside } = await fillTrash();
      const job = jobOf(await acceptEmptyTrash(deps(), DRIVE, '/t', new Date(), 0));
      const message = ports.queue.take()!;
      let calls = 0;
      const { clock: _, ...stores } = ports;
      const dying = { ...gatePorts(stores, async () => {
        if (calls++ >= killAt) throw new Error(`killed at call ${killAt}`);
      }), trashPolicy: policy };

      // A step with a budget: it purges several rows before it ends, so that a death can fall between them.
      survived = await advanceJob(dying, message.id, message.drive, 60_000).then(() => true, () => false);
      ports.clock.advance(stepLeaseMs(60_000) + 1);
      if (!survived) await ports.queue.send(message);
      await drainJobs();

      expect({ killAt, job: await ports.jobs.get(DRIVE, job.id) }).toMatchObject({ killAt, job: { status: 'done', files: TOTALS.files, items: TOTALS.items, bytes: TOTALS.bytes } });
      expectEmptied(inside, outside);
    }
    // The step that survived made every call it needed: claims, purges and notes of all three rows.
    expect(killAt).toBeGreaterThan(20);
  });
});

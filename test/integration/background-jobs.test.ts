import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoJobStore } from '../../functions/aws/dynamo-jobs';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { DynamoFileRecords } from '../../functions/aws/dynamo-file-records';
import { DynamoUploadJournal } from '../../functions/aws/dynamo-upload-journal';
import { MAX_BACKGROUND_JOBS, RESERVATION_GRACE_MS, admitJob } from '../../functions/core/background-jobs';
import { acceptCopy } from '../../functions/core/copy';
import { acceptDelete } from '../../functions/core/delete-folder';
import { advanceJob, resumeStalledJobs } from '../../functions/core/jobs';
import { acceptMove } from '../../functions/core/move';
import type { FileNode, ObjectCopier, ObjectStore } from '../../functions/core/ports';
import { commitFiles } from '../../functions/core/upload';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// Work a drive sets going: a folder delete, move or copy of any size takes one rate-limit token, so a drive
// may have at most MAX_BACKGROUND_JOBS jobs in the worker's hands; past them a new one is refused with 429
// before it writes anything. Forced step by step on the embedded DynamoDB, with a queue that holds every
// job (nothing runs unless the test runs it), so the outcome is the same at any machine speed.

const dynamo = useEmbeddedDynamo('background-jobs');
let client: DynamoDBClient;
let store: DynamoNodeStore;
let records: DynamoFileRecords;
let journal: DynamoUploadJournal;
let jobs: DynamoJobStore;
let drive: string;
let driveCount = 0;
const objects: ObjectStore & ObjectCopier = {
  put: async () => undefined,
  open: async () => undefined,
  deleteMany: async () => undefined,
  copy: async () => 'copied',
};
const sent: string[] = [];
const holding = { send: async (job: { id: string }) => void sent.push(job.id) };
const deps = () => ({ nodes: store, records, objects, journal, jobs, queue: holding });

beforeAll(async () => {
  client = dynamo.client;
  store = new DynamoNodeStore(client, LOCAL_RESOURCES.nodesTable);
  records = new DynamoFileRecords(client, LOCAL_RESOURCES.nodesTable, LOCAL_RESOURCES.uploadsTable, LOCAL_RESOURCES.changesTable);
  journal = new DynamoUploadJournal(client, LOCAL_RESOURCES.uploadsTable);
  jobs = new DynamoJobStore(client, LOCAL_RESOURCES.uploadsTable);
});

beforeEach(() => {
  drive = `background-${++driveCount}`;
});

/** `count` files under `folder`, stored as an upload stores them. */
async function seed(folder: string, count: number): Promise<void> {
  const files = Array.from({ length: count }, (_, i): FileNode => {
    const id = `${folder.slice(1)}-${i}`;
    return { kind: 'file', id, path: `${folder}/f${i}.txt`, size: 1, contentType: 'text/plain', createdAt: '2026-11-26T00:00:00.000Z', objectKey: `${drive}/${id}`, etag: id };
  });
  await commitFiles({ nodes: store, objects }, drive, files);
}

describe('the cap on a drive\'s background jobs', () => {
  it(`refuses a folder copy, move or delete past ${MAX_BACKGROUND_JOBS} jobs in the background with 429, writing nothing, and takes one once a job ends`, async () => {
    // Prepare: as many folder moves as the cap, each handed to the worker (a budget of 0), none run yet.
    const moved: string[] = [];
    for (let i = 0; i < MAX_BACKGROUND_JOBS; i++) {
      await seed(`/src${i}`, 2);
      const started = await acceptMove(deps(), drive, `/src${i}`, `/dst${i}`, {}, 0);
      expect(started.done).toBe(false);
      moved.push((started as { job: { id: string } }).job.id);
    }
    await seed('/more', 20);

    // Act and assess: each kind of job is refused before its first write, with a Retry-After.
    const refused = { code: 'rate_limited', headers: { 'Retry-After': expect.stringMatching(/^[1-9][0-9]*$/) } };
    await expect(acceptCopy(deps(), drive, '/more', '/more-copy', {}, 0)).rejects.toMatchObject(refused);
    await expect(acceptMove(deps(), drive, '/more', '/more-moved', {}, 0)).rejects.toMatchObject(refused);
    await expect(acceptDelete(deps(), drive, '/more', true, 0)).rejects.toMatchObject(refused);
    expect(await store.get(drive, '/more-copy')).toBeUndefined();
    expect(await store.get(drive, '/more-moved')).toBeUndefined();
    expect(await store.get(drive, '/more')).toEqual(expect.not.objectContaining({ deleting: expect.anything() }));
    // Another drive is not held back by this one.
    const other = drive;
    drive = `${other}-neighbour`;
    await seed('/own', 2);
    expect((await acceptMove(deps(), drive, '/own', '/own-moved', {}, 0)).done).toBe(false);
    drive = other;

    // A job that ends frees its place: the copy is taken.
    expect(await advanceJob(deps(), moved[0], drive, 60_000)).toMatchObject({ status: 'done', ended: 'moved' });
    const copy = await acceptCopy(deps(), drive, '/more', '/more-copy', {}, 0);
    expect(copy.done).toBe(false);
  });

  it('does not count a job that ended without leaving the list (a step that died between)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < MAX_BACKGROUND_JOBS; i++) {
      await seed(`/s${i}`, 2);
      const started = await acceptMove(deps(), drive, `/s${i}`, `/d${i}`, {}, 0);
      ids.push((started as { job: { id: string } }).job.id);
    }
    // The job ends, but its step dies before it leaves the list.
    await jobs.finish(ids[0], 0, 'moved');
    await seed('/next', 2);
    expect((await acceptMove(deps(), drive, '/next', '/next-moved', {}, 0)).done).toBe(false);
    expect((await jobs.inBackground(drive)).map((entry) => entry.id)).not.toContain(ids[0]);
  });

  it(`admits exactly ${MAX_BACKGROUND_JOBS} of ${2 * MAX_BACKGROUND_JOBS} folder moves started together, before any is handed off`, async () => {
    // Prepare: folders to move, each too big for its request's budget (0), so none ends in its request.
    const count = 2 * MAX_BACKGROUND_JOBS;
    for (let i = 0; i < count; i++) await seed(`/burst${i}`, 2);
    const refused = { code: 'rate_limited', headers: { 'Retry-After': '30' } };

    // Act: every request checks the cap before any of them has handed its job to the worker.
    const outcomes = await Promise.allSettled(Array.from({ length: count }, (_, i) => acceptMove(deps(), drive, `/burst${i}`, `/moved${i}`, {}, 0)));

    // Assess: as many as the cap took a job, the rest were refused before writing anything.
    const taken = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const rejected = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    expect(taken).toHaveLength(MAX_BACKGROUND_JOBS);
    for (const started of taken) expect(started.done).toBe(false);
    for (const reason of rejected) expect(reason).toMatchObject(refused);
    // The message says the drive is full, not how many jobs it has (other keys' work among them).
    for (const reason of rejected) expect((reason as Error).message).not.toMatch(/[0-9]+ folder/);
    const made = await Promise.all(Array.from({ length: count }, (_, i) => store.get(drive, `/moved${i}`)));
    expect(made.filter((node) => node !== undefined)).toHaveLength(MAX_BACKGROUND_JOBS);
    expect(await jobs.inBackground(drive)).toHaveLength(MAX_BACKGROUND_JOBS);
  });

  it(`reserves exactly ${MAX_BACKGROUND_JOBS} places for ${2 * MAX_BACKGROUND_JOBS} admissions together, and keeps an unwritten job's place only while its request may live`, async () => {
    // Act: admissions of jobs not yet written (their requests are between reserving and writing).
    const ids = Array.from({ length: 2 * MAX_BACKGROUND_JOBS }, (_, i) => `burst-${drive}-${i}`);
    const outcomes = await Promise.allSettled(ids.map((id) => admitJob(jobs, { id, drive })));

    // Assess: the cap holds, and the refused ones did not take the places of jobs about to be written.
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(MAX_BACKGROUND_JOBS);
    expect(await jobs.inBackground(drive)).toHaveLength(MAX_BACKGROUND_JOBS);
    await expect(admitJob(jobs, { id: `late-${drive}`, drive })).rejects.toMatchObject({ code: 'rate_limited' });
    // Requests that died before writing their jobs: their places go once no request can still be alive.
    const later = new Date(Date.now() + RESERVATION_GRACE_MS + 1_000);
    await admitJob(jobs, { id: `after-${drive}`, drive }, MAX_BACKGROUND_JOBS, later);
    expect((await jobs.inBackground(drive)).map((entry) => entry.id)).toEqual([`after-${drive}`]);
  });

  it('gives back the place of a job that ends within its request', async () => {
    // Prepare: small folders, each done within its request's budget.
    for (let i = 0; i <= MAX_BACKGROUND_JOBS; i++) await seed(`/small${i}`, 1);

    // Act: more jobs than the cap, one after another: a copy, a move and a delete, each done in its request.
    for (let i = 0; i < MAX_BACKGROUND_JOBS; i++) expect((await acceptCopy(deps(), drive, `/small${i}`, `/small${i}-copy`, {}, 60_000)).done).toBe(true);
    expect((await acceptMove(deps(), drive, `/small${MAX_BACKGROUND_JOBS}`, '/small-moved', {}, 60_000)).done).toBe(true);
    expect((await acceptDelete(deps(), drive, '/small-moved', true, 60_000)).done).toBe(true);

    // Assess: none is left holding a place.
    expect(await jobs.inBackground(drive)).toEqual([]);
  });

  it('lists a stalled job the sweep sends again among the background ones', async () => {
    await seed('/stalled', 2);
    const job = { id: `stalled-${drive}`, drive, kind: 'move' as const, path: '/stalled', to: '/elsewhere', folderId: 'x', status: 'running' as const, files: 0, createdAt: '2026-11-26T00:00:00.000Z', updatedAt: '2026-11-26T00:00:00.000Z' };
    await jobs.create(job);
    await resumeStalledJobs({ jobs, queue: holding }, new Date('2026-11-27T00:00:00.000Z'), 60_000);
    expect((await jobs.inBackground(drive)).map((entry) => entry.id)).toContain(job.id);
  });
});

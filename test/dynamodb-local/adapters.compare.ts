import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { DynamoKeyStore, DynamoRateLimiter } from '../../functions/aws/dynamo-access';
import { DynamoFileRecords } from '../../functions/aws/dynamo-file-records';
import { DynamoJobStore } from '../../functions/aws/dynamo-jobs';
import { DynamoLinkStore } from '../../functions/aws/dynamo-links';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { DynamoUploadJournal } from '../../functions/aws/dynamo-upload-journal';
import { DynamoUploadSessions } from '../../functions/aws/dynamo-upload-sessions';
import type { FileNode, FolderNode, Job, UploadSession } from '../../functions/core/ports';
import { type Backend, type Outcome, TABLES, canonicalNumbers, describeBoth, outcome, startBackends } from './backends';

// Drive's own DynamoDB adapters (functions/aws/dynamo-*.ts), the same calls on the embedded DynamoDB and on
// AWS's DynamoDB Local: every call's result, and the tables' items afterwards, must match.

const DRIVE = 'drive-1';
const CREATED = '2026-01-01T00:00:00.000Z';
const folder = (path: string, id = `id-${path}`): FolderNode => ({ kind: 'folder', id, path, createdAt: CREATED });
const file = (path: string, id = `id-${path}`, size = 1): FileNode => ({ kind: 'file', id, path, size, contentType: 'text/plain', createdAt: CREATED, objectKey: `obj-${id}`, etag: `etag-${id}` });

/** Each call's outcome, under its label. */
type Log = { label: string; outcome: Outcome }[];

/**
 * What differs between any two runs whatever the backend: random ids (journal entries, trash rows), the clock's times
 * (`updatedAt`, TTLs, claims). Replaced by placeholders before the comparison.
 */
function normalize(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value)
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
      // A trash row's due entry is sharded by its (random) id.
      .replace(/(trashdue#\d{4}-\d\d-\d\d#)\d+/g, '$1<shard>')
      .replace(/20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, (time) => (time === CREATED ? time : '<now>')),
    (name, held: unknown) => (name === 'expiresAt' || name === 'claimedUntil' ? '<clock>' : held),
  );
}

/** Every item of Drive's three tables, in key order. */
async function dump(client: DynamoDBClient): Promise<Record<string, Record<string, AttributeValue>[]>> {
  const tables: Record<string, Record<string, AttributeValue>[]> = {};
  for (const table of Object.values(TABLES).filter((name) => name !== TABLES.bucket)) {
    const items: Record<string, AttributeValue>[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    // A Scan's order is each emulator's own (AWS's is by hash): compared in key order.
    tables[table] = items.map((item) => normalize(canonicalNumbers(item)) as Record<string, AttributeValue>).sort((a, b) => keyString(a).localeCompare(keyString(b)));
  }
  return tables;
}

/** An item as one string to sort by: its key first, then (for keys alike once ids are placeholders) the rest. */
function keyString(item: Record<string, AttributeValue>): string {
  return [item.pk?.S, item.sk?.S, item.id?.S, sortedJson(item)].join('\u0000');
}

/** JSON with every object's names in order, so that two equal items give one string. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return `{${Object.keys(value).sort().map((name) => `${JSON.stringify(name)}:${sortedJson((value as Record<string, unknown>)[name])}`).join(',')}}`;
}

describeBoth("Drive's DynamoDB adapters do the same on the embedded DynamoDB and on DynamoDB Local", () => {
  let backends: Awaited<ReturnType<typeof startBackends>>;
  beforeAll(async () => {
    backends = await startBackends();
  });
  afterAll(async () => {
    await backends?.close();
  });

  /** Runs `scenario` on each backend and expects the same log and the same tables afterwards. */
  async function same(scenario: (client: DynamoDBClient, step: (label: string, call: () => Promise<unknown>) => Promise<unknown>) => Promise<void>): Promise<Log> {
    const run = async ({ client }: Backend) => {
      const log: Log = [];
      await scenario(client, async (label, call) => {
        const result = await outcome(call);
        log.push({ label, outcome: normalize(result) as Outcome });
        return 'value' in result ? result.value : undefined;
      });
      return { log, tables: await dump(client) };
    };
    const embedded = await run(backends.embedded);
    const local = await run(backends.local);
    expect(embedded.log).toEqual(local.log);
    expect(embedded.tables).toEqual(local.tables);
    return local.log;
  }

  test('node store: folders, files, conditions, listings and delete and move marks', async () => {
    const log = await same(async (client, step) => {
      const nodes = new DynamoNodeStore(client, TABLES.nodesTable);
      await step('create /a', () => nodes.createFolder(DRIVE, folder('/a')));
      await step('create /a again, another id', () => nodes.createFolder(DRIVE, folder('/a', 'other')));
      await step('create /b marked for a move', () => nodes.createFolder(DRIVE, { ...folder('/b'), moving: 'job-1' }));
      await step('create /b marked again', () => nodes.createFolder(DRIVE, { ...folder('/b', 'other'), moving: 'job-2' }));
      for (const name of ['f1', 'f2', 'f3', 'f4', 'f5']) await step(`put /a/${name}`, () => nodes.putFile(DRIVE, file(`/a/${name}`)));
      await step('put over a folder', () => nodes.putFile(DRIVE, file('/a')));
      await step('put, not replacing, over a file', () => nodes.putFile(DRIVE, file('/a/f1', 'new'), { replace: false }));
      await step('put, not replacing, its own retry', () => nodes.putFile(DRIVE, file('/a/f1'), { replace: false }));
      await step('put, replacing a file', () => nodes.putFile(DRIVE, file('/a/f2', 'f2-v2', 2)));
      await step('create a folder over a file', () => nodes.createFolder(DRIVE, folder('/a/f1')));
      await step('get /a/f2', () => nodes.get(DRIVE, '/a/f2'));
      await step('get a missing path', () => nodes.get(DRIVE, '/nope'));
      await step('get many', async () => [...(await nodes.getMany(DRIVE, ['/a/f1', '/a/f3', '/nope', '/a/f1', '/'])).entries()].sort());
      await step('children of /a', () => nodes.children(DRIVE, '/a'));
      await step('page 1 of /a', () => nodes.childrenPage(DRIVE, '/a', 2));
      await step('page 2 of /a', () => nodes.childrenPage(DRIVE, '/a', 2, 'f2'));
      await step('last page of /a', () => nodes.childrenPage(DRIVE, '/a', 2, 'f4'));
      await step('page of exactly the rest', () => nodes.childrenPage(DRIVE, '/a', 3, 'f2'));
      await step('/a has children', () => nodes.hasChildren(DRIVE, '/a'));
      await step('/b has none', () => nodes.hasChildren(DRIVE, '/b'));
      await step('restore a file that is not ours', () => nodes.restoreIfSame(DRIVE, '/a/f2', 'not-ours', file('/a/f2')));
      await step('restore ours to its previous', () => nodes.restoreIfSame(DRIVE, '/a/f2', 'f2-v2', file('/a/f2')));
      await step('remove a file that is not ours', () => nodes.removeIfSame(DRIVE, '/a/f5', 'not-ours'));
      await step('remove ours', () => nodes.removeIfSame(DRIVE, '/a/f5', 'id-/a/f5'));
      await step('mark /a deleting empty', () => nodes.markDeleting(DRIVE, folder('/a'), 'empty'));
      await step('mark /a deleting recursive', () => nodes.markDeleting(DRIVE, folder('/a'), 'recursive'));
      // Refused (recursive is never downgraded): the held folder comes back with the refusal.
      await step('mark /a deleting empty again', () => nodes.markDeleting(DRIVE, folder('/a'), 'empty'));
      await step('mark /a deleting, another id', () => nodes.markDeleting(DRIVE, folder('/a', 'other'), 'empty'));
      await step('mark a deleting folder moving', () => nodes.markMoving(DRIVE, folder('/a'), 'job-1'));
      await step('mark /b moving by its own job', () => nodes.markMoving(DRIVE, folder('/b'), 'job-1'));
      await step('mark /b moving by another job', () => nodes.markMoving(DRIVE, folder('/b'), 'job-2'));
      await step('mark /b deleting while it moves', () => nodes.markDeleting(DRIVE, folder('/b'), 'empty'));
      await step('unmark /b, wrong job', () => nodes.unmarkMoving(DRIVE, folder('/b'), 'job-2'));
      await step('unmark /b', () => nodes.unmarkMoving(DRIVE, folder('/b'), 'job-1'));
      await step('unmark deleting of a recursive delete', () => nodes.unmarkDeleting(DRIVE, folder('/a')));
      await step('remove /b, never marked', () => nodes.removeFolder(DRIVE, folder('/b')));
      await step('remove /a', () => nodes.removeFolder(DRIVE, folder('/a')));
    });
    expect(log.find((entry) => entry.label === 'mark /a deleting empty again')?.outcome).toEqual({ value: expect.objectContaining({ deleting: 'recursive' }) });
  });

  test('file records: moves and removals with the journal, as transactions', async () => {
    const log = await same(async (client, step) => {
      const nodes = new DynamoNodeStore(client, TABLES.nodesTable);
      const records = new DynamoFileRecords(client, TABLES.nodesTable, TABLES.uploadsTable, TABLES.changesTable);
      const sweepAfter = new Date(CREATED);
      const [src, dst] = [folder('/src'), folder('/dst')];
      for (const made of [src, dst]) await step(`create ${made.path}`, () => nodes.createFolder(DRIVE, made));
      for (const name of ['m1', 'm2', 'm3', 'r1', 'r2', 'r3']) await step(`put /src/${name}`, () => nodes.putFile(DRIVE, file(`/src/${name}`)));
      await step('put /dst/m2', () => nodes.putFile(DRIVE, file('/dst/m2', 'old-m2')));
      await step('move m1', () => records.move(DRIVE, file('/src/m1'), '/dst/m1', { sourceParent: src, destinationParent: dst, sweepAfter }));
      await step('move m1 again (gone)', () => records.move(DRIVE, file('/src/m1'), '/dst/m1b', { sourceParent: src, destinationParent: dst, sweepAfter }));
      await step('move m2 onto a file, not replacing', () => records.move(DRIVE, file('/src/m2'), '/dst/m2', { sourceParent: src, destinationParent: dst, sweepAfter }));
      await step('move m2 replacing', () => records.move(DRIVE, file('/src/m2'), '/dst/m2', { sourceParent: src, destinationParent: dst, replacing: file('/dst/m2', 'old-m2'), sweepAfter }));
      await step('move m3 under a stale parent', () => records.move(DRIVE, file('/src/m3'), '/dst/m3', { sourceParent: src, destinationParent: folder('/dst', 'stale'), sweepAfter }));
      await step('move m3, rename in one folder', () => records.move(DRIVE, file('/src/m3'), '/src/m3b', { sourceParent: src, destinationParent: src, sweepAfter }));
      await step('move a pending file', () => records.move(DRIVE, { ...file('/src/r3'), pending: 'session-1' }, '/dst/r3', { sourceParent: src, destinationParent: dst, sweepAfter }));
      await step('remove three, two stale', () => records.removeMany(DRIVE, [file('/src/r1'), file('/src/r2', 'stale'), file('/src/gone')], sweepAfter));
      await step('remove two', () => records.removeMany(DRIVE, [file('/src/r1'), file('/src/r2')], sweepAfter));
      await step('listing of /src', () => nodes.children(DRIVE, '/src'));
      await step('listing of /dst', () => nodes.children(DRIVE, '/dst'));
      const stamp = { reason: 'replaced' as const, deletedAt: CREATED, purgeAt: '2100-01-01T00:00:00.000Z', deletedBy: 'key-a' };
      const replaced = { ...file('/src/k1'), pending: 'entry-1' };
      await step('keep a replaced pending record, once', () => records.keepReplaced(DRIVE, [replaced], stamp, { once: true }));
      await step('keep it again, once (its note stands)', () => records.keepReplaced(DRIVE, [replaced], stamp, { once: true }));
      await step('keep a replaced record, no note', () => records.keepReplaced(DRIVE, [file('/src/k2')], stamp, { once: true }));
      // A group with one noted file: that one is left out, the others written (not the whole group refused).
      const group = [{ ...file('/src/k3'), pending: 'entry-2' }, replaced, { ...file('/src/k4'), pending: 'entry-2' }];
      await step('keep three, once, the middle one noted', async () => (await records.keepReplaced(DRIVE, group, stamp, { once: true })).map((row) => row.path));
    });
    const value = (label: string) => (log.find((entry) => entry.label === label)?.outcome as { value?: unknown }).value;
    expect(value('keep a replaced pending record, once')).toHaveLength(1);
    expect(value('keep it again, once (its note stands)')).toEqual([]);
    expect(value('keep a replaced record, no note')).toHaveLength(1);
    expect(value('keep three, once, the middle one noted')).toEqual(['/src/k3', '/src/k4']);
  });

  test('upload journal: entries opened, due, and closed', async () => {
    await same(async (client, step) => {
      const journal = new DynamoUploadJournal(client, TABLES.uploadsTable);
      // Enough files for two items (256 KB of paths each).
      const many = Array.from({ length: 1200 }, (_, i) => ({ path: `/j/${'p'.repeat(200)}${i}`, objectKey: `obj-${i}` }));
      const opened = (await step('open one', () => journal.open(DRIVE, [{ path: '/j/a', objectKey: 'obj-a' }], new Date('2026-01-01T00:00:00.000Z')))) as string[];
      const long = (await step('open a long batch', () => journal.open(DRIVE, many, new Date('2030-01-01T00:00:00.000Z')))) as string[];
      await step('distinct items of the long batch', async () => new Set(long).size);
      // The journal scans: its entries come in each emulator's own order.
      await step('due in 2027', async () => (await journal.due(new Date('2027-01-01T00:00:00.000Z'))).map((entry) => JSON.stringify(entry.files)).sort());
      await step('open keys', async () => (await journal.openKeys()).length);
      await step('close them', () => journal.close([...opened, ...long]));
      await step('open keys after', async () => (await journal.openKeys()).sort());
    });
  });

  test('jobs: create, claim, advance, finish, and the background list', async () => {
    const log = await same(async (client, step) => {
      const jobs = new DynamoJobStore(client, TABLES.uploadsTable);
      const job: Job = { id: 'job-a', drive: DRIVE, kind: 'move', path: '/x', folderId: 'id-x', to: '/y', status: 'running', files: 0, createdAt: CREATED, createdBy: 'key-a', updatedAt: CREATED };
      await step('create', () => jobs.create(job));
      await step('create again', () => jobs.create(job));
      await step('get', () => jobs.get(DRIVE, 'job-a'));
      await step('get from another drive', () => jobs.get('drive-2', 'job-a'));
      await step('claim', async () => ((await jobs.claim(DRIVE, 'job-a', 60_000)) as Job).id);
      await step('claim while held', () => jobs.claim(DRIVE, 'job-a', 60_000));
      await step('claim from another drive', () => jobs.claim('drive-2', 'job-a', 60_000));
      await step('claim a missing job', () => jobs.claim(DRIVE, 'job-none', 60_000));
      await step('release', () => jobs.release('job-a'));
      await step('release a missing job', () => jobs.release('job-none'));
      await step('advance', () => jobs.advanced('job-a', 3, '/x/c'));
      await step('advance a missing job', () => jobs.advanced('job-none', 1));
      await step('stalled', async () => (await jobs.stalled(new Date('2100-01-01T00:00:00.000Z'))).map((stalled) => stalled.id).sort());
      await step('finish', () => jobs.finish('job-a', 2, 'moved'));
      await step('get finished', () => jobs.get(DRIVE, 'job-a'));
      for (const id of ['b1', 'b2', 'b3']) await step(`reserve ${id} of 2`, () => jobs.reserveBackground({ id, drive: DRIVE }, 2));
      await step('to background b4', () => jobs.toBackground({ id: 'b4', drive: DRIVE }));
      await step('from background b1', () => jobs.fromBackground({ id: 'b1', drive: DRIVE }));
      await step('from background on a drive with none', () => jobs.fromBackground({ id: 'b1', drive: 'drive-2' }));
      await step('in background', async () => (await jobs.inBackground(DRIVE)).map((entry) => ({ ...entry, reservedAt: entry.reservedAt && '<time>' })).sort((a, b) => a.id.localeCompare(b.id)));
    });
    // The key that started it is kept (a step names it in what it writes).
    expect((log.find((entry) => entry.label === 'get')?.outcome as { value?: unknown }).value).toMatchObject({ createdBy: 'key-a' });
  });

  test('upload sessions: claimed, marked recording, released with and without the mark', async () => {
    const log = await same(async (client, step) => {
      const sessions = new DynamoUploadSessions(client, TABLES.uploadsTable);
      const session: UploadSession = {
        id: 'session-a', drive: DRIVE, path: '/big', size: 10, contentType: 'text/plain', fileId: 'file-a', objectKey: 'obj-file-a',
        multipartId: 'mp-a', partSize: 5, partCount: 2, createdBy: 'key-a', createdAt: CREATED, expiresAt: '2100-01-01T00:00:00.000Z',
      };
      await step('put', () => sessions.put(session));
      await step('claim', () => sessions.claim(DRIVE, 'session-a', 60_000));
      await step('claim while held', () => sessions.claim(DRIVE, 'session-a', 60_000));
      await step('mark recording', () => sessions.markRecording('session-a'));
      await step('mark a missing session', () => sessions.markRecording('session-none'));
      await step('get the missing session', () => sessions.get(DRIVE, 'session-none'));
      await step('release, the mark kept', () => sessions.release('session-a'));
      await step('get, marked', () => sessions.get(DRIVE, 'session-a'));
      await step('claim a marked session', () => sessions.claim(DRIVE, 'session-a', 60_000));
      await step('release, record free', () => sessions.release('session-a', true));
      await step('get, unmarked', () => sessions.get(DRIVE, 'session-a'));
      await step('release a missing session', () => sessions.release('session-none', true));
      await step('claim from another drive', () => sessions.claim('drive-2', 'session-a', 60_000));
      await step('remove', () => sessions.remove('session-a'));
    });
    const value = (label: string) => (log.find((entry) => entry.label === label)?.outcome as { value?: unknown }).value;
    expect(value('get the missing session')).toBeUndefined();
    expect(value('get, marked')).toMatchObject({ recording: true });
    expect(value('claim a marked session')).toMatchObject({ recording: true });
    expect(value('get, unmarked')).not.toHaveProperty('recording');
    expect(value('claim')).not.toHaveProperty('recording');
  });

  test('share links: made, found, paged through the linksByDrive index, filtered and removed', async () => {
    await same(async (client, step) => {
      const links = new DynamoLinkStore(client, TABLES.accessTable);
      const now = new Date('2026-06-01T00:00:00.000Z');
      const alive = Math.floor(now.getTime() / 1000) + 3600;
      const made = [
        { id: 'l1', path: '/docs/a.txt', createdBy: 'key-1' },
        { id: 'l2', path: '/docs/b.txt', createdBy: 'key-2' },
        { id: 'l3', path: '/docs/sub/c.txt', createdBy: 'key-1' },
        { id: 'l4', path: '/docs/b.txt', createdBy: 'key-1' },
        { id: 'l5', path: '/other/d.txt', createdBy: 'key-1', expiresAt: alive - 7200 },
        { id: 'l6', path: '/docs2/e.txt', createdBy: 'key-1' },
      ];
      for (const link of made) {
        await step(`put ${link.id}`, () => links.put({ drive: DRIVE, fileId: `file-${link.id}`, createdAt: CREATED, expiresAt: alive, ...link }));
      }
      await step('put l1 again', () => links.put({ id: 'l1', drive: DRIVE, path: '/x', fileId: 'x', createdAt: CREATED, expiresAt: alive }));
      await step('put on another drive', () => links.put({ id: 'l7', drive: 'drive-2', path: '/docs/a.txt', fileId: 'f', createdAt: CREATED, expiresAt: alive }));
      await step('get l3', () => links.get('l3'));
      await step('get a missing link', () => links.get('none'));
      // Two links share /docs/b.txt: the index orders them each emulator its own way (AWS promises no order
      // among equal index keys), so the pages are compared by their sizes and, together, as a set.
      const byPathAndId = (list: { path: string; id: string }[]) => list.map(({ path, id }) => `${path} ${id}`).sort();
      await step('pages of the drive, 2 a page', async () => {
        const sizes: number[] = [];
        const seen: { path: string; id: string }[] = [];
        let after: { path: string; id: string } | undefined;
        do {
          const out = await links.page(DRIVE, { under: '/' }, { limit: 2, now, ...(after ? { after } : {}) });
          sizes.push(out.links.length);
          seen.push(...out.links);
          after = out.next;
        } while (after && sizes.length < 10);
        return { sizes, links: byPathAndId(seen) };
      });
      await step('under /docs', async () => byPathAndId((await links.page(DRIVE, { under: '/docs' }, { limit: 10, now })).links));
      await step('at /docs/b.txt', async () => byPathAndId((await links.page(DRIVE, { path: '/docs/b.txt' }, { limit: 10, now })).links));
      await step('made by key-2', () => links.page(DRIVE, { under: '/' }, { limit: 10, now, createdBy: 'key-2' }));
      await step('remove l2 from another drive', () => links.remove('drive-2', 'l2', '/'));
      await step('remove l3 by a key confined to /other', () => links.remove(DRIVE, 'l3', '/other'));
      await step('remove l3 by a key confined to /docs', () => links.remove(DRIVE, 'l3', '/docs'));
      await step('under /docs after', async () => byPathAndId((await links.page(DRIVE, { under: '/docs' }, { limit: 10, now })).links));
    });
  });

  test('rate limiter: buckets admit and refuse the same requests on a stopped clock', async () => {
    await same(async (client, step) => {
      const limiter = new DynamoRateLimiter(client, TABLES.accessTable);
      let now = Date.parse('2026-06-01T12:00:00.000Z');
      limiter.useClock(() => now);
      for (let i = 0; i < 5; i++) await step(`take ${i} of 3`, () => limiter.take('k1#upload', 3));
      now += 20_000;
      await step('take after 20 s', () => limiter.take('k1#upload', 3));
      await step('take 2 at once', () => limiter.take('k1#upload', 3, 2));
      now += 60_000;
      await step('take 2 at once after a minute', () => limiter.take('k1#upload', 3, 2));
      // A fresh limiter guesses "idle" for a busy bucket: the refusal's item corrects it.
      const second = new DynamoRateLimiter(client, TABLES.accessTable);
      second.useClock(() => now);
      await step('second limiter, same bucket', () => second.take('k1#upload', 3));
      await step('second limiter, again', () => second.take('k1#upload', 3));
      const keys = new DynamoKeyStore(client, TABLES.accessTable);
      await step('find a missing key', () => keys.find('no-such-hash'));
      await step('touch a missing key', () => keys.touch('no-such-hash', new Date(now)));
    });
  });
});

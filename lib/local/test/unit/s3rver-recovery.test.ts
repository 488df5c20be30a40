import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3Object from 's3rver/lib/models/object';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { type WritingStore, journalWrites, markJournalInUse, recoverInterruptedWrites } from '../../s3rver-recovery';
import { type ListingStore, listingsThroughDeletes } from '../../s3rver-listing';

// A start used to read every object's metadata to find the writes a kill cut short (29-54 s for 100,000
// objects). Each write now leaves a note in a journal while it runs, and a start reads only the notes.

let root: string;
let journal: string;
let store: WritingStore & ListingStore;
const bucket = 'bucket';

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'drive-s3rver-'));
  journal = join(root, 's3-writes');
  store = new FilesystemStore(join(root, 's3')) as unknown as WritingStore & ListingStore;
  await mkdir(join(root, 's3', bucket), { recursive: true });
});

afterEach(() => rm(root, { recursive: true, force: true }));

const exists = (path: string) => stat(path).then(() => true, () => false);
const put = (key: string, content: Buffer, type = 'text/plain') => store.putObject(new S3Object(bucket, key, content, { 'content-type': type }) as unknown as { bucket: string; key: string });
const recover = () => recoverInterruptedWrites(store, bucket, join(root, 's3', bucket), journal);

/** What a kill leaves of a write the journal noted: its bytes, and its metadata cut short. */
async function killedMidWrite(key: string): Promise<string> {
  const object = store.getResourcePath(bucket, key, 'object');
  await mkdir(join(object, '..'), { recursive: true });
  await writeFile(object, 'half the bytes');
  await writeFile(store.getResourcePath(bucket, key, 'metadata.json'), '{"content-ty');
  await writeFile(join(journal, `cut.write.json`), JSON.stringify({ bucket, key }));
  return object;
}

describe('Function: recoverInterruptedWrites', () => {
  it('removes an object whose noted write a kill cut short, and forgets the note', async () => {
    await markJournalInUse(journal);
    journalWrites(store, journal);
    await put('drive/whole', Buffer.from('whole'));
    const object = await killedMidWrite('drive/cut short');

    const removed = await recover();

    expect(removed).toEqual([object]);
    expect(await exists(object)).toBe(false);
    expect(await exists(store.getResourcePath(bucket, 'drive/whole', 'object'))).toBe(true);
    expect(await readdir(journal)).toEqual([]);
  });

  it('keeps the note of a write that failed, so the next start removes its bytes', async () => {
    await markJournalInUse(journal);
    // s3rver failing once the bytes are down, before their metadata (a full disk, say).
    store.putObject = async ({ key }) => {
      await mkdir(join(store.getResourcePath(bucket, key, 'object'), '..'), { recursive: true });
      await writeFile(store.getResourcePath(bucket, key, 'object'), 'some bytes');
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    };
    journalWrites(store, journal);
    await expect(put('drive/failed', Buffer.from('some bytes'))).rejects.toThrow('ENOSPC');
    expect(await readdir(journal)).toHaveLength(1);

    const removed = await recover();

    expect(removed).toEqual([store.getResourcePath(bucket, 'drive/failed', 'object')]);
    expect(await readdir(join(root, 's3', bucket, 'drive'))).toEqual([]);
    expect(await readdir(journal)).toEqual([]);
  });

  it('reads no object the journal does not name', async () => {
    await markJournalInUse(journal);
    // Bytes with cut metadata but no note: only a scan of every object would find them.
    const object = store.getResourcePath(bucket, 'drive/unnoted', 'object');
    await mkdir(join(object, '..'), { recursive: true });
    await writeFile(object, 'bytes');
    await writeFile(store.getResourcePath(bucket, 'drive/unnoted', 'metadata.json'), '{');

    expect(await recover()).toEqual([]);
    expect(await exists(object)).toBe(true);
  });

  it('looks at every object once on a data dir from before the journal, then starts the journal', async () => {
    const object = store.getResourcePath(bucket, 'drive/old', 'object');
    await mkdir(join(object, '..'), { recursive: true });
    await writeFile(object, 'bytes');
    await writeFile(store.getResourcePath(bucket, 'drive/old', 'metadata.json'), '{');

    expect(await recover()).toEqual([object]);
    expect(await readdir(journal)).toEqual([]);
  });

  it('finishes at start a write whose files were all staged when the kill came', async () => {
    await markJournalInUse(journal);
    journalWrites(store, journal);
    await put('drive/x', Buffer.from('old'));
    // The kill came between two renames: the new bytes in place, their MD5 and metadata still staged.
    await writeFile(store.getResourcePath(bucket, 'drive/x', 'object'), 'new');
    await writeFile(join(journal, 'feed._S3rver_object.md5'), '22af645d1859cb5ca6da0c484f1f37ea');
    await writeFile(join(journal, 'feed._S3rver_metadata.json'), '{"content-type":"text/csv"}');
    await writeFile(join(journal, 'feed.write.json'), JSON.stringify({ bucket, key: 'drive/x', id: 'feed', staged: true }));

    expect(await recover()).toEqual([]);
    expect(await readFile(store.getResourcePath(bucket, 'drive/x', 'object.md5'), 'utf8')).toBe('22af645d1859cb5ca6da0c484f1f37ea');
    expect(JSON.parse(await readFile(store.getResourcePath(bucket, 'drive/x', 'metadata.json'), 'utf8'))).toEqual({ 'content-type': 'text/csv' });
    expect(await readdir(journal)).toEqual([]);
  });

  it('drops at start a write whose files were not all staged, and keeps the object it would have replaced', async () => {
    await markJournalInUse(journal);
    journalWrites(store, journal);
    await put('drive/x', Buffer.from('old'));
    await writeFile(join(journal, 'feed._S3rver_object'), 'ne');
    await writeFile(join(journal, 'feed.write.json'), JSON.stringify({ bucket, key: 'drive/x', id: 'feed' }));

    expect(await recover()).toEqual([]);
    expect(await readFile(store.getResourcePath(bucket, 'drive/x', 'object'), 'utf8')).toBe('old');
    expect(await readdir(journal)).toEqual([]);
  });

  it('forgets a note cut short and a metadata file staged when the kill came', async () => {
    await markJournalInUse(journal);
    await writeFile(join(journal, 'a.write.json'), '{"bucket":"buck');
    await writeFile(join(journal, '0123456789abcdef'), '{"content-type":"text/pl');

    expect(await recover()).toEqual([]);
    expect(await readdir(journal)).toEqual([]);
  });
});

describe('Function: journalWrites', () => {
  it('stores what s3rver stores, and forgets the note once the write is done', async () => {
    await markJournalInUse(journal);
    journalWrites(store, journal);

    const { md5 } = (await put('drive/x', Buffer.from('hello'), 'text/markdown')) as { md5: string };

    expect(md5).toBe('5d41402abc4b2a76b9719d911017c592');
    expect(await readFile(store.getResourcePath(bucket, 'drive/x', 'object.md5'), 'utf8')).toBe(md5);
    expect(JSON.parse(await readFile(store.getResourcePath(bucket, 'drive/x', 'metadata.json'), 'utf8'))).toEqual({ 'content-type': 'text/markdown' });
    expect(await readdir(journal)).toEqual([]);
  });

  it('shows no object whose write is still running, and leaves its MD5 to the write', async () => {
    await markJournalInUse(journal);
    journalWrites(store, journal);
    await put('drive/done', Buffer.from('done'));
    // The bytes of a write under way, its MD5 and metadata not yet down.
    await writeFile(store.getResourcePath(bucket, 'drive/writing', 'object'), 'the first half');

    const listed = (await store.listObjects(bucket, {})) as { objects: { key: string }[] };

    expect(listed.objects.map((object) => object.key)).toEqual(['drive/done']);
    await expect(store.getMetadata(bucket, 'drive/writing')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await exists(store.getResourcePath(bucket, 'drive/writing', 'object.md5'))).toBe(false);
  });

  it('copies an object with new metadata, onto itself or to a new key, under the MD5 of its bytes', async () => {
    await markJournalInUse(journal);
    journalWrites(store, journal);
    const { md5 } = (await put('drive/x', Buffer.from('hello'))) as { md5: string };

    await store.copyObject(bucket, 'drive/x', bucket, 'drive/x', { 'content-type': 'text/csv' });
    await store.copyObject(bucket, 'drive/x', bucket, 'drive/y', { 'content-type': 'text/html' });

    for (const [key, type] of [['drive/x', 'text/csv'], ['drive/y', 'text/html']]) {
      expect(await readFile(store.getResourcePath(bucket, key, 'object'), 'utf8')).toBe('hello');
      expect(await readFile(store.getResourcePath(bucket, key, 'object.md5'), 'utf8')).toBe(md5);
      expect(JSON.parse(await readFile(store.getResourcePath(bucket, key, 'metadata.json'), 'utf8'))).toEqual({ 'content-type': type });
    }
    expect(await readdir(journal)).toEqual([]);
  });

  // The reported failure: a listing read a metadata file s3rver was rewriting in place and answered InternalError.
  it('lets listings run while objects are overwritten, never reading half a metadata file', async () => {
    await markJournalInUse(journal);
    journalWrites(store, journal);
    listingsThroughDeletes(store);
    const keys = Array.from({ length: 20 }, (_, i) => `drive/${i % 4}/ü €+%20 ${i}`);
    for (const key of keys) await put(key, Buffer.from('v0'));

    const failures: unknown[] = [];
    let listings = 0;
    let writing = true;
    const lister = (async () => {
      while (writing) {
        await store.listObjects(bucket, {}).catch((error: unknown) => failures.push(error));
        listings++;
      }
    })();
    for (let round = 1; round <= 15; round++) await Promise.all(keys.map((key) => put(key, Buffer.from(`v${round}`))));
    writing = false;
    await lister;

    expect(failures).toEqual([]);
    expect(listings).toBeGreaterThan(0);
  });
});

describe('Function: listingsThroughDeletes', () => {
  const vanished = () => Object.assign(new Error("ENOENT: no such file or directory, stat 'bucket/drive'"), { code: 'ENOENT' });

  it('walks again when a file vanished under the walk', async () => {
    const list = jest.fn().mockRejectedValueOnce(vanished()).mockRejectedValueOnce(vanished()).mockResolvedValue({ objects: [] });
    const fake: ListingStore = { listObjects: list };
    listingsThroughDeletes(fake);

    await expect(fake.listObjects(bucket, {})).resolves.toEqual({ objects: [] });
    expect(list).toHaveBeenCalledTimes(3);
  });

  it('lets any other error, and a vanishing that never stops, stand', async () => {
    const other = Object.assign(new Error('EACCES'), { code: 'EACCES' });
    const fake: ListingStore = { listObjects: jest.fn().mockRejectedValue(other) };
    listingsThroughDeletes(fake);
    await expect(fake.listObjects(bucket, {})).rejects.toBe(other);
    expect(fake.listObjects).toBeDefined();

    const always = jest.fn().mockRejectedValue(vanished());
    const endless: ListingStore = { listObjects: always };
    listingsThroughDeletes(endless);
    await expect(endless.listObjects(bucket, {})).rejects.toMatchObject({ code: 'ENOENT' });
    expect(always).toHaveBeenCalledTimes(10);
  });
});

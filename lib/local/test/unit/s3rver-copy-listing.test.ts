import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3Object from 's3rver/lib/models/object';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { type CopyingStore, faithfulCopies } from '../../s3rver-copy';
import { type ListingStore, listingsThroughDeletes } from '../../s3rver-listing';
import { type WritingStore, journalWrites, markJournalInUse } from '../../s3rver-recovery';

// "An object is listed only once its write is done" (lib/local/s3rver-recovery.ts) holds for a PUT, whose MD5
// and metadata are staged and renamed into place. A CopyObject (Drive's copy of a file, to a new key) goes
// through s3rver's copyObject, which copies the metadata and MD5 files side by side with plain copies, then
// faithfulCopies rewrites the MD5 in place: a listing meanwhile can show the copy with an empty ETag.

let root: string;
afterEach(() => rm(root, { recursive: true, force: true }));

it('lists no copy under way, and every listed copy with its ETag', async () => {
  root = await mkdtemp(join(tmpdir(), 'drive-copy-listing-'));
  const journal = join(root, 's3-writes');
  await mkdir(join(root, 's3', 'bucket'), { recursive: true });
  await markJournalInUse(journal);
  const store = new FilesystemStore(join(root, 's3')) as unknown as WritingStore & ListingStore & CopyingStore;
  // In the order lib/local/emulators.ts wraps them.
  faithfulCopies(store, (message) => new Error(message));
  journalWrites(store, journal);
  listingsThroughDeletes(store);
  const source = await store.putObject(new S3Object('bucket', 'drive/source', Buffer.from('x'.repeat(5000)), { 'content-type': 'text/plain' }) as unknown as { bucket: string; key: string });
  const etag = JSON.stringify((source as { md5: string }).md5);

  const wrong: string[] = [];
  let listings = 0;
  let copying = true;
  const lister = (async () => {
    while (copying) {
      const listed = (await store.listObjects('bucket', {})) as { objects: { key: string; metadata: Record<string, string> }[] };
      for (const object of listed.objects) if (object.metadata.etag !== etag) wrong.push(`${object.key}: ${object.metadata.etag}`);
      listings++;
    }
  })();
  for (let round = 1; round <= 10; round++) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.copyObject('bucket', 'drive/source', 'bucket', `drive/${round}/copy ${i}`, undefined)));
  }
  copying = false;
  await lister;

  expect(wrong).toEqual([]);
  expect(listings).toBeGreaterThan(0);
});

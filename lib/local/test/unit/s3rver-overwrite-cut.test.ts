import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import S3Object from 's3rver/lib/models/object';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { type WritingStore, journalWrites, markJournalInUse, recoverInterruptedWrites } from '../../s3rver-recovery';
import { heldOnDisk } from './held-on-disk';

// An overwrite (PUT of a key that exists) goes through the journal like any write, but s3rver truncates the
// old object's bytes in place and leaves its old MD5 and metadata whole until the new bytes are down. S3
// shows the old object whole until the new one is done, and never a mix of the two.

interface ReadingStore extends WritingStore {
  getObject(bucket: string, key: string): Promise<{ content: NodeJS.ReadableStream; metadata: Record<string, string> } | null>;
}

const bucket = 'bucket';
const key = 'drive/report';
const OLD = 'the old object, whole and acknowledged';
let root: string;
let journal: string;
let store: ReadingStore;
let body: PassThrough | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'drive-overwrite-'));
  journal = join(root, 's3-writes');
  await mkdir(join(root, 's3', bucket), { recursive: true });
  await markJournalInUse(journal);
  store = new FilesystemStore(join(root, 's3')) as unknown as ReadingStore;
  journalWrites(store, journal);
  await store.putObject(new S3Object(bucket, key, Buffer.from(OLD), { 'content-type': 'text/plain' }) as unknown as { bucket: string; key: string });
});

afterEach(async () => {
  body?.destroy();
  await rm(root, { recursive: true, force: true });
});

/** Starts an overwrite of `key` and returns once its first bytes are on disk; the rest never comes. */
async function overwriteUnderWay(): Promise<void> {
  body = new PassThrough();
  const first = 'NEW, first half';
  void store.putObject(new S3Object(bucket, key, body as unknown as Buffer, { 'content-type': 'text/plain' }) as unknown as { bucket: string; key: string }).catch(() => undefined);
  body.write(first);
  await heldOnDisk(root, first);
}

/** The object as a read serves it: its ETag and its bytes, or undefined if it is not there. */
async function served(from: ReadingStore): Promise<{ etag: string; md5: string; length: string; bytes: number } | undefined> {
  const object = await from.getObject(bucket, key);
  if (!object) return undefined;
  const bytes = await text(object.content as NodeJS.ReadableStream & AsyncIterable<Buffer>);
  return { etag: JSON.parse(object.metadata.etag) as string, md5: createHash('md5').update(bytes).digest('hex'), length: String(object.metadata['content-length']), bytes: bytes.length };
}

it('keeps the old object whole, or no object, when a kill cuts an overwrite short', async () => {
  await overwriteUnderWay();
  // The kill: the process is gone; the next start recovers from the journal.
  const restarted = new FilesystemStore(join(root, 's3')) as unknown as ReadingStore;
  await recoverInterruptedWrites(restarted, bucket, join(root, 's3', bucket), journal);

  const object = await served(restarted);
  // Never new bytes under the old object's ETag (OLD whole is what S3 would still show).
  if (object) expect(object.md5).toBe(object.etag);
});

it('serves the old object whole while an overwrite of it runs', async () => {
  await overwriteUnderWay();

  const object = await served(store);

  expect(object).toBeDefined();
  expect(object?.md5).toBe(object?.etag);
  expect(object?.bytes).toBe(Number(object?.length));
});

it('keeps one whole write of two PUTs of one key that overlap', async () => {
  const put = (from: PassThrough) => store.putObject(new S3Object(bucket, key, from as unknown as Buffer, { 'content-type': 'text/plain' }) as unknown as { bucket: string; key: string });
  const a = new PassThrough();
  const b = new PassThrough();
  const first = put(a);
  a.write('A'.repeat(8));
  await heldOnDisk(root, 'A'.repeat(8));
  const second = put(b);
  b.end('B'.repeat(4));
  await second;
  a.end('A'.repeat(8));
  await first;

  const kept = await served(store);

  // S3: the write that finished last, whole ('A' * 16), never a mix of the two.
  expect(kept?.md5).toBe(kept?.etag);
  expect(kept?.bytes).toBe(16);
});

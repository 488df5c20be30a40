import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { type MultipartEtagStore, checkPartEtags, multipartObjectEtags } from '../../s3rver-multipart';
import { type WritingStore, journalWrites, markJournalInUse, recoverInterruptedWrites } from '../../s3rver-recovery';
import { heldOnDisk } from './held-on-disk';

// A part's bytes are written in place and its MD5 file after them, outside the journal. An UploadPart sent
// again (an SDK retry of a part whose reply was lost) truncates the part whole and acknowledged before; if a
// kill cuts it short, the part's old MD5 still stands, so CompleteMultipartUpload with the ETag the client
// holds passes checkPartEtags and assembles the cut bytes.

type Store = WritingStore & MultipartEtagStore & {
  initiateUpload(bucket: string, key: string, uploadId: string, metadata: Record<string, string>): Promise<void>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: NodeJS.ReadableStream): Promise<{ size: number; md5: string }>;
};

const bucket = 'bucket';
let root: string;
let body: PassThrough | undefined;
afterEach(async () => {
  body?.destroy();
  await rm(root, { recursive: true, force: true });
});

it('never assembles a part that a kill cut short under the ETag of its whole upload', async () => {
  root = await mkdtemp(join(tmpdir(), 'drive-part-cut-'));
  const journal = join(root, 's3-writes');
  await mkdir(join(root, 's3', bucket), { recursive: true });
  await markJournalInUse(journal);
  const wrap = (store: Store) => {
    checkPartEtags(store, join(root, 's3'), (message) => Object.assign(new Error(message), { code: 'InvalidPart' }));
    multipartObjectEtags(store, join(root, 's3'));
    journalWrites(store, journal);
    return store;
  };
  const store = wrap(new FilesystemStore(join(root, 's3')) as unknown as Store);
  const uploadId = 'abc123';
  const part = Buffer.alloc(4096, 7);
  await store.initiateUpload(bucket, 'drive/large', uploadId, { 'content-type': 'application/octet-stream' });
  const { md5 } = await store.putPart(bucket, uploadId, 1, Readable.from([part]));
  // The same part sent again; the kill comes after its first 1,000 bytes.
  body = new PassThrough();
  void store.putPart(bucket, uploadId, 1, body).catch(() => undefined);
  body.write(part.subarray(0, 1000));
  await heldOnDisk(root, part.subarray(0, 1000));

  const restarted = wrap(new FilesystemStore(join(root, 's3')) as unknown as Store);
  await recoverInterruptedWrites(restarted, bucket, join(root, 's3', bucket), journal);
  const completed = await restarted.putObjectMultipart(bucket, uploadId, [{ number: 1, etag: md5 }]).then(
    () => 'assembled',
    (error: { code?: string }) => error.code,
  );

  // S3 keeps the part acknowledged (or the retry's whole bytes): the object is the part, or InvalidPart.
  if (completed === 'assembled') {
    const bytes = await readFile(restarted.getResourcePath(bucket, 'drive/large', 'object'));
    expect(createHash('md5').update(bytes).digest('hex')).toBe(md5);
  } else {
    expect(completed).toBe('InvalidPart');
  }
});

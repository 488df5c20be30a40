import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import S3Object from 's3rver/lib/models/object';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { type CopyingStore, faithfulCopies } from '../../s3rver-copy';
import { type MultipartEtagStore, multipartObjectEtags } from '../../s3rver-multipart';
import { type WritingStore, journalWrites, markJournalInUse, recoverInterruptedWrites } from '../../s3rver-recovery';

// The journal's note covers s3rver's putObject and copyObject, and each MD5 file is meant to appear whole. But
// two writers of an object's MD5 file run after the write the note covers or with a plain writeFile: the
// multipart ETag (multipartObjectEtags, after putObject's note is gone) and a copy's own MD5 (faithfulCopies,
// truncated then written). What a kill at that point leaves is what these tests make, by failing that writeFile.

/** How the next write of an object's MD5 file by Drive's patches dies: before it, or after truncating the file. */
let kill: 'before' | 'mid' | undefined;

// The modules call `writeFile` through the module object (CommonJS), so a spy on it is what they call.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const fsp = require('node:fs/promises') as typeof import('node:fs/promises');
const realWriteFile = fsp.writeFile;
beforeAll(() => {
  jest.spyOn(fsp, 'writeFile').mockImplementation(async (...args: Parameters<typeof realWriteFile>) => {
    const [file] = args;
    if (kill && typeof file === 'string' && file.endsWith('._S3rver_object.md5')) {
      const how = kill;
      kill = undefined;
      if (how === 'mid') await realWriteFile(file, '');
      throw Object.assign(new Error('killed'), { code: 'EKILLED' });
    }
    return realWriteFile(...args);
  });
});
afterAll(() => jest.restoreAllMocks());

type Store = WritingStore & CopyingStore & MultipartEtagStore & {
  initiateUpload(bucket: string, key: string, uploadId: string, metadata: Record<string, string>): Promise<void>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: NodeJS.ReadableStream): Promise<{ size: number; md5: string }>;
};

const bucket = 'bucket';
let root: string;
let journal: string;
let store: Store;

beforeEach(async () => {
  kill = undefined;
  root = await mkdtemp(join(tmpdir(), 'drive-etag-'));
  journal = join(root, 's3-writes');
  await mkdir(join(root, 's3', bucket), { recursive: true });
  await markJournalInUse(journal);
  store = new FilesystemStore(join(root, 's3')) as unknown as Store;
  // In the order lib/local/emulators.ts wraps them.
  faithfulCopies(store, (message) => new Error(message));
  multipartObjectEtags(store, join(root, 's3'));
  journalWrites(store, journal);
});

afterEach(() => rm(root, { recursive: true, force: true }));

/** The next start: what recovery leaves, as a fresh store reads it (its ETag unquoted, its bytes' MD5). */
async function afterRestart(key: string): Promise<{ etag: string; md5: string } | undefined> {
  await recoverInterruptedWrites(store, bucket, join(root, 's3', bucket), journal);
  const fresh = new FilesystemStore(join(root, 's3')) as unknown as { getObject(b: string, k: string): Promise<{ content: Readable; metadata: Record<string, string> } | null> };
  const object = await fresh.getObject(bucket, key);
  if (!object) return undefined;
  const md5 = createHash('md5');
  for await (const chunk of object.content) md5.update(chunk as Buffer);
  return { etag: JSON.parse(object.metadata.etag) as string, md5: md5.digest('hex') };
}

it('never leaves a copy whose ETag is not its bytes when a kill cuts its MD5 write', async () => {
  await store.putObject(new S3Object(bucket, 'drive/source', Buffer.from('the source bytes'), { 'content-type': 'text/plain' }) as unknown as { bucket: string; key: string });
  kill = 'mid';
  await expect(store.copyObject(bucket, 'drive/source', bucket, 'drive/copy', undefined)).rejects.toThrow('killed');

  const copy = await afterRestart('drive/copy');

  // S3 has the copy whole (ETag = MD5 of its bytes) or not at all.
  if (copy) expect(copy.etag).toBe(copy.md5);
});

it('never leaves an assembled object without its multipart ETag when a kill comes after its bytes', async () => {
  const uploadId = 'abc123';
  const parts = [Buffer.alloc(1024, 1), Buffer.alloc(512, 2)];
  await store.initiateUpload(bucket, 'drive/large', uploadId, { 'content-type': 'application/octet-stream' });
  const digests: string[] = [];
  for (const [i, part] of parts.entries()) digests.push((await store.putPart(bucket, uploadId, i + 1, Readable.from([part]))).md5);
  const s3Etag = `${createHash('md5').update(Buffer.concat(digests.map((d) => Buffer.from(d, 'hex')))).digest('hex')}-2`;
  kill = 'before';
  await expect(store.putObjectMultipart(bucket, uploadId, digests.map((etag, i) => ({ number: i + 1, etag })))).rejects.toThrow('killed');
  const large = await afterRestart('drive/large');

  // S3 has the assembled object with its `<md5 of md5s>-<parts>` ETag, or no object.
  if (large) expect(large.etag).toBe(s3Etag);
});

it('keeps the upload when a kill comes at the multipart ETag write, so its completion can be sent again', async () => {
  const uploadId = 'def456';
  const parts = [Buffer.alloc(1024, 3), Buffer.alloc(256, 4)];
  await store.initiateUpload(bucket, 'drive/retried', uploadId, { 'content-type': 'application/octet-stream' });
  const digests: string[] = [];
  for (const [i, part] of parts.entries()) digests.push((await store.putPart(bucket, uploadId, i + 1, Readable.from([part]))).md5);
  const s3Etag = `${createHash('md5').update(Buffer.concat(digests.map((d) => Buffer.from(d, 'hex')))).digest('hex')}-2`;
  const complete = () => store.putObjectMultipart(bucket, uploadId, digests.map((etag, i) => ({ number: i + 1, etag })));
  kill = 'before';
  await expect(complete()).rejects.toThrow('killed');
  await recoverInterruptedWrites(store, bucket, join(root, 's3', bucket), journal);

  // S3 completes an upload whole or not at all: not completed, it can be completed again.
  await expect(complete()).resolves.toMatchObject({ md5: s3Etag });
  expect(await afterRestart('drive/retried')).toEqual({ etag: s3Etag, md5: createHash('md5').update(Buffer.concat(parts)).digest('hex') });
});

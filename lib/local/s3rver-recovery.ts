import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import S3Object from 's3rver/lib/models/object';

const OBJECT_SUFFIX = '._S3rver_object';
/** A journal entry's name ends so; others in the folder are metadata files on their way to their place. */
const ENTRY_SUFFIX = '.write.json';

/** The part of s3rver's filesystem store that writes objects and names their files. */
export interface WritingStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata: unknown): Promise<unknown>;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
}

/**
 * Makes every object write of `store` leave a note in `journalDir` for as long as it runs (kept if it
 * fails), so a start after a kill looks only at the objects being written then, not at every object
 * (29-54 s for 100,000). Makes each object's MD5 and metadata file appear whole or not at all (written
 * beside the journal, then renamed into place): s3rver rewrites them in place, and a listing that read one
 * half-written failed with `InternalError`. Makes an object appear once its metadata is down, as S3 shows an
 * object once its write is done: s3rver listed one mid-write and wrote the MD5 of the bytes it found so far,
 * which could land after the write's own and stay.
 */
export function journalWrites(store: WritingStore, journalDir: string): void {
  const noted = async <T>(bucket: string, key: string, write: () => Promise<T>): Promise<T> => {
    const entry = join(journalDir, `${randomBytes(12).toString('hex')}${ENTRY_SUFFIX}`);
    await writeFile(entry, JSON.stringify({ bucket, key }));
    const result = await write();
    // Only a write that finished is forgotten: a failed one may have left bytes without metadata.
    await unlink(entry);
    return result;
  };
  const putObject = store.putObject.bind(store);
  store.putObject = (object) => noted(object.bucket, object.key, () => putObject(object));
  const copyObject = store.copyObject.bind(store);
  store.copyObject = (srcBucket, srcKey, destBucket, destKey, replacementMetadata) =>
    noted(destBucket, destKey, () => copyObject(srcBucket, srcKey, destBucket, destKey, replacementMetadata));
  const wholeWrite = async (file: string, data: string): Promise<void> => {
    const staged = join(journalDir, randomBytes(12).toString('hex'));
    await writeFile(staged, data);
    await rename(staged, file);
  };
  const getMetadata = store.getMetadata.bind(store);
  store.getMetadata = async (bucket, key) => {
    // MD5 first, metadata last (below): no metadata, no write done. ENOENT is what s3rver reads as "no such key".
    await stat(store.getResourcePath(bucket, key, 'metadata.json'));
    return getMetadata(bucket, key);
  };
  // s3rver's own putMetadata, with its writes whole.
  store.putMetadata = async (bucket, key, metadata, md5) => {
    const kept = Object.fromEntries(Object.entries(metadata).filter(([name]) => S3Object.ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-')));
    if (md5) await wholeWrite(store.getResourcePath(bucket, key, 'object.md5'), md5);
    await wholeWrite(store.getResourcePath(bucket, key, 'metadata.json'), JSON.stringify(kept, null, 2));
  };
}

/**
 * Removes the objects whose write a killed process left half done, as S3 would never show them: those
 * noted in `journalDir` (`journalWrites`) whose metadata file is not whole. Such an object was never
 * acknowledged to the writer, which treats it as failed. A data dir from before the journal (no
 * `journalDir`) has every object of `bucketDir` looked at, once. Returns the objects' files it removed.
 */
export async function recoverInterruptedWrites(store: Pick<WritingStore, 'getResourcePath'>, bucket: string, bucketDir: string, journalDir: string): Promise<string[]> {
  if (!(await exists(journalDir))) {
    const removed = await removeInterruptedWrites(bucketDir);
    await mkdir(journalDir, { recursive: true });
    return removed;
  }
  const removed: string[] = [];
  for (const name of await readdir(journalDir)) {
    const file = join(journalDir, name);
    if (name.endsWith(ENTRY_SUFFIX)) {
      // An entry cut short was being noted: its write had not begun.
      const noted = await readJson<{ bucket: string; key: string }>(file);
      if (noted?.bucket === bucket && typeof noted.key === 'string') {
        const object = store.getResourcePath(bucket, noted.key, 'object');
        if (!(await removeUnlessWhole(object))) removed.push(object);
      }
    }
    await rm(file, { force: true });
  }
  return removed;
}

/**
 * Marks `journalDir` as in use on a data dir known to hold no half-written object (one seeded by a tool that
 * writes whole objects), so its first start looks at no object.
 */
export async function markJournalInUse(journalDir: string): Promise<void> {
  await mkdir(journalDir, { recursive: true });
}

/** Every object of `bucketDir` whose metadata is not whole, removed: a data dir from before the journal. */
async function removeInterruptedWrites(bucketDir: string): Promise<string[]> {
  const removed: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      // Multipart uploads in progress keep their parts here; they are not objects.
      if (entry.isDirectory()) {
        if (entry.name !== '._S3rver_uploads') await visit(path);
        continue;
      }
      if (!entry.name.endsWith(OBJECT_SUFFIX)) continue;
      if (!(await removeUnlessWhole(path))) removed.push(path);
    }
  };
  await visit(bucketDir);
  return removed;
}

/** Keeps the object whose file is `objectPath` if its metadata file is whole JSON, else removes its files; whether it kept it. */
async function removeUnlessWhole(objectPath: string): Promise<boolean> {
  const metadata = `${objectPath.slice(0, -OBJECT_SUFFIX.length)}._S3rver_metadata.json`;
  if (await wholeJson(metadata)) return true;
  await Promise.all([objectPath, `${objectPath}.md5`, metadata].map((file) => rm(file, { force: true })));
  return false;
}

/** Whether `file` exists and holds JSON that parses. */
async function wholeJson(file: string): Promise<boolean> {
  return (await readJson(file)) !== undefined;
}

/** What `file` holds, or undefined if it is missing or not whole JSON. */
async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import S3Object from 's3rver/lib/models/object';

const OBJECT_SUFFIX = '._S3rver_object';
/** A journal entry's name ends so; other files in the folder are staged files of writes under way. */
const ENTRY_SUFFIX = '.write.json';
/** An object's files, in the order a write puts them in place: the metadata last, as it makes the object visible. */
const OBJECT_FILES = ['object', 'object.md5', 'metadata.json'] as const;

/** The part of s3rver's filesystem store that writes objects and names their files. */
export interface WritingStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata: unknown): Promise<unknown>;
  putObjectMultipart(bucket: string, uploadId: string, parts: { number: number; etag: string }[]): Promise<unknown>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: NodeJS.ReadableStream): Promise<{ size: number; md5: string }>;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
  getObject(bucket: string, key: string, options?: unknown): Promise<unknown>;
}

/** A journal entry: the object a write is for, the name of the files it stages, and whether they are all whole. */
interface Note {
  bucket: string;
  key: string;
  /** Its staged files are `<journalDir>/<id>._S3rver_<resource>` (absent in notes from before staging). */
  id?: string;
  /** Set once every staged file is whole: from then on a start puts them in place rather than dropping them. */
  staged?: true;
}

/** The write running in this async context: its object's files are staged under `id` until it is done. */
interface Staging {
  bucket: string;
  key: string;
  id: string;
}

/**
 * Makes every object write of `store` (PUT, CopyObject, CompleteMultipartUpload) stage the object's bytes,
 * MD5 and metadata in `journalDir` and rename them into place once all are whole, metadata last, with a note
 * there for as long as it runs. A reader then gets the old object whole or the new one whole, never a mix
 * (s3rver wrote over the old bytes in place, under the old MD5); of two writes of one key the last done wins
 * whole; an object is listed only once its metadata is down; and a start after a kill looks only at the noted
 * writes, not at every object (29-54 s for 100,000): it finishes those whose files were all staged, and drops
 * the rest. Each part of a multipart upload is staged the same way.
 */
export function journalWrites(store: WritingStore, journalDir: string): void {
  const locks = new KeyLocks();
  const staging = new AsyncLocalStorage<Staging>();
  const placeOf = store.getResourcePath.bind(store);
  const staged = (id: string, resource: string) => stagedPath(journalDir, id, resource);
  const lockOf = (bucket: string, key: string) => `${bucket}/${key}`;
  // What s3rver (and the patches below this one) write for the object of the write under way goes to its staged files.
  store.getResourcePath = (bucket, key, resource) => {
    const write = staging.getStore();
    return write && write.bucket === bucket && write.key === key && isObjectFile(resource) ? staged(write.id, resource) : placeOf(bucket, key, resource);
  };
  const journaled = async <T>(bucket: string, key: string, write: (id: string) => Promise<T>): Promise<T> => {
    const current = staging.getStore();
    // s3rver's multipart assembly writes its object through putObject: one write, one note.
    if (current?.bucket === bucket && current.key === key) return write(current.id);
    const id = randomBytes(12).toString('hex');
    const entry = join(journalDir, `${id}${ENTRY_SUFFIX}`);
    const note: Note = { bucket, key, id };
    await writeFile(entry, JSON.stringify(note));
    let result: T;
    try {
      await mkdir(dirname(placeOf(bucket, key, 'object')), { recursive: true });
      result = await staging.run({ bucket, key, id }, () => write(id));
      // s3rver answers once the bytes have passed its hash, before its file stream has written them all.
      const size = (result as { size?: unknown } | null | undefined)?.size;
      if (typeof size === 'number') await bytesWritten(staged(id, 'object'), size);
      await completeStaged(journalDir, id);
    } catch (error) {
      // Nothing of it is in place. The note stays (the write was never acknowledged): the next start forgets it.
      await Promise.all(OBJECT_FILES.map((resource) => rm(staged(id, resource), { force: true })));
      throw error;
    }
    await replaceWhole(journalDir, entry, JSON.stringify({ ...note, staged: true } satisfies Note));
    await locks.write(lockOf(bucket, key), () => placeStaged(journalDir, id, (resource) => placeOf(bucket, key, resource)));
    await unlink(entry);
    return result;
  };

  const putObject = store.putObject.bind(store);
  store.putObject = (object) => journaled(object.bucket, object.key, () => putObject(object));
  const copyObject = store.copyObject.bind(store);
  store.copyObject = (srcBucket, srcKey, destBucket, destKey, replacementMetadata) =>
    journaled(destBucket, destKey, async (id) => {
      // A copy onto itself (new metadata) reads the object it writes: its staged files start as the object's own.
      if (srcBucket === destBucket && srcKey === destKey) {
        await locks.read(lockOf(srcBucket, srcKey), () =>
          Promise.all(
            OBJECT_FILES.map((resource) =>
              copyFile(placeOf(srcBucket, srcKey, resource), staged(id, resource)).catch((error: NodeJS.ErrnoException) => {
                // An object without its MD5 file: s3rver computes it.
                if (error.code !== 'ENOENT' || resource !== 'object.md5') throw error;
              }),
            ),
          ),
        );
      }
      return copyObject(srcBucket, srcKey, destBucket, destKey, replacementMetadata);
    });
  const putObjectMultipart = store.putObjectMultipart.bind(store);
  store.putObjectMultipart = async (bucket, uploadId, parts) => {
    const key = await readFile(join(placeOf(bucket, undefined, 'uploads'), uploadId, 'key'), 'utf8').catch(() => undefined);
    // No such upload: s3rver's own answer.
    if (key === undefined) return putObjectMultipart(bucket, uploadId, parts);
    return journaled(bucket, key, () => putObjectMultipart(bucket, uploadId, parts));
  };

  const putMetadata = store.putMetadata.bind(store);
  store.putMetadata = async (bucket, key, metadata, md5) => {
    const write = staging.getStore();
    // The write's own staged files: written as s3rver (or a patch below) writes them.
    if (write?.bucket === bucket && write.key === key) return putMetadata(bucket, key, metadata, md5);
    // Outside any write (s3rver calls it only inside one): each file staged whole, then both put in place at once.
    const kept = Object.fromEntries(Object.entries(metadata).filter(([name]) => S3Object.ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-')));
    const id = randomBytes(12).toString('hex');
    const resources = md5 ? (['object.md5', 'metadata.json'] as const) : (['metadata.json'] as const);
    try {
      if (md5) await writeFile(staged(id, 'object.md5'), md5);
      await writeFile(staged(id, 'metadata.json'), JSON.stringify(kept, null, 2));
      await locks.write(lockOf(bucket, key), async () => {
        for (const resource of resources) await rename(staged(id, resource), placeOf(bucket, key, resource));
      });
    } finally {
      await Promise.all(resources.map((resource) => rm(staged(id, resource), { force: true })));
    }
  };

  const getMetadata = store.getMetadata.bind(store);
  store.getMetadata = (bucket, key) =>
    locks.read(lockOf(bucket, key), async () => {
      // Metadata last (placeStaged): no metadata, no write done. ENOENT is what s3rver reads as "no such key".
      await stat(store.getResourcePath(bucket, key, 'metadata.json'));
      return getMetadata(bucket, key);
    });
  // A read's metadata and the bytes it opens are of one version: a write puts its files in place between reads.
  const getObject = store.getObject.bind(store);
  store.getObject = (bucket, key, options) => locks.read(lockOf(bucket, key), () => getObject(bucket, key, options));

  // s3rver truncated a part sent again and wrote its bytes in place, its MD5 after them.
  store.putPart = async (bucket, uploadId, partNumber, content) => {
    const part = join(placeOf(bucket, undefined, 'uploads'), uploadId, String(partNumber));
    const file = join(journalDir, `${randomBytes(12).toString('hex')}.part`);
    const md5 = createHash('md5');
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        md5.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await mkdir(dirname(part), { recursive: true });
      await pipeline(content, counted, createWriteStream(file));
      const digest = md5.digest('hex');
      await writeFile(`${file}.md5`, digest);
      // MD5 first: a kill between the two leaves the old bytes under an ETag no client was given (InvalidPart at
      // CompleteMultipartUpload), never new bytes under the ETag a client holds.
      await locks.write(part, async () => {
        await rename(`${file}.md5`, `${part}.md5`);
        await rename(file, part);
      });
      return { size, md5: digest };
    } finally {
      await Promise.all([file, `${file}.md5`].map((staged) => rm(staged, { force: true })));
    }
  };
}

/**
 * Finishes or undoes the writes a killed process left under way (`journalWrites`), as S3 shows an object whole
 * or not at all: a noted write whose files were all staged is put in place, any other is dropped, and an
 * object noted whose metadata file is not whole (left by a version that wrote in place) is removed. Such a
 * write was never acknowledged to the writer, which treats it as failed. A data dir from before the journal
 * (no `journalDir`) has every object of `bucketDir` looked at, once. Returns the objects' files it removed.
 */
export async function recoverInterruptedWrites(store: Pick<WritingStore, 'getResourcePath'>, bucket: string, bucketDir: string, journalDir: string): Promise<string[]> {
  if (!(await exists(journalDir))) {
    const removed = await removeInterruptedWrites(bucketDir);
    await mkdir(journalDir, { recursive: true });
    return removed;
  }
  const removed: string[] = [];
  const names = await readdir(journalDir);
  for (const name of names.filter((entry) => entry.endsWith(ENTRY_SUFFIX))) {
    // An entry cut short was being noted: its write had not begun.
    const note = await readJson<Note>(join(journalDir, name));
    if (note?.bucket !== bucket || typeof note.key !== 'string') continue;
    const placeOf = (resource: string) => store.getResourcePath(bucket, note.key, resource);
    if (note.staged && typeof note.id === 'string' && /^[0-9a-f]+$/.test(note.id)) await placeStaged(journalDir, note.id, placeOf);
    if (!(await removeUnlessWhole(placeOf('object')))) removed.push(placeOf('object'));
  }
  // What is left: the notes, and the files of writes dropped (or of metadata staged when the kill came).
  await Promise.all(names.map((name) => rm(join(journalDir, name), { recursive: true, force: true })));
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

function stagedPath(journalDir: string, id: string, resource: string): string {
  return join(journalDir, `${id}._S3rver_${resource}`);
}

function isObjectFile(resource: string): boolean {
  return (OBJECT_FILES as readonly string[]).includes(resource);
}

/**
 * Checks that the write staged as `id` staged its bytes and metadata, and stages the MD5 of its bytes if it
 * staged none (s3rver's copy with new metadata leaves the MD5 file to its next read), so all three are put in place.
 */
async function completeStaged(journalDir: string, id: string): Promise<void> {
  const bytes = stagedPath(journalDir, id, 'object');
  await Promise.all([stat(bytes), stat(stagedPath(journalDir, id, 'metadata.json'))]);
  if (await exists(stagedPath(journalDir, id, 'object.md5'))) return;
  const md5 = createHash('md5');
  await pipeline(createReadStream(bytes), md5);
  await writeFile(stagedPath(journalDir, id, 'object.md5'), md5.digest('hex'));
}

/** How long a staged file may stay short of the size its write answered, not growing, before the write fails. */
const STALLED_MS = 30_000;

/** Waits until `file` holds `size` bytes. */
async function bytesWritten(file: string, size: number): Promise<void> {
  for (let held = -1, still = 0; ; ) {
    const now = await stat(file).then(
      (info) => info.size,
      () => 0,
    );
    if (now >= size) return;
    still = now === held ? still + 1 : 0;
    if (still > STALLED_MS) throw new Error(`${file}: ${now} of ${size} bytes written, and no more for ${STALLED_MS} ms`);
    held = now;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * Renames the files staged as `id` into their places (`placeOf`), in the order of `OBJECT_FILES`. A file no
 * longer staged was put in place before (by a start, the write a kill cut short between two renames).
 */
async function placeStaged(journalDir: string, id: string, placeOf: (resource: string) => string): Promise<void> {
  for (const resource of OBJECT_FILES) {
    const from = stagedPath(journalDir, id, resource);
    const to = placeOf(resource);
    try {
      await rename(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (!(await exists(from))) continue;
      // A delete beside it removed the object's emptied folder meanwhile.
      await mkdir(dirname(to), { recursive: true });
      await rename(from, to);
    }
  }
}

/** Replaces `file` with `data` at once: a reader (a start) finds the old content or the new, whole. */
async function replaceWhole(journalDir: string, file: string, data: string): Promise<void> {
  const next = join(journalDir, randomBytes(12).toString('hex'));
  await writeFile(next, data);
  await rename(next, file);
}

/**
 * Per name, reads that share it and writes that hold it alone. A read within a read never waits (s3rver's
 * getObject reads the metadata): a write waits for no read under way, and new reads wait only for a write
 * that holds the name.
 */
class KeyLocks {
  private readonly names = new Map<string, { readers: number; writing: boolean; waiting: (() => void)[] }>();

  async read<T>(name: string, act: () => Promise<T>): Promise<T> {
    for (let state = this.of(name); state.writing; state = this.of(name)) await this.turn(state);
    const state = this.of(name);
    state.readers++;
    try {
      return await act();
    } finally {
      state.readers--;
      this.release(name, state);
    }
  }

  async write<T>(name: string, act: () => Promise<T>): Promise<T> {
    for (let state = this.of(name); state.writing || state.readers > 0; state = this.of(name)) await this.turn(state);
    const state = this.of(name);
    state.writing = true;
    try {
      return await act();
    } finally {
      state.writing = false;
      this.release(name, state);
    }
  }

  private of(name: string) {
    let state = this.names.get(name);
    if (!state) this.names.set(name, (state = { readers: 0, writing: false, waiting: [] }));
    return state;
  }

  private turn(state: { waiting: (() => void)[] }): Promise<void> {
    return new Promise((resolve) => state.waiting.push(resolve));
  }

  /** Wakes every waiter (each looks again), and forgets the name once nobody holds it. */
  private release(name: string, state: { readers: number; writing: boolean; waiting: (() => void)[] }): void {
    for (const wake of state.waiting.splice(0)) wake();
    if (state.readers === 0 && !state.writing) this.names.delete(name);
  }
}

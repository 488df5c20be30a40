import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

const OBJECT_SUFFIX = '._S3rver_object';

/**
 * Removes the objects whose write a killed process left half done, as S3 would never show them: s3rver
 * writes an object's bytes, then its MD5, then its metadata, each as a plain file, and lists an object
 * whose metadata file is cut short as an internal error. An object without whole metadata was never
 * acknowledged to the writer, which treats it as failed. Returns the keys' files it removed.
 */
export async function removeInterruptedWrites(bucketDir: string): Promise<string[]> {
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
      const base = path.slice(0, -OBJECT_SUFFIX.length);
      if (await wholeJson(`${base}._S3rver_metadata.json`)) continue;
      await Promise.all([path, `${path}.md5`, `${base}._S3rver_metadata.json`].map((file) => rm(file, { force: true })));
      removed.push(path);
    }
  };
  await visit(bucketDir);
  return removed;
}

/** Whether `file` exists and holds JSON that parses. */
async function wholeJson(file: string): Promise<boolean> {
  try {
    JSON.parse(await readFile(file, 'utf8'));
    return true;
  } catch {
    return false;
  }
}

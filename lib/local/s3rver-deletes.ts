import { rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** The part of s3rver's filesystem store that deleting an object uses. */
export interface DeletingStore {
  getBucketPath(bucket: string): string;
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
}

/**
 * Makes s3rver delete an object in constant time. Its own `deleteObject` reads the object's whole folder
 * after each delete to see whether it is empty; Drive keeps a drive's objects in one folder, so deleting
 * 10,000 of them read the folder 10,000 times (107 s, growing with the square of the count). Here the
 * folder is simply removed if it is empty, which the filesystem answers without a listing (ENOTEMPTY),
 * as S3 deletes in time that does not grow with the bucket.
 */
export function deleteInConstantTime(store: DeletingStore): void {
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(store.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        }),
      ),
    );
    // The folders the key names, deepest first, while they are empty; the last segment is the object's own files.
    const folders = key.split('/').slice(0, -1);
    for (; folders.length > 0; folders.pop()) {
      try {
        await rmdir(join(store.getBucketPath(bucket), ...folders));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') return;
        throw error;
      }
    }
  };
}

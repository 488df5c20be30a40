import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { type DeletingStore, deleteInConstantTime } from '../../s3rver-deletes';

// s3rver read an object's whole folder after each delete: deleting n objects of one folder read it n times,
// each read as long as the folder (quadratic). The fix removes the folder only when empty, asking the
// filesystem (rmdir answers ENOTEMPTY) rather than listing it.

let root: string;
let store: DeletingStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'drive-s3rver-'));
  store = new FilesystemStore(root) as unknown as DeletingStore;
  deleteInConstantTime(store);
});

afterEach(() => rm(root, { recursive: true, force: true }));

/** Writes `count` objects under `drive/` as s3rver stores them (bytes, MD5, metadata). */
async function objects(count: number, drive = 'default'): Promise<string[]> {
  await mkdir(join(root, 'bucket', drive), { recursive: true });
  const keys = Array.from({ length: count }, (_, i) => `${drive}/obj-${i}`);
  for (const key of keys) {
    for (const resource of ['object', 'object.md5', 'metadata.json']) await writeFile(store.getResourcePath('bucket', key, resource), resource);
  }
  return keys;
}

it('deletes an object without reading its folder, and leaves the folder while it holds others', async () => {
  const keys = await objects(200);
  // s3rver reads folders through fs-extra (which it requires, and Node caches, as this test does).
  const reads = jest.spyOn(require('fs-extra') as { readdirSync: () => string[] }, 'readdirSync');

  for (const key of keys.slice(0, 199)) await store.deleteObject('bucket', key);

  expect(reads).not.toHaveBeenCalled();
  reads.mockRestore();
  expect(await readdir(join(root, 'bucket', 'default'))).toEqual(['obj-199._S3rver_metadata.json', 'obj-199._S3rver_object', 'obj-199._S3rver_object.md5']);
});

it('removes the folders a key named once they are empty, never the bucket', async () => {
  const [key] = await objects(1, 'nested/deeper');

  await store.deleteObject('bucket', key);

  expect(await readdir(join(root, 'bucket'))).toEqual([]);
});

it('deletes an object that is already gone without an error', async () => {
  await objects(1);
  await expect(store.deleteObject('bucket', 'default/never-stored')).resolves.toBeUndefined();
  expect(await readdir(join(root, 'bucket', 'default'))).toHaveLength(3);
});

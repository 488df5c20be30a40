import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import FilesystemStore from 's3rver/lib/stores/filesystem';
import { type ConfigStore, cacheBucketConfigs } from '../../s3rver-bucket-config';

// s3rver read and parsed a bucket's cors.xml and website.xml on every request. They are kept in memory once read,
// and what changes them (putSubresource, deleteSubresource) empties what is kept: a read answers as the files do.

const { getConfigModel } = require('s3rver/lib/models/config') as { getConfigModel(type: string): new (xml: string) => { type: string } };
const CORS = (origin: string) =>
  `<CORSConfiguration><CORSRule><AllowedOrigin>${origin}</AllowedOrigin><AllowedMethod>PUT</AllowedMethod></CORSRule></CORSConfiguration>`;

let root: string;
let store: ConfigStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'drive-s3rver-config-'));
  await mkdir(join(root, 'bucket'));
  store = new FilesystemStore(root) as unknown as ConfigStore;
  cacheBucketConfigs(store);
});

afterEach(() => rm(root, { recursive: true, force: true }));

const origins = async () => ((await store.getSubresource('bucket', undefined, 'cors')) as { rules?: { allowedOrigins: { test(o: string): boolean }[] }[] } | null)?.rules?.[0].allowedOrigins.map((o) => o.test('http://a') ? 'a' : o.test('http://b') ? 'b' : '?');

it('reads a bucket configuration once, and again after it is put or deleted', async () => {
  const fs = require('fs-extra') as { readFile: (...args: unknown[]) => unknown };
  const reads = jest.spyOn(fs, 'readFile');
  expect(await store.getSubresource('bucket', undefined, 'cors')).toBeNull();
  expect(await store.getSubresource('bucket', undefined, 'cors')).toBeNull();
  expect(reads).toHaveBeenCalledTimes(1);

  await store.putSubresource('bucket', undefined, new (getConfigModel('cors'))(CORS('http://a')));
  expect(await origins()).toEqual(['a']);
  await store.putSubresource('bucket', undefined, new (getConfigModel('cors'))(CORS('http://b')));
  expect(await origins()).toEqual(['b']);
  expect(await origins()).toEqual(['b']);
  expect(reads).toHaveBeenCalledTimes(3);

  await store.deleteSubresource('bucket', undefined, 'cors');
  expect(await store.getSubresource('bucket', undefined, 'cors')).toBeNull();
  reads.mockRestore();
});

it('does not keep a read that a put overlapped', async () => {
  // A store whose read ends when the test says: it read the old file, and ends after the put has ended.
  const ends: ((config: string) => void)[] = [];
  const stub: ConfigStore = {
    getSubresource: () => new Promise((resolve) => ends.push(resolve)),
    putSubresource: async () => undefined,
    deleteSubresource: async () => undefined,
  };
  cacheBucketConfigs(stub);
  const reading = stub.getSubresource('bucket', undefined, 'cors');
  await stub.putSubresource('bucket', undefined, { type: 'cors' });
  ends[0]('old');
  expect(await reading).toBe('old');
  const again = stub.getSubresource('bucket', undefined, 'cors');
  expect(ends).toHaveLength(2);
  ends[1]('new');
  expect(await again).toBe('new');
  expect(await stub.getSubresource('bucket', undefined, 'cors')).toBe('new');
  expect(ends).toHaveLength(2);
});

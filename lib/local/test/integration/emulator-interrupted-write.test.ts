import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Emulators, LOCAL_REGION, LOCAL_RESOURCES, S3_WRITES_DIR, startEmulators } from '../../emulators';

// A start no longer reads every object to find the writes a kill cut short; it reads the journal of writes
// in progress (lib/local/s3rver-recovery.ts). What a kill leaves is still gone before the first listing.

let dataDir: string;
let emulators: Emulators | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'drive-interrupted-'));
});

afterEach(async () => {
  await emulators?.close();
  emulators = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

const s3Of = (running: Emulators) => new S3Client({ endpoint: running.s3Endpoint, forcePathStyle: true, region: LOCAL_REGION, credentials: running.credentials, maxAttempts: 1 });

it('removes at start a write a kill cut short, named by the journal, and lists the rest', async () => {
  emulators = await startEmulators(dataDir);
  let s3 = s3Of(emulators);
  const kept = ['d1/a b+c', 'd1/ü€ 1', 'd2/x%20y', "d3/o'k&~"];
  for (const Key of kept) await s3.send(new PutObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key, Body: Key, ContentType: 'text/plain' }));
  s3.destroy();
  await emulators.close();
  emulators = undefined;
  // What SIGKILL mid-PUT leaves: the bytes, the metadata cut short, the journal's note of the write.
  const bucketDir = join(dataDir, 's3', LOCAL_RESOURCES.bucket);
  await writeFile(join(bucketDir, 'd2', 'cut._S3rver_object'), 'half');
  await writeFile(join(bucketDir, 'd2', 'cut._S3rver_metadata.json'), '{"content-type":"te');
  await writeFile(join(dataDir, S3_WRITES_DIR, 'killed.write.json'), JSON.stringify({ bucket: LOCAL_RESOURCES.bucket, key: 'd2/cut' }));

  emulators = await startEmulators(dataDir);
  s3 = s3Of(emulators);
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: LOCAL_RESOURCES.bucket }));
  s3.destroy();

  expect((listed.Contents ?? []).map((object) => object.Key)).toEqual([...kept].sort());
  expect(await readdir(join(bucketDir, 'd2'))).toEqual(['x%20y._S3rver_metadata.json', 'x%20y._S3rver_object', 'x%20y._S3rver_object.md5']);
  expect(await readdir(join(dataDir, S3_WRITES_DIR))).toEqual([]);
});

import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Drive } from '../../client/src/drive';
import { LOCAL_RESOURCES } from '../../lib/local/emulators';
import { removeDataDir, startHost } from '../support/local-host';

// A data dir of a host from before the local S3 gave assembled objects S3's `<md5 of md5s>-<parts>` ETag
// (lib/local/s3rver-multipart.ts, multipartObjectEtags) holds each large upload's object under the MD5 of
// its bytes, while Drive's record holds the multipart form. Such files must still download with the client.

const SECRET = 'd756fcd6cdf99b957a21dffd0aa118b4';
const DRIVE = 'olddata';

it("downloads a large file stored by yesterday's host, whose local S3 ETag is the MD5 of the whole", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'drive-old-data-'));
  const data = randomBytes(9 * 1024 * 1024);
  try {
    const first = await startHost({ DRIVE_API_KEYS: `${DRIVE}:${SECRET}` }, dir);
    try {
      await new Drive({ baseUrl: first.url, apiKey: SECRET, largeFileBytes: 1024 * 1024 }).upload({ path: '/big.bin', data });
    } finally {
      await first.stop();
    }
    // What yesterday's s3rver kept beside the object: the MD5 of the whole file.
    const folder = join(dir, 's3', LOCAL_RESOURCES.bucket, DRIVE);
    const md5File = (await readdir(folder)).find((name) => name.endsWith('._S3rver_object.md5'))!;
    await writeFile(join(folder, md5File), createHash('md5').update(data).digest('hex'));

    const second = await startHost({ DRIVE_API_KEYS: `${DRIVE}:${SECRET}` }, dir);
    try {
      const download = await new Drive({ baseUrl: second.url, apiKey: SECRET, directDownloadBytes: 10 }).download('/big.bin');
      // Storage's ETag is not the record's: the client reads it through the API instead.
      expect(download.direct).toBe(false);
      expect(Buffer.from(await new Response(download.body).arrayBuffer()).equals(data)).toBe(true);
    } finally {
      await second.stop();
    }
  } finally {
    await removeDataDir(dir);
  }
});

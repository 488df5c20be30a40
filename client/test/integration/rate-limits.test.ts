import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningHost, startHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import { mapLimit } from '../../src/pool';
import { type TreeFile, etagMismatches, smallFiles, writeTree } from '../support/trees';

const SHARED = 'client-shared-job-key-oFGRbyvwuP5fmk1g';
const LONE = 'client-lone-job-key-oFGRbyvwuP5fmk1g';
const UPLOAD_LIMIT = 120;
const LIST_LIMIT = 120;

let host: RunningHost;
let dir: string;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `default:${SHARED},default:${LONE}`, DRIVE_RATE_LIMITS: `upload=${UPLOAD_LIMIT},list=${LIST_LIMIT}` });
  dir = await mkdtemp(join(tmpdir(), 'drive-client-storm-'));
});

afterAll(async () => {
  await stopHost(host);
  await rm(dir, { recursive: true, force: true });
});

/**
 * Spends every token of the key's upload bucket, as another job using the same key would: until the host
 * refuses one. A fixed count (the bucket's size) left the tokens that refilled while it was sent, which on a
 * slow machine were enough for the jobs below, and then no 429 came.
 */
async function drainUploadBucket(key: string): Promise<void> {
  for (let refused = false; !refused; ) {
    const statuses = await mapLimit(Array.from({ length: 8 }), 8, async () => {
      const res = await fetch(`${host.url}/drive/upload`, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      return res.status;
    });
    refused = statuses.includes(429);
  }
}

describe('Drive client: rate limits', () => {
  it('rides out a 429 storm: four jobs on one key whose bucket is empty all finish, without a failure', async () => {
    // Prepare: four jobs of 8 files each, 2 files per request, on a key another job has just drained.
    const jobs: TreeFile[][] = [];
    for (let job = 0; job < 4; job++) jobs.push(await writeTree(join(dir, `job${job}`), smallFiles(8, 2, 2048, job + 1)));
    await drainUploadBucket(SHARED);
    const drives = jobs.map(() => new Drive({ baseUrl: host.url, apiKey: SHARED, maxFilesPerRequest: 2 }));
    const started = Date.now();

    // Act
    const reports = await Promise.all(jobs.map((files, job) => drives[job].uploadMany(files.map((file) => ({ file: file.local, path: `/storm/job${job}/${file.relative}` })))));

    // Assess: refusals came (the bucket refills 2 a second and four jobs want more), and none became a failure.
    const refused = drives.reduce((sum, drive) => sum + drive.stats.rateLimited, 0);
    expect(refused).toBeGreaterThan(0);
    expect(reports.flatMap((report) => report.failed)).toEqual([]);
    expect(reports.map((report) => report.uploaded.length)).toEqual([8, 8, 8, 8]);
    for (let job = 0; job < 4; job++) expect(await etagMismatches(drives[job], jobs[job], `/storm/job${job}`)).toEqual([]);
    console.log(
      `Client report: 429 storm (upload=${UPLOAD_LIMIT}/min, bucket drained, 4 jobs x 4 requests on one key): ` +
        `${refused} answers were 429, 0 failures, ${drives.reduce((sum, drive) => sum + drive.stats.requests, 0)} requests, done in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });

  it('paces a lone client by the RateLimit headers, so that it waits instead of being refused', async () => {
    // Prepare: 6 lists more than the bucket holds. It refills 2 a second, and the first 120 take well under a
    // second, so without pacing at least 4 of the 6 would be refused.
    const drive = new Drive({ baseUrl: host.url, apiKey: LONE });
    const started = Date.now();

    // Act
    await mapLimit(Array.from({ length: LIST_LIMIT + 6 }), 8, () => drive.list('/'));

    // Assess: no 429: the requests beyond the bucket waited for their tokens instead.
    expect(drive.stats.rateLimited).toBe(0);
    expect(drive.stats.requests).toBe(LIST_LIMIT + 6);
    expect(drive.stats.pacedMs).toBeGreaterThan(1000);
    console.log(`Client report: pacing (list=${LIST_LIMIT}/min): ${drive.stats.requests} lists, 0 refused, ${((Date.now() - started) / 1000).toFixed(1)} s, ${drive.stats.pacedMs} ms waited for tokens (summed over requests)`);
  });
});

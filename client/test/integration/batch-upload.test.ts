import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningHost, sharedHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import { type TreeFile, countingFetch, etagMismatches, smallFiles, verifyByDownload, writeTree } from '../support/trees';

const UPLOADER = 'client-uploader-key-oFGRbyvwuP5fmk1g';
// Rate limits are per key: the byte-for-byte check downloads through keys of its own on the same drive and
// leaves the uploader's limits alone.
const VERIFIERS = Array.from({ length: 5 }, (_, i) => `client-verifier-${i}-key-oFGRbyvwuP5fmk1g`);
const MiB = 1024 * 1024;
/** Two requests' worth at `MAX_FILES_PER_REQUEST`: the packing across requests is what the count proves. */
const SMALL_FILES = 200;
const MAX_FILES_PER_REQUEST = 100;

let host: RunningHost;
let dir: string;
let tree: TreeFile[];

beforeAll(async () => {
  // The spec's default rate limits: no DRIVE_RATE_LIMITS. The worker's host for files with those limits
  // (`sharedHost`); the drive is this file's own.
  host = await sharedHost({ DRIVE_API_KEYS: [UPLOADER, ...VERIFIERS].map((key) => `client-batch:${key}`).join(',') });
  dir = await mkdtemp(join(tmpdir(), 'drive-client-tree-'));
  tree = await writeTree(dir, [
    ...smallFiles(SMALL_FILES, 40, 16 * 1024),
    { relative: 'large/over-10-mib.bin', size: 10 * MiB + 1 },
    { relative: 'large/nested/12-and-a-half.bin', size: 12.5 * MiB },
    { relative: 'large/17-mib-and-change.bin', size: 17 * MiB + 123 },
  ]);
});

afterAll(async () => {
  await stopHost(host);
  await rm(dir, { recursive: true, force: true });
});

describe('Drive client against the local host, default rate limits', () => {
  it('uploads a tree of small files in two requests and 3 over 10 MiB in parts, eight requests in all, never refused, every byte verified', async () => {
    // Prepare
    const fetcher = countingFetch();
    // At most 100 files a request, so the small files take two: one request of ~450 (what 4.5 MB holds) could
    // pass API Gateway's 29 s on a loaded machine, and a 504 costs the whole request again.
    const drive = new Drive({ baseUrl: host.url, apiKey: UPLOADER, fetch: fetcher, maxFilesPerRequest: MAX_FILES_PER_REQUEST });
    // The jest worker's RSS says little (it has grown with earlier suites); the heap and buffers the upload adds do.
    const inUse = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    const inUseBefore = inUse();
    let inUsePeak = inUseBefore;
    const started = Date.now();

    // Act
    const report = await drive.uploadMany(
      tree.map((file) => ({ file: file.local, path: `/batch/${file.relative}` })),
      { onProgress: () => (inUsePeak = Math.max(inUsePeak, inUse())) },
    );
    const uploadMs = Date.now() - started;
    const requests = fetcher.count;
    const byKind = { ...fetcher.byKind };

    // Assess: every file stored, nothing refused, and far fewer requests than files.
    expect(report.failed).toEqual([]);
    expect(report.uploaded).toHaveLength(SMALL_FILES + 3);
    // Never refused (no 429). A request the host answered 504 (past API Gateway's 29 s, on a loaded machine) is
    // retried, as the client must; each retry is one request more below.
    expect(drive.stats).toMatchObject({ rateLimited: 0 });
    const retries = drive.stats.retries;
    expect(requests).toBe(drive.stats.requests);
    const apiUploads = drive.stats.requestsBy.upload;
    // 200 files of at most 16 KiB, 100 a request: two requests (1,000 files made five and proved no more);
    // each large file is a start and a complete.
    expect(apiUploads).toBeLessThanOrEqual(8 + retries);
    expect(byKind['PUT (storage)']).toBeGreaterThanOrEqual(2 + 2 + 3);
    expect(byKind['PUT (storage)']).toBeLessThanOrEqual(2 + 2 + 3 + retries);
    expect(requests).toBe(apiUploads + byKind['PUT (storage)']);

    // Every file's stored bytes against the local file, by the content ETag S3 computed from them (one listing);
    // and downloaded whole: the large files and every 20th small one (2,003 downloads were most of this test's
    // minutes on a loaded machine, and prove no more of the upload).
    expect(await etagMismatches(drive, tree, '/batch')).toEqual([]);
    const verifyStarted = Date.now();
    const verifiers = VERIFIERS.map((key) => new Drive({ baseUrl: host.url, apiKey: key }));
    const sample = tree.filter((file, i) => file.size > 10 * MiB || i % 20 === 0);
    const verified = await verifyByDownload(verifiers, sample, '/batch');
    const verifyMs = Date.now() - verifyStarted;
    expect(verified.mismatched).toEqual([]);
    expect(verified.checked).toBe(3 + SMALL_FILES / 20);

    const bytes = tree.reduce((sum, file) => sum + file.size, 0);
    console.log(
      [
        `Client report: ${SMALL_FILES} small files (0-16 KiB) + 3 files over 10 MiB, default rate limits`,
        `  files ${tree.length}, ${(bytes / MiB).toFixed(1)} MiB`,
        `  HTTP requests for the upload: ${requests} (${Object.entries(byKind).map(([kind, n]) => `${n} ${kind}`).join(', ')})`,
        `  of the upload rate limit (100/min): ${apiUploads} tokens; 429s: ${drive.stats.rateLimited}; retries: ${drive.stats.retries}; paced ${drive.stats.pacedMs} ms`,
        `  upload: ${(uploadMs / 1000).toFixed(2)} s, ${(bytes / MiB / (uploadMs / 1000)).toFixed(1)} MiB/s, ${Math.round((tree.length * 1000) / uploadMs)} files/s`,
        `  client heap + buffers: at most ${((inUsePeak - inUseBefore) / MiB).toFixed(1)} MiB more during the upload than before (bodies stream from disk)`,
        `  verified by download: ${verified.checked} files, ${(verified.bytes / MiB).toFixed(1)} MiB in ${(verifyMs / 1000).toFixed(2)} s (5 keys)`,
      ].join('\n'),
    );
  });
});

import { type RunningHost, startHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';
import type { DeleteJob } from '../../src/types';

// A delete too big for one request answers 202 with a job; the client reads the job until it is done and
// answers as for a 200. DRIVE_DELETE_BUDGET_MS=0 makes every recursive delete of a tree a job.

const KEY = 'client-jobs-key-XLSRCq7SRGhk5TMH4GBKqX';

let host: RunningHost;
let drive: Drive;

beforeAll(async () => {
  // DRIVE_DELETE_STEP_MS is the old name of DRIVE_JOB_STEP_MS, still read (test/unit/config.test.ts checks it).
  host = await startHost({ DRIVE_API_KEYS: `default:${KEY}`, DRIVE_RATE_LIMITS: 'off', DRIVE_DELETE_BUDGET_MS: '0', DRIVE_DELETE_STEP_MS: '20' });
  drive = new Drive({ baseUrl: host.url, apiKey: KEY });
});

afterAll(() => stopHost(host));

describe('Method: deleteFolder, answered with a job', () => {
  it('waits for the job and resolves with its result, telling onProgress as the job moves', async () => {
    const report = await drive.uploadMany(Array.from({ length: 120 }, (_, i) => ({ path: `/tree/d${i % 4}/f${i}.txt`, data: `${i}` })));
    expect(report.failed).toEqual([]);
    const seen: DeleteJob[] = [];

    const deletion = await drive.deleteFolder('/tree', { recursive: true, onProgress: (job) => seen.push(job) });

    expect(deletion).toEqual({ deleted: true, path: '/tree', files_deleted: 120 });
    expect(seen[0]).toMatchObject({ status: 'running', path: '/tree' });
    expect(seen.at(-1)).toMatchObject({ status: 'done', files_deleted: 120, result: { deleted: true, path: '/tree', files_deleted: 120 } });
    expect(new Set(seen.map((job) => job.id)).size).toBe(1);
    await expect(drive.list('/tree')).rejects.toMatchObject({ code: 'not_found' });
  });
});

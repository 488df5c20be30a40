import { type DriveClient, type ListingJson, json } from './api-client';
import { runFsck } from './fsck';

// A drive's trees as the job tests (test/integration/move.test.ts and delete-jobs.test.ts, and the chaos
// tests of the same jobs across a crash) make and read them: files uploaded 50 a request, a file's text, a
// folder's tree, a job followed to its end, fsck's verdict.

/** Uploads a file at each of `paths`, 50 a request, each holding `bytes of <its path>`. */
export async function putFiles(client: DriveClient, paths: string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 50) {
    const batch = paths.slice(i, i + 50);
    const res = await client.upload(
      batch.map((path) => ({ data: `bytes of ${path}`, filename: 'x' })),
      batch.map((path) => ({ path })),
    );
    expect(res.status).toBe(200);
  }
}

/** Uploads `count` files (`f<i>.txt`, holding `file <i>`) spread over `folders` subfolders of `root`, each with 3 of its own, 50 a request. */
export async function seedFolders(client: DriveClient, root: string, count: number, folders: number): Promise<void> {
  for (let start = 0; start < count; start += 50) {
    const files = Array.from({ length: Math.min(50, count - start) }, (_, i) => ({ data: `file ${start + i}`, filename: `f${start + i}.txt` }));
    const res = await client.upload(files, files.map((_, i) => ({ folder: `${root}/d${(start + i) % folders}/e${(start + i) % 3}` })));
    expect(res.status).toBe(200);
  }
}

/** The text of the file at `path`, or the status of a download that is not a 200. */
export async function textAt(client: DriveClient, path: string): Promise<string | number> {
  const res = await client.download({ path });
  return res.status === 200 ? res.text() : res.status;
}

/** Every file and folder below `folder` (folders with a trailing `/`), sorted; or the listing's status if not 200. */
export async function treeOf(client: DriveClient, folder: string): Promise<string[] | number> {
  const res = await json<{ data: ListingJson }>(client.list({ folder, recursive: 'true' }));
  if (res.status !== 200) return res.status;
  return [...res.body.data.files.map((f) => f.path), ...res.body.data.folders.map((f) => `${f.path}/`)].sort();
}

/** Reads the job at `url` (its `Location`) until it is done; Jest's timeout is the backstop for one that never is. */
export async function untilDone<Job extends { status: string }>(url: string, client: DriveClient): Promise<Job> {
  for (;;) {
    const res = await json<{ data: { job: Job } }>(fetch(url, { headers: { Authorization: `Bearer ${client.key}` } }));
    expect(res.status).toBe(200);
    if (res.body.data.job.status === 'done') return res.body.data.job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** fsck of the stopped or running host's `dataDir` finds nothing to report. */
export async function expectFsckClean(dataDir: string): Promise<void> {
  const fsck = await runFsck(dataDir);
  expect(fsck).toEqual({ code: 0, output: expect.stringContaining('clean') });
}

/** fsck of `dataDir` exits 0 and finds no object that no record points to (what a crash mid-job must not leave). */
export async function expectNoOrphans(dataDir: string): Promise<void> {
  const fsck = await runFsck(dataDir);
  expect(fsck).toMatchObject({ code: 0 });
  expect(fsck.output).toMatch(/0 {2}objects no record points to/);
}

import { DriveClient, type FileJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost, storedState, sweepTrashAt } from '../support/local-host';
import { type TrashItemJson, trashPage } from '../support/trash';

// The sweep's purge of trash items past their purge time (issue 28), through the DynamoDB and S3 adapters on
// the local host's emulators, its clock driven: seven days pass without waiting for them. The order of a
// purge's steps and its bounded runs are test/model/trash.test.ts's, on memory ports.

const ADMIN = 'sweep-admin-Vq3Lm8XcT1nR6pW0zK4bYs9';
const DAY = 86_400_000;

let host: RunningHost;
let admin: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `sweep:${ADMIN}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_TRASH_DAYS: '7' });
  admin = new DriveClient(host.url, ADMIN);
});

afterAll(() => stopHost(host));

async function upload(path: string, data: string): Promise<FileJson> {
  const res = await json<{ data: FileJson[] }>(admin.upload([{ data, filename: 'x.txt' }], [{ path }]));
  expect(res.status).toBe(200);
  return res.body.data[0];
}

async function remove(path: string): Promise<void> {
  expect((await admin.request('DELETE', `/drive/files?${new URLSearchParams({ path })}`)).status).toBe(200);
}

/** The trash's items below `/sw`, by path. */
async function trashed(): Promise<Map<string, TrashItemJson>> {
  const res = await trashPage(admin, { path: '/sw' });
  expect(res.status).toBe(200);
  return new Map(res.body.data.items.map((item) => [item.path, item]));
}

const stored = async (file: FileJson) => (await storedState(host.dataDir)).objectKeys.includes(`sweep/${file.id}`);

it('purges the items past their purge time, bytes and rows, and leaves the others and the live files', async () => {
  const first = await upload('/sw/first.txt', 'first');
  const second = await upload('/sw/second.txt', 'second');
  const live = await upload('/sw/live.txt', 'live');
  await remove('/sw/first.txt');
  const { purge_at: firstDue } = (await trashed()).get('/sw/first.txt')!;
  // The second delete a moment after the first, so that its purge time is later than the first's.
  while (Date.now() <= Date.parse(firstDue) - 7 * DAY) await new Promise((resolve) => setImmediate(resolve));
  await remove('/sw/second.txt');
  const { purge_at: secondDue } = (await trashed()).get('/sw/second.txt')!;
  expect(Date.parse(secondDue)).toBeGreaterThan(Date.parse(firstDue));

  // A moment before the first is due: nothing.
  expect(await sweepTrashAt(host.dataDir, new Date(Date.parse(firstDue) - 1))).toEqual({ purged: 0, skipped: 0 });
  expect([...(await trashed()).keys()].sort()).toEqual(['/sw/first.txt', '/sw/second.txt']);
  expect(await stored(first)).toBe(true);

  // At the first's purge time: the first, bytes and row; the second stays, restorable.
  expect(await sweepTrashAt(host.dataDir, new Date(firstDue))).toEqual({ purged: 1, skipped: 0 });
  expect([...(await trashed()).keys()]).toEqual(['/sw/second.txt']);
  expect(await stored(first)).toBe(false);
  expect(await stored(second)).toBe(true);

  // A day past the second's: the second too. A run after finds nothing more to do.
  expect(await sweepTrashAt(host.dataDir, new Date(Date.parse(secondDue) + DAY))).toEqual({ purged: 1, skipped: 0 });
  expect(await sweepTrashAt(host.dataDir, new Date(Date.parse(secondDue) + DAY))).toEqual({ purged: 0, skipped: 0 });
  expect((await trashed()).size).toBe(0);
  expect(await stored(second)).toBe(false);

  // The live file is untouched, and nothing is left behind.
  expect(await stored(live)).toBe(true);
  expect((await admin.download({ path: '/sw/live.txt' })).status).toBe(200);
  expect((await runFsck(host.dataDir)).code).toBe(0);
});

import { DriveClient } from '../support/api-client';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { deleteAndRestoreWhole } from '../support/trash';

// Issue 28's size test: a folder of 1,000 files deleted recursively and restored, each as a job, comes back
// whole (test/support/trash.ts). A minute or two on a loaded machine, so it runs with the chaos tier;
// test/integration/trash.test.ts runs the same round on 100 files in every `npm test`.

const KEY = 'trash-restore-key-J4nWq8RzT2vLc6YpE0sKd';

let host: RunningHost;
let client: DriveClient;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `big:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_TRASH_DAYS: '7', DRIVE_DELETE_BUDGET_MS: '0' });
  client = new DriveClient(host.url, KEY);
});

afterAll(() => stopHost(host));

it('restores a folder of 1,000 files deleted as a job, as a job, whole: the same records, listing and ETags; fsck clean', async () => {
  await deleteAndRestoreWhole(client, host.dataDir, '/thousand', 1000);
});

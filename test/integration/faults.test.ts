import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FaultRule } from '../support/fault-host';
import { DriveClient, type DeletedJson, type ErrorJson, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

const KEY = 'faults-key-0123456789abcdefghijklmn';

let host: RunningHost;
let drive: DriveClient;

beforeAll(async () => {
  // Keys cached, rate limits off: the only AWS calls are the operation's own.
  host = await startHost({ DRIVE_API_KEYS: `faults:${KEY}`, DRIVE_RATE_LIMITS: 'off', DRIVE_KEY_CACHE_SECONDS: '600' }, undefined, 'test/support/fault-host.ts');
  drive = new DriveClient(host.url, KEY);
  await drive.list();
});

afterEach(async () => {
  await inject([]);
});

afterAll(() => stopHost(host));

/** Makes the next calls of each rule's command fail as it says. */
async function inject(rules: FaultRule[]): Promise<void> {
  await writeFile(join(host.dataDir, 'faults.json'), JSON.stringify(rules));
  // The host notices the file by its modification time; let the clock move.
  await new Promise((resolve) => setTimeout(resolve, 15));
}

async function expectClean(): Promise<void> {
  expect(await runFsck(host.dataDir)).toEqual({ code: 0, output: expect.stringContaining('clean') });
}

const files = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ data: `${prefix} ${i}`, filename: `${prefix}-${i}.txt` }));

async function expectInternalError(response: Promise<Response>): Promise<void> {
  const { status, body } = await json<ErrorJson>(response);
  expect({ status, code: body.error.code }).toEqual({ status: 500, code: 'internal_error' });
  expect(body.error.message).not.toMatch(/injected/);
}

describe('faults in upload', () => {
  it.each<[string, FaultRule[]]>([
    ['a failing S3 put (the second of three)', [{ command: 'PutObject', skip: 1, times: 1, mode: 'error' }]],
    ['a failing record write after the bytes are stored', [{ command: 'PutItem', skip: 1, times: 1, mode: 'error' }]],
    ['a failing folder write after the records are stored', [{ command: 'UpdateItem', times: 1, mode: 'error' }]],
  ])('%s: 500 internal_error, nothing stored, fsck clean', async (_, rules) => {
    const folder = `/up-${rules[0].command}`;
    await inject(rules);
    await expectInternalError(drive.upload(files('f', 3), [{ folder }, { folder }, { folder }]));
    await inject([]);
    expect((await drive.list({ folder })).status).toBe(404);
    await expectClean();
  });

  it('a failing replacement keeps the file it would have replaced', async () => {
    await drive.upload([{ data: 'original', filename: 'keep.txt' }], [{ folder: '/replace' }]);
    await inject([{ command: 'GetItem', times: 1, mode: 'error' }, { command: 'PutItem', times: 1, mode: 'error' }]);
    await expectInternalError(drive.upload([{ data: 'new', filename: 'keep.txt' }, { data: 'other', filename: 'other.txt' }], [{ folder: '/replace' }, { folder: '/replace' }]));
    await inject([]);
    expect(await (await drive.download({ path: '/replace/keep.txt' })).text()).toBe('original');
    await expectClean();
  });
});

describe('faults in recursive delete', () => {
  const seed = async (root: string) => {
    const all = files('d', 60);
    const uploaded = await drive.upload(all, all.map((_, i) => ({ folder: `${root}/${i % 3}/sub` })));
    expect(uploaded.status).toBe(200);
  };

  it('throttled BatchWriteItem with unprocessed items: retried, the delete succeeds', async () => {
    await seed('/throttled');
    await inject([{ command: 'BatchWriteItem', times: 3, mode: 'unprocessed' }]);
    const { status, body } = await json<{ data: DeletedJson }>(drive.deleteFolder({ path: '/throttled', recursive: 'true' }));
    expect({ status, files: body.data.files_deleted }).toEqual({ status: 200, files: 60 });
    await expectClean();
  });

  it('DeleteObjects with a partial error: retried, the delete succeeds', async () => {
    await seed('/partial');
    await inject([{ command: 'DeleteObjects', times: 1, mode: 'partial' }]);
    expect((await drive.deleteFolder({ path: '/partial', recursive: 'true' })).status).toBe(200);
    await expectClean();
  });

  it('a failing query mid-walk: 500, nothing deleted', async () => {
    await seed('/walk');
    await inject([{ command: 'Query', skip: 2, times: 1, mode: 'error' }]);
    await expectInternalError(drive.deleteFolder({ path: '/walk', recursive: 'true' }));
    await inject([]);
    const listing = await json<{ data: ListingJson }>(drive.list({ folder: '/walk', recursive: 'true' }));
    expect(listing.body.data.files).toHaveLength(60);
    await expectClean();
  });

  it('a failing BatchWriteItem part-way: 500, what remains is consistent, and a second delete finishes the job', async () => {
    await seed('/half');
    await inject([{ command: 'BatchWriteItem', skip: 1, times: 1, mode: 'error' }]);
    await expectInternalError(drive.deleteFolder({ path: '/half', recursive: 'true' }));
    await inject([]);
    await expectClean();
    expect((await drive.deleteFolder({ path: '/half', recursive: 'true' })).status).toBe(200);
    expect((await drive.list({ folder: '/half' })).status).toBe(404);
    await expectClean();
  });
});

import { type FaultRule, faultControls } from '../support/fault-host';
import { DriveClient, type DeletedJson, type ErrorJson, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost } from '../support/local-host';
import { FINAL_DELETES } from '../support/trash';

const KEY = 'faults-key-29hVHaTbDrEgNFVFcigNCYZW';

let host: RunningHost;
let drive: DriveClient;
/** Makes the next calls of each rule's command fail as it says. */
let inject: (rules: FaultRule[]) => Promise<void>;

beforeAll(async () => {
  // Keys cached, rate limits off: the only AWS calls are the operation's own.
  // Final deletes (the trash off): the faults below are injected into the calls of the delete that destroys
  // (DeleteItem, DeleteObjects), which a delete into the trash does not make.
  host = await startHost({ DRIVE_API_KEYS: `faults:${KEY}`, DRIVE_RATE_LIMITS: 'off', DRIVE_KEY_CACHE_SECONDS: '600', ...FINAL_DELETES }, undefined, 'test/support/fault-host.ts');
  drive = new DriveClient(host.url, KEY);
  inject = faultControls(host.dataDir).inject;
  await drive.list();
});

afterEach(async () => {
  await inject([]);
});

afterAll(() => stopHost(host));

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
    ['a failing S3 put (the second of three)', [{ command: 'PutObject', skip: 1, times: 1, mode: 'error', match: 'faults/' }]],
    ['a failing record write after the bytes are stored', [{ command: 'PutItem', skip: 1, times: 1, mode: 'error', match: '/up-PutItem' }]],
    ['a failing folder write', [{ command: 'UpdateItem', times: 1, mode: 'error', match: '/up-UpdateItem' }]],
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
    await inject([{ command: 'GetItem', times: 1, mode: 'error', match: '/replace' }, { command: 'PutItem', times: 1, mode: 'error', match: '/replace' }]);
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

  it('DeleteObjects with a partial error: retried, the delete succeeds', async () => {
    await seed('/partial');
    await inject([{ command: 'DeleteObjects', times: 1, mode: 'partial', match: 'faults/' }]);
    expect((await drive.deleteFolder({ path: '/partial', recursive: 'true' })).status).toBe(200);
    await expectClean();
  });

  it.each<[string, FaultRule[]]>([
    ['a failing query mid-walk', [{ command: 'Query', skip: 2, times: 1, mode: 'error', match: '/failed-Query' }]],
    ['a failing record delete part-way', [{ command: 'DeleteItem', skip: 20, times: 1, mode: 'error', match: '/failed-DeleteItem' }]],
    ['a failing DeleteObjects', [{ command: 'DeleteObjects', times: 1, mode: 'error', match: 'faults/' }]],
  ])('%s: 500; the folder is gone for readers, fsck names the delete, and the same delete again finishes it', async (_, rules) => {
    const root = `/failed-${rules[0].command}`;
    await seed(root);
    await inject(rules);
    await expectInternalError(drive.deleteFolder({ path: root, recursive: 'true' }));
    await inject([]);
    expect((await drive.list({ folder: root })).status).toBe(404);
    expect((await json<{ data: ListingJson }>(drive.list())).body.data.folders.map((f) => f.path)).not.toContain(root);
    const fsck = await runFsck(host.dataDir);
    expect(fsck.output).toMatch(/1 {2}interrupted deletes/);
    expect(fsck.output).toMatch(/0 {2}objects no record points to/);
    const again = await json<{ data: DeletedJson }>(drive.deleteFolder({ path: root, recursive: 'true' }));
    expect(again.status).toBe(200);
    expect((await drive.list({ folder: root })).status).toBe(404);
    await expectClean();
  });
});

describe('faults in listing', () => {
  it('a listing whose first Query fails answers 500 in JSON, before any byte of the answer, paged or not', async () => {
    const all = files('l', 3);
    expect((await drive.upload(all, all.map(() => ({ folder: '/listed/deep' })))).status).toBe(200);
    for (const query of [{ folder: '/listed' }, { folder: '/listed', recursive: 'true' }, { folder: '/listed', limit: '2' }] as Record<string, string>[]) {
      await inject([{ command: 'Query', times: 1, mode: 'error', match: '/listed' }]);
      await expectInternalError(drive.list(query));
      await inject([]);
      expect((await drive.list(query)).status).toBe(200);
    }
  });
});

describe('faults in a streamed answer', () => {
  it('a failure once the answer has begun closes the connection where the bytes stop, as Lambda does: the client is not left waiting', async () => {
    const all = files('s', 2);
    expect((await drive.upload(all, all.map(() => ({ folder: '/streamed/deep' })))).status).toBe(200);
    // The first Query (of /streamed) is made before the answer starts; the second (of /streamed/deep) fails mid-answer.
    await inject([{ command: 'Query', skip: 1, times: 1, mode: 'error', match: '/streamed' }]);
    const res = await drive.list({ folder: '/streamed', recursive: 'true' });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    await inject([]);
    expect(host.output()).toMatch(/the handler failed: InjectedFault/);
    expect((await drive.list({ folder: '/streamed', recursive: 'true' })).status).toBe(200);
  });
});

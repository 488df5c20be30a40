import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningHost, sharedHost, stopHost } from '../../../test/support/local-host';
import { splitExisting } from '../../src/cli/skip-existing';
import { Drive } from '../../src/drive';

// The client's pages of a folder (an extension of the API: limit and cursor).

const KEY = 'client-paging-key-AbJ9eQiGKwZ4ujW4Oc7R';

let host: RunningHost;
let drive: Drive;

beforeAll(async () => {
  host = await sharedHost({ DRIVE_API_KEYS: `client-paging:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
  drive = new Drive({ baseUrl: host.url, apiKey: KEY });
  const report = await drive.uploadMany(Array.from({ length: 5 }, (_, i) => ({ path: `/pages/f${i}.txt`, data: `${i}` })));
  expect(report.failed).toEqual([]);
  await drive.createFolder('/pages/sub');
});

afterAll(() => stopHost(host));

describe('Method: listPages', () => {
  it('yields the folder a page at a time, each entry once, until the API says there is no more', async () => {
    const pages = [];
    for await (const page of drive.listPages('/pages', { limit: 2 })) pages.push(page);

    expect(pages.map((page) => page.files.length + page.folders.length)).toEqual([2, 2, 2]);
    expect(pages.flatMap((page) => [...page.files, ...page.folders].map((entry) => entry.path))).toEqual([
      '/pages/f0.txt',
      '/pages/f1.txt',
      '/pages/f2.txt',
      '/pages/f3.txt',
      '/pages/f4.txt',
      '/pages/sub',
    ]);
  });
});

describe('drive upload --skip-existing (splitExisting)', () => {
  it('reads what the drive holds a page at a time, keeping only the entries the upload would write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'drive-skip-'));
    try {
      await writeFile(join(dir, 'f1.txt'), '1');
      await writeFile(join(dir, 'new.txt'), 'new');
      const files = [
        { local: join(dir, 'f1.txt'), remote: '/pages/f1.txt', size: 1 },
        { local: join(dir, 'new.txt'), remote: '/pages/new.txt', size: 3 },
      ];
      const whole = jest.spyOn(drive, 'list').mockRejectedValue(new Error('the whole listing was asked for'));
      const pages = jest.spyOn(drive, 'listPages');

      const split = await splitExisting(drive, files, '/pages');

      expect(split.existing.map((file) => file.remote)).toEqual(['/pages/f1.txt']);
      expect(split.missing.map((file) => file.remote)).toEqual(['/pages/new.txt']);
      expect(whole).not.toHaveBeenCalled();
      expect(pages).toHaveBeenCalledWith('/pages', expect.objectContaining({ recursive: true, etags: true }));
      whole.mockRestore();
      pages.mockRestore();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

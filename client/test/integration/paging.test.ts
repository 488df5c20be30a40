import { type RunningHost, startHost, stopHost } from '../../../test/support/local-host';
import { Drive } from '../../src/drive';

// The client's pages of a folder (an extension of the API: limit and cursor).

const KEY = 'client-paging-key-0123456789abcdefghij';

let host: RunningHost;
let drive: Drive;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `default:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
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

import { DriveClient, type ListingJson } from '../support/api-client';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

// An unpaged listing of a folder past one page of 1,000 children, with long paths: the host streams it, and
// it arrives whole, in order, in the spec shape. The same past Lambda's 6 MB buffered limit (5,000 files) is
// a size test, in test/chaos/big-listing.test.ts.

const KEY = 'biglist-key-f6UrpcrOhwuH2C8YgGgAiPrZeO';

let host: RunningHost;

beforeAll(async () => {
  // The worker's host for files without rate limits (`sharedHost`); the drive is this file's own, and the
  // listing is of a folder of it.
  host = await sharedHost({ DRIVE_API_KEYS: `big:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
});

afterAll(() => stopHost(host));

it('answers a folder of 1,200 files with long paths whole, in order, in the spec shape', async () => {
  const drive = new DriveClient(host.url, KEY);
  const folder = `/${'deep-folder-name-'.repeat(12)}/${'x'.repeat(200)}/${'y'.repeat(200)}/${'z'.repeat(150)}`;
  for (let batch = 0; batch < 4; batch++) {
    const files = Array.from({ length: 300 }, (_, i) => ({ data: '', filename: `${String(batch * 300 + i).padStart(5, '0')}-${'n'.repeat(200)}.txt` }));
    expect((await drive.upload(files, files.map(() => ({ folder })))).status).toBe(200);
  }

  const res = await drive.list({ folder });
  const text = await res.text();

  expect(res.status).toBe(200);
  const listing = (JSON.parse(text) as { data: ListingJson }).data;
  expect(listing.files).toHaveLength(1200);
  expect(listing.files.map((file) => file.path)).toEqual(listing.files.map((file) => file.path).sort());
  expect(listing.files[1199].path).toBe(`${folder}/01199-${'n'.repeat(200)}.txt`);
  expect(listing.folders).toEqual([]);
});

import { runByteFuzz } from '../support/byte-fuzz';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// The byte-level fuzz of test/integration/byte-fuzz.test.ts, at length.

const KEY = 'bytefuzz-chaos-key-ace963cW1zaYDEO7Y6';

let host: RunningHost;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `fuzz:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_LOCAL_REQUEST_TIMEOUT_SECONDS: '2' });
});

afterAll(() => stopHost(host));

it('answers 3,000 spoiled requests below 500, stays up, and leaves fsck clean', async () => {
  const { answered } = await runByteFuzz(host.url, KEY, host.output, 3000, 2026);
  console.log(`byte fuzz answers by status: ${JSON.stringify(answered)}`);
  const fsck = await runFsck(host.dataDir);
  expect(fsck.code).toBe(0);
});

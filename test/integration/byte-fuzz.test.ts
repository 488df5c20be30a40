import { runByteFuzz } from '../support/byte-fuzz';
import { runFsck } from '../support/fsck';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// Raw requests spoiled byte by byte (truncated anywhere, bytes flipped, parts renamed or retyped, boundaries
// doubled, chunked bodies that stop, clients that hang up): the host never dies and never answers 5xx.
// `npm run test:chaos` runs the same with many more requests (test/chaos/byte-fuzz.test.ts).

const KEY = 'bytefuzz-key-H2WYbhMyZ9SZaRESTDG4FsW';

let host: RunningHost;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `fuzz:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off', DRIVE_LOCAL_REQUEST_TIMEOUT_SECONDS: '2' });
});

afterAll(() => stopHost(host));

describe('byte-level fuzz of the local host', () => {
  it('answers 120 spoiled requests below 500, stays up, and leaves fsck clean', async () => {
    const { answered } = await runByteFuzz(host.url, KEY, host.output, 120, 12);
    expect(Object.keys(answered).length).toBeGreaterThan(2);
    const fsck = await runFsck(host.dataDir);
    expect(fsck.output).toContain('0  objects no record points to');
    expect(fsck.code).toBe(0);
  });
});

import { Drive } from '../../client/src/drive';
import { type RunningHost, sharedHost, stopHost } from '../support/local-host';

// The API takes a path in any Unicode normalisation form and answers in NFC (functions/core/paths.ts); the
// client's direct download (client/src/download.ts, directDownloadOf) must accept that as the file it asked for.

const SECRET = 'd756fcd6cdf99b957a21dffd0aa118b4';
const NFC = '/caf\u00e9.bin';
const NFD = '/cafe\u0301.bin';
const bytes = Buffer.from('0123456789abcdef0123');
let host: RunningHost;

beforeAll(async () => {
  // The worker's host for files with the spec's rate limits (`sharedHost`); the drive is this file's own.
  host = await sharedHost({ DRIVE_API_KEYS: `names:${SECRET}` });
  await new Drive({ baseUrl: host.url, apiKey: SECRET }).upload({ path: NFC, data: bytes });
});

afterAll(() => stopHost(host));

async function read(body: ReadableStream<Uint8Array>): Promise<Buffer> {
  return Buffer.from(await new Response(body).arrayBuffer());
}

it('downloads a file named in NFD (as macOS gives names) straight from storage, as it does through the API', async () => {
  const throughApi = await new Drive({ baseUrl: host.url, apiKey: SECRET }).download(NFD);
  expect((await read(throughApi.body)).equals(bytes)).toBe(true);

  // Over directDownloadBytes: the same request, by the presigned URL.
  const direct = await new Drive({ baseUrl: host.url, apiKey: SECRET, directDownloadBytes: 10 }).download(NFD);
  expect(direct.direct).toBe(true);
  expect((await read(direct.body)).equals(bytes)).toBe(true);
});

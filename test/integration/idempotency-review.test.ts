import { type AttributeValue, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { LOCAL_RESOURCES, localCredentials } from '../../lib/local/emulators';
import { faultControls } from '../support/fault-host';
import { idempotentRequests } from '../support/idempotent-requests';
import { type RunningHost, startHost, stopHost } from '../support/local-host';

// Review of issue 26 (Idempotency-Key) on the real host: what a kept answer holds at rest, and which answers
// are kept. A first request is held mid-way by the fault host's `hold` rule (never by timing).

const KEY = 'idem-review-key-4Rt8Kp3Wz6Nc7Hq2Lm9Vx';

let host: RunningHost;
let faults: ReturnType<typeof faultControls>;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `rev:${KEY}:admin`, DRIVE_RATE_LIMITS: 'off' }, undefined, 'test/support/fault-host.ts');
  faults = faultControls(host.dataDir);
});

afterEach(() => faults.reset());

afterAll(() => stopHost(host));

const { send, json, upload } = idempotentRequests(() => host.url, KEY);

/** Every idempotency item of the host's access table (records and chunks), its kept body gunzipped to text. */
async function keptAnswers(): Promise<{ pk: string; text: string }[]> {
  const endpoints = JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
  const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'us-east-1', credentials: await localCredentials(host.dataDir) });
  try {
    const items: Record<string, AttributeValue>[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamodb.send(new ScanCommand({ TableName: endpoints.accessTable, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const idem = items.filter((item) => item.pk?.S?.startsWith('idem'));
    // A chunked answer is gunzipped whole below only if inline; chunks are searched as raw bytes too.
    return idem.map((item) => {
      const bytes = item.body?.B;
      let text = '';
      if (bytes) {
        try {
          text = gunzipSync(bytes).toString('utf8');
        } catch {
          text = Buffer.from(bytes).toString('latin1');
        }
      }
      return { pk: item.pk!.S!, text };
    });
  } finally {
    dynamodb.destroy();
  }
}

describe('Idempotency-Key, reviewed on the local host', () => {
  it('never keeps a new API key\'s secret at rest: it is "shown once and stored only as SHA-256" (DESIGN.md)', async () => {
    const created = await json('POST', '/drive/keys', { name: 'review secret', role: 'read-only' }, randomUUID());
    const secret = (JSON.parse(created.text) as { data: { secret: string } }).data.secret;

    const holding = (await keptAnswers()).filter((item) => item.text.includes(secret)).map((item) => item.pk);

    expect(created.status).toBe(200);
    expect(holding).toEqual([]);
  });

  it('never keeps a share link\'s token at rest: "only its SHA-256, the link\'s id, is stored" (create-link.ts)', async () => {
    expect((await upload([{ name: 'shared.txt', data: 'shared' }], '/review-link')).status).toBe(200);
    const created = await json('POST', '/drive/links', { path: '/review-link/shared.txt' }, randomUUID());
    const url = (JSON.parse(created.text) as { data: { url: string } }).data.url;
    const token = url.slice(url.lastIndexOf('/s/') + 3);

    const holding = (await keptAnswers()).filter((item) => item.text.includes(token)).map((item) => item.pk);

    expect([created.status, token.length > 20]).toEqual([200, true]);
    expect(holding).toEqual([]);
  });

  it('does not keep a 409 that says "try again in a minute": the retry with the same key, after the minute, moves the file', async () => {
    // Prepare: an upload of two files held after its records are written (pending), before its journal closes
    // The journal's close (the uploads table), not a BatchWriteItem of the host's own work.
    await faults.inject([{ command: 'BatchWriteItem', times: 1, mode: 'hold', match: LOCAL_RESOURCES.uploadsTable }]);
    const uploading = upload(
      [
        { name: 'a.txt', data: 'a' },
        { name: 'b.txt', data: 'b' },
      ],
      '/review-pending',
    );
    await faults.held();
    const idempotencyKey = randomUUID();
    const during = await json('POST', '/drive/move', { from: '/review-pending/a.txt', to: '/review-moved/a.txt' }, idempotencyKey);

    // Act: the upload ends; the client does as the 409 said, with the same key, as docs/api.md says a retry does
    await faults.inject([]);
    await faults.release();
    expect((await uploading).status).toBe(200);
    const retry = await json('POST', '/drive/move', { from: '/review-pending/a.txt', to: '/review-moved/a.txt' }, idempotencyKey);

    // Assess: the first answer said to try again; the retry is not stuck with it for 24 hours
    expect({ status: during.status, message: JSON.parse(during.text).error?.message }).toEqual({ status: 409, message: expect.stringContaining('try again') });
    expect({ status: retry.status, replayed: retry.headers.get('idempotent-replayed') }).toEqual({ status: 200, replayed: null });
    expect((await send('GET', '/drive/list?folder=/review-moved')).status).toBe(200);
  });
});

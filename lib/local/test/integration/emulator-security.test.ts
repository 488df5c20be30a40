import { DynamoDBClient, ListTablesCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { CREDENTIALS_FILE, LOCAL_RESOURCES, localCredentials } from '../../emulators';
import { DriveClient, type FileJson, json } from '../../../../test/support/api-client';
import { type RunningHost, startHost, stopHost } from '../../../../test/support/local-host';

// Nothing on this machine reaches the data but through Drive's API or a request signed with the host's own
// credentials (issue 12): the embedded S3 and DynamoDB sit behind gateways that check SigV4 as AWS does.

const KEY = 'emulator-key-29hVHaTbDrEgNFVFcigNCYZW';
/** A key confined to /team, which may not read /payroll.csv. */
const TEAM = 'emulator-team-H2WYbhMyZ9SZaRESTDG4FsW';

let host: RunningHost;
let endpoints: { s3: string; dynamodb: string };
let file: FileJson;

beforeAll(async () => {
  host = await startHost({ DRIVE_API_KEYS: `emu:${KEY}:admin,emu:${TEAM}:read-write:/team`, DRIVE_RATE_LIMITS: 'off', DRIVE_CORS_ORIGINS: 'https://app.example.com' });
  endpoints = JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as typeof endpoints;
  const uploaded = await json<{ data: FileJson[] }>(new DriveClient(host.url, KEY).upload([{ data: 'secret bytes', filename: 'payroll.csv' }]));
  file = uploaded.body.data[0];
});

afterAll(() => stopHost(host));

const objectKey = () => `emu/${file.id}`;
const s3With = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
  new S3Client({ endpoint: endpoints.s3, forcePathStyle: true, region: 'us-east-1', credentials, requestChecksumCalculation: 'WHEN_REQUIRED', maxAttempts: 1 });

async function expectS3Refusal(response: Promise<Response>, code: string): Promise<void> {
  const res = await response;
  expect(res.status).toBe(403);
  expect(await res.text()).toContain(`<Code>${code}</Code>`);
}

describe('the embedded S3', () => {
  it('refuses unsigned requests to list, read, write and delete, with S3 XML errors', async () => {
    const object = `${endpoints.s3}/${LOCAL_RESOURCES.bucket}/${objectKey()}`;
    await expectS3Refusal(fetch(`${endpoints.s3}/${LOCAL_RESOURCES.bucket}?list-type=2`), 'AccessDenied');
    await expectS3Refusal(fetch(object), 'AccessDenied');
    await expectS3Refusal(fetch(object, { method: 'PUT', body: 'overwritten' }), 'AccessDenied');
    await expectS3Refusal(fetch(object, { method: 'DELETE' }), 'AccessDenied');
    expect(await (await new DriveClient(host.url, KEY).download({ path: file.path })).text()).toBe('secret bytes');
  });

  it("refuses the emulators' old fixed credentials and a wrong secret", async () => {
    const { accessKeyId } = await localCredentials(host.dataDir);
    for (const [credentials, code] of [
      [{ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, 'AccessDenied'],
      [{ accessKeyId, secretAccessKey: 'not-the-secret' }, 'SignatureDoesNotMatch'],
    ] as const) {
      const s3 = s3With(credentials);
      await expect(s3.send(new ListObjectsV2Command({ Bucket: LOCAL_RESOURCES.bucket }))).rejects.toMatchObject({ name: code, $metadata: { httpStatusCode: 403 } });
      await expect(s3.send(new PutObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: objectKey(), Body: 'x' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
      s3.destroy();
    }
  });

  it('refuses, even signed, an upload id or part number that would lead a path out of its folder', async () => {
    const s3 = s3With(await localCredentials(host.dataDir));
    const before = await readdir(join(host.dataDir, 'dynamodb'));
    for (const uploadId of ['../../../dynamodb', '..%2F..%2Fdashboard', '0123']) {
      await expect(s3.send(new UploadPartCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/x', UploadId: uploadId, PartNumber: 1, Body: 'evil' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    }
    await expect(s3.send(new PutObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/../../escape', Body: 'evil' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: expect.any(Number) } });
    expect(await readdir(join(host.dataDir, 'dynamodb'))).toEqual(before);
    await expect(stat(join(dirname(host.dataDir), 'escape._S3rver_object'))).rejects.toThrow();
    expect((await new DriveClient(host.url, KEY).list()).status).toBe(200);
    s3.destroy();
  });

  it('refuses, even signed, a copy whose source would lead out of the bucket, and copies in parts as S3 does', async () => {
    const s3 = s3With(await localCredentials(host.dataDir));
    // A file outside the store, named as s3rver names objects, that a copy source climbing out would read.
    await writeFile(join(host.dataDir, 'outside.txt._S3rver_object'), 'not the store');
    for (const CopySource of [`${LOCAL_RESOURCES.bucket}/../../outside.txt`, `${LOCAL_RESOURCES.bucket}/emu/..%2F..%2F..%2Foutside.txt`, 'other-bucket/emu/x', `${LOCAL_RESOURCES.bucket}/emu\\x`]) {
      await expect(s3.send(new CopyObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen', CopySource }))).rejects.toMatchObject({ $metadata: { httpStatusCode: expect.any(Number) } });
    }
    await expect(s3.send(new HeadObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/stolen' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    // UploadPartCopy, which s3rver lacks: a range of the object as a part.
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/copied' }));
    const part = await s3.send(new UploadPartCopyCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/copied', UploadId, PartNumber: 1, CopySource: `${LOCAL_RESOURCES.bucket}/${objectKey()}`, CopySourceRange: 'bytes=0-5' }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/copied', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.CopyPartResult?.ETag }] } }));
    const copied = await s3.send(new GetObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/copied' }));
    expect(await copied.Body!.transformToString()).toBe('secret');
    await s3.send(new DeleteObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/copied' }));
    s3.destroy();
  });

  it('checks presigned URLs as S3 does: signature, expiry, the signed method and key', async () => {
    const credentials = await localCredentials(host.dataDir);
    const s3 = s3With(credentials);
    const get = new GetObjectCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: objectKey() });
    const good = await getSignedUrl(s3, get, { expiresIn: 60 });
    expect(await (await fetch(good)).text()).toBe('secret bytes');

    const expired = await getSignedUrl(s3, get, { expiresIn: 60, signingDate: new Date(Date.now() - 3_600_000) });
    await expectS3Refusal(fetch(expired), 'AccessDenied');
    await expectS3Refusal(fetch(good.replace(file.id, 'another-id')), 'SignatureDoesNotMatch');
    await expectS3Refusal(fetch(good, { method: 'DELETE' }), 'SignatureDoesNotMatch');
    await expectS3Refusal(fetch(good.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000')), 'SignatureDoesNotMatch');
    expect(await (await new DriveClient(host.url, KEY).download({ path: file.path })).text()).toBe('secret bytes');
    s3.destroy();
  });

  it('lets a part URL write its one part only: an x-amz-copy-source added to it is refused, so no key copies a file it may not read', async () => {
    const team = new DriveClient(host.url, TEAM);
    expect((await team.download({ path: file.path })).status).not.toBe(200);
    const started = await json<{ data: { upload_id: string; parts: { number: number; url: string }[] } }>(
      team.request('POST', '/drive/uploads', { body: JSON.stringify({ path: '/team/stolen.csv', size: 12 }), headers: { 'Content-Type': 'application/json' } }),
    );
    const [{ url }] = started.body.data.parts;
    const source = `/${LOCAL_RESOURCES.bucket}/${objectKey()}`;
    for (const headers of <Record<string, string>[]>[{ 'x-amz-copy-source': source }, { 'X-Amz-Copy-Source': source, 'x-amz-copy-source-range': 'bytes=0-99999' }, { 'x-amz-metadata-directive': 'REPLACE' }]) {
      const res = await fetch(url, { method: 'PUT', headers, body: '' });
      const text = await res.text();
      expect({ status: res.status, text }).toEqual({ status: 403, text: expect.stringContaining('<Code>AccessDenied</Code><Message>There were headers present in the request which were not signed</Message>') });
      expect(text).not.toMatch(/\b12\b/); // nothing of the source, not even its size
    }
    // Nothing was written to the session: no part holds the file's bytes.
    const target = new URL(url);
    const s3 = s3With(await localCredentials(host.dataDir));
    const parts = await s3.send(new ListPartsCommand({ Bucket: LOCAL_RESOURCES.bucket, Key: decodeURIComponent(target.pathname.split('/').slice(2).join('/')), UploadId: target.searchParams.get('uploadId')! }));
    expect(parts.Parts ?? []).toEqual([]);
    s3.destroy();
    // The URL still writes its own part.
    expect((await fetch(url, { method: 'PUT', body: 'twelve bytes' })).status).toBe(200);
    expect((await team.request('DELETE', `/drive/uploads/${started.body.data.upload_id}`)).status).toBe(200);
  });

  it('assembles a multipart upload only from parts with the ETags it holds, as S3 does (InvalidPart)', async () => {
    const s3 = s3With(await localCredentials(host.dataDir));
    const target = { Bucket: LOCAL_RESOURCES.bucket, Key: 'emu/assembled' };
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand(target));
    const first = await s3.send(new UploadPartCommand({ ...target, UploadId, PartNumber: 1, Body: 'first' }));
    // Part 1 sent again after its first ETag was read: that ETag no longer names what is stored.
    await s3.send(new UploadPartCommand({ ...target, UploadId, PartNumber: 1, Body: 'again' }));
    await expect(
      s3.send(new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first.ETag }] } })),
    ).rejects.toMatchObject({ name: 'InvalidPart', $metadata: { httpStatusCode: 400 } });
    await s3.send(new AbortMultipartUploadCommand({ ...target, UploadId }));
    s3.destroy();
  });

  it('answers a browser preflight for part uploads from the page only, never from DRIVE_CORS_ORIGINS', async () => {
    const preflight = (origin: string) =>
      fetch(`${endpoints.s3}/${LOCAL_RESOURCES.bucket}/emu/part?partNumber=1&uploadId=${'0'.repeat(32)}`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'PUT' },
      });
    expect((await preflight(host.url)).status).toBe(200);
    expect((await preflight('https://app.example.com')).status).toBe(403);
  });
});

describe('the embedded DynamoDB', () => {
  it('refuses a PutItem of an admin key with the old fixed credentials, and an unsigned request', async () => {
    const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, maxAttempts: 1 });
    const item = { pk: { S: 'key#0000' }, keyId: { S: 'evil' }, drive: { S: 'emu' }, role: { S: 'admin' }, prefix: { S: '/' } };
    await expect(dynamodb.send(new PutItemCommand({ TableName: LOCAL_RESOURCES.accessTable, Item: item }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    dynamodb.destroy();
    const unsigned = await fetch(endpoints.dynamodb, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.ListTables' },
      body: '{}',
    });
    expect(unsigned.status).toBe(403);
  });

  it("answers an unsigned 16 MiB request, or one naming another key, while its client has sent 1 KiB: it never reads the body", async () => {
    for (const headers of [{}, { Authorization: `AWS4-HMAC-SHA256 Credential=S3RVER/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}` }]) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(endpoints.dynamodb, {
          method: 'POST',
          agent: false,
          headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.ListTables', 'Content-Length': 16 * 1024 * 1024, ...headers },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          res.resume();
          req.destroy();
          resolve(res.statusCode ?? 0);
        });
        req.write(Buffer.alloc(1024));
      });
      expect(status).toBe(403);
    }
  });

  it('answers requests signed with the credentials in the data dir, a file only its owner may read', async () => {
    const credentials = await localCredentials(host.dataDir);
    const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'us-east-1', credentials });
    expect((await dynamodb.send(new ListTablesCommand({}))).TableNames).toContain(LOCAL_RESOURCES.nodesTable);
    dynamodb.destroy();
    expect((await stat(join(host.dataDir, CREDENTIALS_FILE))).mode & 0o777).toBe(0o600);
  });
});

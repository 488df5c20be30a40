import { AbortMultipartUploadCommand, ListPartsCommand, NoSuchUpload, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { S3MultipartStore } from '../../../functions/aws/s3-multipart-store';

const s3 = mockClient(S3Client);
const store = new S3MultipartStore(new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }), 'bucket');

beforeEach(() => s3.reset());

describe('Class: S3MultipartStore', () => {
  it('reads every page of ListParts', async () => {
    s3.on(ListPartsCommand)
      .resolvesOnce({ Parts: [{ PartNumber: 1, ETag: '"a"', Size: 5 }], IsTruncated: true, NextPartNumberMarker: '1' })
      .resolvesOnce({ Parts: [{ PartNumber: 2, ETag: '"b"', Size: 3 }], IsTruncated: false });

    expect(await store.listParts('k', 'u')).toEqual([
      { number: 1, etag: '"a"', size: 5 },
      { number: 2, etag: '"b"', size: 3 },
    ]);
    expect(s3.commandCalls(ListPartsCommand).map((c) => c.args[0].input.PartNumberMarker)).toEqual([undefined, '1']);
  });

  it('reports an upload S3 no longer has as undefined, and aborting it as done', async () => {
    s3.on(ListPartsCommand).rejects(new NoSuchUpload({ message: 'gone', $metadata: {} }));
    s3.on(AbortMultipartUploadCommand).rejects(new NoSuchUpload({ message: 'gone', $metadata: {} }));

    await expect(store.listParts('k', 'u')).resolves.toBeUndefined();
    await expect(store.abort('k', 'u')).resolves.toBeUndefined();
  });

  it('passes on other failures', async () => {
    s3.on(AbortMultipartUploadCommand).rejects(new Error('throttled'));
    await expect(store.abort('k', 'u')).rejects.toThrow('throttled');
  });

  it('signs one UploadPart URL per part, each naming its part and the upload, valid for the given time', async () => {
    const urls = await store.partUrls('d/key', 'upload-1', 1, 3, 900);
    expect(urls).toHaveLength(3);
    urls.forEach((url, i) => {
      const query = new URL(url).searchParams;
      expect(new URL(url).pathname).toBe('/d/key');
      expect(query.get('partNumber')).toBe(String(i + 1));
      expect(query.get('uploadId')).toBe('upload-1');
      expect(query.get('X-Amz-Expires')).toBe('900');
      expect(query.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    });
  });
});

describe('the deployed wiring of large uploads (functions/wiring/large-uploads.ts)', () => {
  it('signs part URLs that carry no checksum of their own, which no part could match', async () => {
    Object.assign(process.env, { DRIVE_NODES_TABLE: 'n', DRIVE_ACCESS_TABLE: 'a', DRIVE_UPLOADS_TABLE: 'u', DRIVE_CHANGES_TABLE: 'c', DRIVE_BUCKET: 'b', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' });
    delete process.env.DRIVE_S3_ENDPOINT; // as in AWS: the SDK's default checksum settings
    let wiring!: typeof import('../../../functions/wiring/large-uploads');
    jest.isolateModules(() => {
      wiring = require('../../../functions/wiring/large-uploads') as typeof wiring;
    });
    const { largeUploads } = wiring;

    const [url] = await largeUploads.parts.partUrls('d/key', 'upload-1', 1, 1, 60);

    const names = [...new URL(url).searchParams.keys()];
    expect(names).toEqual(expect.arrayContaining(['partNumber', 'uploadId', 'X-Amz-Signature']));
    expect(names.filter((name) => /checksum/i.test(name))).toEqual([]);
  });

  it('would otherwise sign the CRC32 of an empty body into every URL (the reason for the signer)', async () => {
    const url = await new S3MultipartStore(new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }), 'b').partUrls('d/key', 'u', 1, 1, 60);
    expect(new URL(url[0]).searchParams.get('x-amz-checksum-crc32')).toBe('AAAAAA==');
  });
});

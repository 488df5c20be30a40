import { S3Client } from '@aws-sdk/client-s3';
import { S3ObjectUrls } from '../../../functions/aws/s3-object-urls';

const HEADERS = { contentType: 'application/pdf', contentDisposition: 'attachment; filename="q3 e.pdf"; filename*=UTF-8\'\'q3%20%C3%A9.pdf', cacheControl: 'private, no-cache' };

describe('Class: S3ObjectUrls', () => {
  it('signs a GET of one key, for the seconds asked, carrying the download\'s headers as response-* overrides', async () => {
    // Prepare
    const urls = new S3ObjectUrls(new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, forcePathStyle: true }), 'bucket');

    // Act
    const url = new URL(await urls.readUrl('d/6f1c2a4e', HEADERS, 300));

    // Assess
    expect(url.pathname).toBe('/bucket/d/6f1c2a4e');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.get('response-content-type')).toBe(HEADERS.contentType);
    expect(url.searchParams.get('response-content-disposition')).toBe(HEADERS.contentDisposition);
    expect(url.searchParams.get('response-cache-control')).toBe(HEADERS.cacheControl);
  });
});

describe('the deployed wiring of direct downloads (functions/wiring/object-urls.ts)', () => {
  it('signs read URLs that ask S3 for no checksum mode, with only host signed: any HTTP client can follow them', async () => {
    Object.assign(process.env, { DRIVE_NODES_TABLE: 'n', DRIVE_ACCESS_TABLE: 'a', DRIVE_UPLOADS_TABLE: 'u', DRIVE_CHANGES_TABLE: 'c', DRIVE_BUCKET: 'drive-bucket', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' });
    delete process.env.DRIVE_S3_ENDPOINT; // as in AWS: the SDK's default checksum settings
    let wiring!: typeof import('../../../functions/wiring/object-urls');
    jest.isolateModules(() => {
      wiring = require('../../../functions/wiring/object-urls') as typeof wiring;
    });

    const url = new URL(await wiring.objectUrls.readUrl('d/key', HEADERS, 300));

    expect(url.host).toBe('drive-bucket.s3.us-east-1.amazonaws.com');
    expect([...url.searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
  });
});

import { S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { S3ObjectStore, signWithContentMd5 } from '../../../functions/aws/s3-object-store';

// Real clients, not aws-sdk-client-mock's (which replaces `send`, middleware and all): what is signed is the point.
describe('Class: S3ObjectStore', () => {
  describe('Method: put, signed by signWithContentMd5', () => {
    /** A real client (not the mock: its middleware must run) whose requests are kept, signed, and answered 200. */
    function recordingStore(options: { md5Signing: boolean }) {
      const sent: { headers: Record<string, string>; body: unknown }[] = [];
      const client = new S3Client({
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        cacheMiddleware: true,
        requestHandler: {
          handle: async (request: { headers: Record<string, string>; body: unknown }) => {
            sent.push({ headers: { ...request.headers }, body: request.body });
            return { response: { statusCode: 200, headers: {}, body: Readable.from([]) } };
          },
        },
      });
      return { store: new S3ObjectStore(options.md5Signing ? signWithContentMd5(client) : client, 'bucket'), sent };
    }
    const body = Buffer.from('the bytes of a file');
    const md5 = createHash('md5').update(body).digest();
    const sha256 = createHash('sha256').update(body).digest('hex');

    it('sends the etag as Content-MD5 and signs the payload as unsigned, for S3 to check the bytes by the MD5', async () => {
      const { store, sent } = recordingStore({ md5Signing: true });
      await store.put('d/x', body, 'text/plain', md5.toString('hex'));
      await store.put('d/y', body, 'text/plain', md5.toString('hex')); // the cached stack too

      expect(sent).toHaveLength(2);
      for (const { headers, body: sentBody } of sent) {
        expect(headers['content-md5']).toBe(md5.toString('base64'));
        expect(headers['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
        // The signature covers the header that says so: a relay cannot swap in a signed hash of other bytes.
        expect(headers.authorization).toMatch(/SignedHeaders=[^,]*content-md5;[^,]*x-amz-content-sha256/);
        expect(sentBody).toBe(body);
      }
    });

    it('signs the SHA-256 of a body sent without an MD5, and of every body with a client not so made', async () => {
      const signing = recordingStore({ md5Signing: true });
      await signing.store.put('d/x', body, 'text/plain');
      expect(signing.sent).toHaveLength(1);
      expect(signing.sent[0].headers['content-md5']).toBeUndefined();
      expect(signing.sent[0].headers['x-amz-content-sha256']).toBe(sha256);

      const plain = recordingStore({ md5Signing: false });
      await plain.store.put('d/x', body, 'text/plain', md5.toString('hex'));
      expect(plain.sent[0].headers['content-md5']).toBe(md5.toString('base64'));
      expect(plain.sent[0].headers['x-amz-content-sha256']).toBe(sha256);
    });
  });
});

import { DeleteObjectsCommand, GetObjectCommand, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { S3ObjectStore } from '../../../functions/aws/s3-object-store';

const s3 = mockClient(S3Client);
const store = new S3ObjectStore(new S3Client({ region: 'us-east-1' }), 'bucket');

beforeEach(() => {
  s3.reset();
  jest.spyOn(Math, 'random').mockReturnValue(0);
});

afterEach(() => jest.restoreAllMocks());

describe('Class: S3ObjectStore', () => {
  describe('Method: deleteMany', () => {
    it('deletes in batches of 1000 keys, quietly', async () => {
      s3.on(DeleteObjectsCommand).resolves({});

      await store.deleteMany(Array.from({ length: 2500 }, (_, i) => `d/${i}`));

      const calls = s3.commandCalls(DeleteObjectsCommand);
      expect(calls.map((c) => c.args[0].input.Delete!.Objects!.length).sort()).toEqual([1000, 1000, 500]);
      expect(calls.every((c) => c.args[0].input.Delete!.Quiet)).toBe(true);
    });

    it('retries only the keys S3 reports as failed, and fails if they keep failing', async () => {
      s3.on(DeleteObjectsCommand).resolvesOnce({ Errors: [{ Key: 'd/2', Code: 'InternalError' }] }).resolvesOnce({});
      await store.deleteMany(['d/1', 'd/2', 'd/3']);
      expect(s3.commandCalls(DeleteObjectsCommand)[1].args[0].input.Delete!.Objects).toEqual([{ Key: 'd/2' }]);

      s3.reset();
      s3.on(DeleteObjectsCommand).resolves({ Errors: [{ Key: 'd/2', Code: 'InternalError' }] });
      await expect(store.deleteMany(['d/2'])).rejects.toThrow(/failed for 1 keys after 8 attempts/);
    });

    it('makes no call for no keys', async () => {
      await store.deleteMany([]);
      expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(0);
    });
  });

  describe('Method: open', () => {
    it('asks S3 for the whole object, or for one inclusive byte range of it', async () => {
      s3.on(GetObjectCommand).resolves({ ContentLength: 10 });

      await store.open('d/x');
      await store.open('d/x', { start: 0, end: 0 });
      await store.open('d/x', { start: 100, end: 199 });

      expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Range)).toEqual([undefined, 'bytes=0-0', 'bytes=100-199']);
    });

    it('answers undefined for a missing object and rethrows other failures', async () => {
      s3.on(GetObjectCommand).rejectsOnce(new NoSuchKey({ message: 'gone', $metadata: {} })).rejectsOnce(new Error('network down'));
      await expect(store.open('d/x')).resolves.toBeUndefined();
      await expect(store.open('d/x')).rejects.toThrow('network down');
    });
  });
});

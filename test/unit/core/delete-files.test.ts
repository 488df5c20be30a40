import { type AttributeValue, BatchGetItemCommand, BatchWriteItemCommand, DynamoDBClient, TransactionCanceledException, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoFileRecords } from '../../../functions/aws/dynamo-file-records';
import { DynamoNodeStore, toItem } from '../../../functions/aws/dynamo-node-store';
import { DynamoUploadJournal } from '../../../functions/aws/dynamo-upload-journal';
import { S3ObjectStore } from '../../../functions/aws/s3-object-store';
import { FILES_PER_TRANSACTION, deleteFiles } from '../../../functions/core/delete-files';
import type { FileNode } from '../../../functions/core/ports';

// deleteFiles over the AWS adapters, DynamoDB and S3 mocked by a table in memory: how many writes a request
// makes, how many at once, and what a record changed between the read and the write does.

type Item = Record<string, AttributeValue>;

const dynamodb = mockClient(DynamoDBClient);
const s3 = mockClient(S3Client);
const client = new DynamoDBClient({ region: 'us-east-1' });
const deps = {
  nodes: new DynamoNodeStore(client, 'nodes'),
  records: new DynamoFileRecords(client, 'nodes', 'uploads', 'changes'),
  journal: new DynamoUploadJournal(client, 'uploads'),
  objects: new S3ObjectStore(new S3Client({ region: 'us-east-1' }), 'bucket'),
};
const DRIVE = 'd';

/** The nodes table, by key. */
let table: Map<string, Item>;
/** Transactions in flight now, and the most there were at once. */
let inFlight: number;
let mostInFlight: number;
/** Runs before each transaction is judged: a test's concurrent writer. */
let beforeTransaction: (index: number) => void;

const keyText = (item: Item) => `${item.pk.S}\u0000${item.sk.S}`;

function file(path: string, id = `id-${path}`): FileNode {
  return { kind: 'file', path, id, createdAt: '2026-01-01T00:00:00.000Z', size: 1, contentType: 'text/plain', objectKey: `${DRIVE}/${id}`, etag: 'e' };
}

function store(node: FileNode): void {
  const item = toItem(DRIVE, node);
  table.set(keyText(item), item);
}

const deletedKeys = () => s3.commandCalls(DeleteObjectsCommand).flatMap((c) => c.args[0].input.Delete!.Objects!.map((o) => o.Key));
const transactions = () => dynamodb.commandCalls(TransactWriteItemsCommand).map((c) => c.args[0].input.TransactItems!);

beforeEach(() => {
  dynamodb.reset();
  s3.reset();
  table = new Map();
  inFlight = 0;
  mostInFlight = 0;
  beforeTransaction = () => undefined;
  s3.on(DeleteObjectsCommand).resolves({});
  dynamodb.on(BatchWriteItemCommand).resolves({});
  dynamodb.on(BatchGetItemCommand).callsFake((input: { RequestItems: Record<string, { Keys: Item[] }> }) => ({
    Responses: { nodes: input.RequestItems.nodes.Keys.map((key) => table.get(keyText(key))).filter((item) => item !== undefined) },
  }));
  let index = 0;
  dynamodb.on(TransactWriteItemsCommand).callsFake(async (input: { TransactItems: { Delete?: { Key: Item; ExpressionAttributeValues: Item } }[] }) => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    // Answered on a later turn, so that writes sent together are in flight together.
    await new Promise((resolve) => setImmediate(resolve));
    inFlight--;
    beforeTransaction(index++);
    const reasons = input.TransactItems.map(({ Delete }) => {
      if (!Delete) return { Code: 'None' };
      return table.get(keyText(Delete.Key))?.id.S === Delete.ExpressionAttributeValues[':id'].S ? { Code: 'None' } : { Code: 'ConditionalCheckFailed' };
    });
    if (reasons.some((reason) => reason.Code !== 'None')) throw new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: reasons });
    for (const { Delete } of input.TransactItems) if (Delete) table.delete(keyText(Delete.Key));
    return {};
  });
});

describe('Function: deleteFiles', () => {
  it('removes 1,000 records in a few transactions, one at a time, with their journal entries, then their bytes', async () => {
    const files = Array.from({ length: 1000 }, (_, i) => file(`/${i}.txt`));
    files.forEach(store);

    const result = await deleteFiles(deps, DRIVE, files.map((f) => f.path));

    expect(result).toEqual({ deleted: files.map((f) => f.path), notFound: [] });
    expect(table.size).toBe(0);
    // A transaction holds at most 100 items: the records and the one journal entry naming their bytes.
    expect(transactions().map((items) => items.length)).toEqual(Array.from({ length: 1000 / FILES_PER_TRANSACTION }, () => FILES_PER_TRANSACTION + 1));
    expect(transactions().every((items) => items.filter((item) => item.Put?.TableName === 'uploads').length === 1)).toBe(true);
    // One at a time: where transactions are serialized (the local emulator), other requests get between them.
    expect(mostInFlight).toBe(1);
    expect(deletedKeys().sort()).toEqual(files.map((f) => f.objectKey).sort());
    const closed = dynamodb.commandCalls(BatchWriteItemCommand).flatMap((c) => c.args[0].input.RequestItems!.uploads);
    expect(closed).toHaveLength(1000 / FILES_PER_TRANSACTION);
  });

  it('a record replaced between the read and the write: the batch is tried again with the new file, whose bytes go; the old bytes are the replacer\'s', async () => {
    const files = [file('/a.txt'), file('/b.txt'), file('/c.txt')];
    files.forEach(store);
    const replacement = file('/b.txt', 'new-b');
    beforeTransaction = (index) => {
      if (index === 0) store(replacement);
    };

    const result = await deleteFiles(deps, DRIVE, files.map((f) => f.path));

    expect(result).toEqual({ deleted: ['/a.txt', '/b.txt', '/c.txt'], notFound: [] });
    expect(table.size).toBe(0);
    expect(transactions()).toHaveLength(2);
    expect(deletedKeys().sort()).toEqual([`${DRIVE}/id-/a.txt`, `${DRIVE}/new-b`, `${DRIVE}/id-/c.txt`].sort());
  });

  it('a record another request removed meanwhile: not found, and the rest deleted', async () => {
    const files = [file('/a.txt'), file('/b.txt')];
    files.forEach(store);
    beforeTransaction = (index) => {
      if (index === 0) table.delete(keyText(toItem(DRIVE, files[0])));
    };

    expect(await deleteFiles(deps, DRIVE, ['/a.txt', '/b.txt'])).toEqual({ deleted: ['/b.txt'], notFound: ['/a.txt'] });
    expect(deletedKeys()).toEqual([`${DRIVE}/id-/b.txt`]);
  });

  it('a transaction cancelled because its partition was throttled: tried again, and the files deleted', async () => {
    store(file('/a.txt'));
    let throttled = false;
    beforeTransaction = () => {
      if (throttled) return;
      throttled = true;
      throw new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: [{ Code: 'ThrottlingError' }, { Code: 'None' }] });
    };

    expect(await deleteFiles(deps, DRIVE, ['/a.txt'])).toEqual({ deleted: ['/a.txt'], notFound: [] });
    expect(transactions()).toHaveLength(2);
  });

  it('a file replaced at every try: 409 after three, naming it', async () => {
    store(file('/a.txt'));
    beforeTransaction = (index) => store(file('/a.txt', `replaced-${index}`));

    await expect(deleteFiles(deps, DRIVE, ['/a.txt'])).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('/a.txt changed 3 times') });
    expect(transactions()).toHaveLength(3);
    expect(deletedKeys()).toEqual([]);
  });
});

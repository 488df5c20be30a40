import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoFileRecords } from '../../../functions/aws/dynamo-file-records';
import { DynamoNodeStore } from '../../../functions/aws/dynamo-node-store';
import { DynamoTrashStore } from '../../../functions/aws/dynamo-trash';
import type { FileNode, FileRecords, FolderNode, TrashMember, TrashRow, TrashStore } from '../../../functions/core/ports';
import { LOCAL_RESOURCES } from '../../../lib/local/emulators';
import { useEmbeddedDynamo } from '../../support/embedded-dynamo';
import { memoryPorts } from '../../model/memory-ports';

// `FileRecords.restoreMembers` (a folder restore's page) writes only for the restore job holding the row's
// claim (ports.ts): the DynamoDB adapter, through the real SDK against the embedded DynamoDB, and the
// in-memory port the model tests use, held to the same cases. A row no restore has claimed, or one another
// job has, refuses the page (`changed: 'item'`) and nothing is written.

const dynamo = useEmbeddedDynamo('restore-members');
const NOW = new Date('2026-11-27T10:00:00.000Z');
let n = 0;

type Stores = { records: FileRecords; trash: TrashStore; nodes: DynamoNodeStore | ReturnType<typeof memoryPorts>['nodes'] };

const adapters: [string, () => Stores][] = [
  [
    'the DynamoDB adapter',
    () => {
      const client: DynamoDBClient = dynamo.client;
      return {
        records: new DynamoFileRecords(client, LOCAL_RESOURCES.nodesTable, LOCAL_RESOURCES.uploadsTable, LOCAL_RESOURCES.changesTable),
        trash: new DynamoTrashStore(client, LOCAL_RESOURCES.nodesTable),
        nodes: new DynamoNodeStore(client, LOCAL_RESOURCES.nodesTable),
      };
    },
  ],
  [
    'the in-memory port',
    () => {
      const ports = memoryPorts();
      return { records: ports.records, trash: ports.trash, nodes: ports.nodes };
    },
  ],
];

/** A drive of its own with a trashed folder row `/r` holding one file member `f`, and `/r` standing again (the restore's destination). */
async function trashedFolder(stores: Stores): Promise<{ drive: string; row: TrashRow; member: TrashMember; parent: FolderNode }> {
  const drive = `rm${++n}`;
  const file: FileNode = { kind: 'file', id: `file${n}`, path: '/r/f', objectKey: `key${n}`, size: 3, etag: 'e', contentType: 'text/plain', createdAt: '2026-11-01T00:00:00.000Z' };
  const row: TrashRow = {
    id: `0193a1b2-0000-7000-8000-00000000000${n % 10}`,
    type: 'folder',
    path: '/r',
    bytes: 3,
    files: 1,
    folderId: `folder${n}`,
    folderCreatedAt: '2026-11-01T00:00:00.000Z',
    state: 'filling',
    job: `delete${n}`,
    reason: 'deleted',
    deletedAt: '2026-11-26T10:00:00.000Z',
    purgeAt: '2026-12-03T10:00:00.000Z',
  };
  await stores.trash.begin(drive, row);
  const member: TrashMember = { relative: 'f', file };
  await stores.trash.putMember(drive, row.id, member);
  expect(await stores.trash.filled(drive, row.id, { files: 1, bytes: 3, purgeAt: row.purgeAt })).toBe(true);
  const parent: FolderNode = { kind: 'folder', id: `folder${n}`, path: '/r', createdAt: '2026-11-01T00:00:00.000Z' };
  await stores.nodes.createFolder(drive, parent);
  return { drive, row: (await stores.trash.get(drive, row.id))!, member, parent };
}

describe.each(adapters)('restoreMembers on %s', (_, make) => {
  it('refuses a row no restore has claimed: nothing written, the member kept', async () => {
    const stores = make();
    const { drive, row, member, parent } = await trashedFolder(stores);
    expect(row.restoring).toBeUndefined();
    const outcome = await stores.records.restoreMembers(drive, row, [{ member, to: '/r/f' }], { parents: [parent], job: 'job-never-claimed', now: NOW });
    expect(outcome).toEqual({ restored: false, changed: 'item' });
    expect(await stores.nodes.get(drive, '/r/f')).toBeUndefined();
    expect((await stores.trash.members(drive, row.id, 10)).members.map((m) => m.relative)).toEqual(['f']);
  });

  it('refuses a row another restore job has claimed', async () => {
    const stores = make();
    const { drive, row, member, parent } = await trashedFolder(stores);
    expect(await stores.trash.claim(drive, row.id, 'restore', 'job-a', NOW, 0)).toMatchObject({ restoring: 'job-a' });
    const outcome = await stores.records.restoreMembers(drive, row, [{ member, to: '/r/f' }], { parents: [parent], job: 'job-b', now: NOW });
    expect(outcome).toEqual({ restored: false, changed: 'item' });
    expect(await stores.nodes.get(drive, '/r/f')).toBeUndefined();
  });

  it('writes the page for the job holding the claim', async () => {
    const stores = make();
    const { drive, row, member, parent } = await trashedFolder(stores);
    await stores.trash.claim(drive, row.id, 'restore', 'job-a', NOW, 0);
    const outcome = await stores.records.restoreMembers(drive, row, [{ member, to: '/r/f' }], { parents: [parent], job: 'job-a', now: NOW });
    expect(outcome).toMatchObject({ restored: [{ id: member.file!.id, path: '/r/f' }] });
    expect(await stores.nodes.get(drive, '/r/f')).toMatchObject({ id: member.file!.id });
    expect((await stores.trash.members(drive, row.id, 10)).members).toEqual([]);
  });
});

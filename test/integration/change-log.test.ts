import { PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoChangeLog } from '../../functions/aws/dynamo-change-log';
import { DynamoFileRecords } from '../../functions/aws/dynamo-file-records';
import { DynamoNodeStore, keyOf, toItem } from '../../functions/aws/dynamo-node-store';
import { streamRecordOf } from '../../functions/aws/stream-records';
import { EMPTY_STATE, type StreamRecord, readChanges } from '../../functions/core/changes/change-log';
import { sequenceBatch } from '../../functions/core/changes/sequencer';
import type { FileNode } from '../../functions/core/ports';
import { streamFile } from '../../lib/local/dynamo-stream';
import { LOCAL_RESOURCES, STREAM_DIR } from '../../lib/local/emulators';
import { useEmbeddedDynamo } from '../support/embedded-dynamo';

// The change log's DynamoDB adapter, and the embedded DynamoDB's stream tap feeding the sequencer, as the local
// host wires them: the records of DynamoDB Local's probe (docs/change-feed-design.md, "Evidence"), then the
// changes they make.

const dynamo = useEmbeddedDynamo('change-log');
const T = LOCAL_RESOURCES;
const file = (path: string, id: string): FileNode => ({ kind: 'file', id, path, size: 1, contentType: 'text/plain', createdAt: '2026-11-27T09:00:00.000Z', objectKey: id, etag: `e-${id}` });

async function streamed(): Promise<DynamoDBRecord[]> {
  const text = await readFile(streamFile(join(dynamo.dataDir, STREAM_DIR), T.nodesTable), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as DynamoDBRecord);
}

describe('the stream tap and the change log on the embedded DynamoDB', () => {
  it('streams what changed an item (no record for a write again, a no-op update or a refused write), and the sequencer makes the changes', async () => {
    const client = dynamo.client;
    const nodes = new DynamoNodeStore(client, T.nodesTable);
    const records = new DynamoFileRecords(client, T.nodesTable, T.uploadsTable, T.changesTable);
    const drive = 'probe';
    const first = file('/x', 'id-1');
    expect(await nodes.putFile(drive, first)).toEqual({ ok: true });
    await client.send(new PutItemCommand({ TableName: T.nodesTable, Item: toItem(drive, first) }));
    await client.send(new UpdateItemCommand({ TableName: T.nodesTable, Key: keyOf(drive, '/x'), UpdateExpression: 'SET #id = :id', ExpressionAttributeNames: { '#id': 'id' }, ExpressionAttributeValues: { ':id': { S: 'id-1' } } }));
    expect(await nodes.putFile(drive, file('/x', 'id-9'), { replace: false })).toEqual({ ok: false });
    expect(await records.move(drive, first, '/y', { sweepAfter: new Date() })).toEqual({ moved: true });
    expect(await nodes.putFile(drive, file('/x', 'id-2'))).toEqual({ ok: true });
    expect(await nodes.removeIfSame(drive, '/y', 'id-1')).toBe(true);

    const tapped = await streamed();
    expect(tapped.map((record) => `${record.eventName} ${record.dynamodb?.Keys?.sk?.S}`)).toEqual(['INSERT x', 'INSERT y', 'REMOVE x', 'INSERT x', 'REMOVE y']);
    const sequences = tapped.map((record) => BigInt(record.dynamodb!.SequenceNumber!));
    expect(sequences).toEqual([...sequences].sort((a, b) => (a < b ? -1 : 1)));

    const log = new DynamoChangeLog(client, T.changesTable, 7 * 86400);
    const batch = tapped.map((record) => streamRecordOf(record)).filter((record): record is StreamRecord => record !== undefined);
    expect(await sequenceBatch(log, batch, { pairWaitMs: 60_000, now: () => Date.now() })).toBeUndefined();
    // Handed again (a retry after a lost answer): nothing twice.
    expect(await sequenceBatch(log, batch, { pairWaitMs: 60_000, now: () => Date.now() })).toBeUndefined();
    const read = await readChanges(log, drive, 0, 100);
    expect(read.changes.map((change) => [change.position, change.type, change.from ?? '', change.path, change.node.id])).toEqual([
      [1, 'file.created', '', '/x', 'id-1'],
      [2, 'file.moved', '/x', '/y', 'id-1'],
      [3, 'file.created', '', '/x', 'id-2'],
      [4, 'file.deleted', '', '/y', 'id-1'],
    ]);
    expect(await log.newest(drive)).toBe(4);
    // The move's mark went with its pair.
    expect(await log.readMarks(drive, [{ id: 'id-1', from: '/x', arrival: '' }])).toEqual(new Map());
  });

  it('commits a drive\'s state only on the version read, and each position once', async () => {
    const log = new DynamoChangeLog(dynamo.client, T.changesTable, 86400);
    const change = { type: 'file.created' as const, path: '/a', at: 'now', node: file('/a', 'a'), loggedAt: 0 };
    expect(await log.commit('v', { ...EMPTY_STATE, head: 1, version: 1 }, [{ ...change, position: 1 }], [])).toBe(true);
    expect(await log.commit('v', { ...EMPTY_STATE, head: 1, version: 1 }, [{ ...change, position: 1 }], [])).toBe(false);
    expect(await log.readState('v')).toEqual({ ...EMPTY_STATE, head: 1, version: 1 });
    expect(await log.commit('v', { ...EMPTY_STATE, head: 2, version: 2 }, [{ ...change, position: 2 }], [])).toBe(true);
    expect((await log.read('v', 0, 10)).map((read) => read.position)).toEqual([1, 2]);
    expect((await log.read('v', 1, 10)).map((read) => read.position)).toEqual([2]);
  });

  it('reads a drive\'s changes backwards from the newest or below a position, saying when older ones may follow', async () => {
    const log = new DynamoChangeLog(dynamo.client, T.changesTable, 86400);
    const change = { type: 'file.created' as const, path: '/a', at: 'now', node: file('/a', 'a'), loggedAt: 0 };
    for (let position = 1; position <= 5; position++) {
      expect(await log.commit('back', { ...EMPTY_STATE, head: position, version: position }, [{ ...change, position }], [])).toBe(true);
    }
    // Another drive's log and the drive's own state item are no part of it.
    expect(await log.commit('back-other', { ...EMPTY_STATE, head: 1, version: 1 }, [{ ...change, position: 1 }], [])).toBe(true);
    const positions = (read: { changes: { position: number }[]; more: boolean }) => [read.changes.map((c) => c.position), read.more];
    expect(positions(await log.readBefore('back', undefined, 2))).toEqual([[5, 4], true]);
    expect(positions(await log.readBefore('back', 4, 2))).toEqual([[3, 2], true]);
    expect(positions(await log.readBefore('back', 3, 10))).toEqual([[2, 1], false]);
    expect(positions(await log.readBefore('back', 1, 10))).toEqual([[], false]);
    expect(positions(await log.readBefore('back', undefined, 10))).toEqual([[5, 4, 3, 2, 1], false]);
  });
});

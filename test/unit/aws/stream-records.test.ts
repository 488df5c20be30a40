import type { DynamoDBRecord } from 'aws-lambda';
import { streamRecordOf } from '../../../functions/aws/stream-records';
import { toItem } from '../../../functions/aws/dynamo-node-store';
import type { FileNode } from '../../../functions/core/ports';

// A record of the nodes table's stream as Lambda hands it, turned into what the sequencer maps.

const file: FileNode = { kind: 'file', id: 'f1', path: '/a b/x#1.txt', size: 3, contentType: 'text/plain', createdAt: '2026-11-27T09:00:00.000Z', objectKey: 'k', etag: 'e', movedAt: '2026-11-27T09:30:00.000Z' };

function record(eventName: DynamoDBRecord['eventName'], old?: Record<string, unknown>, next?: Record<string, unknown>): DynamoDBRecord {
  return { eventName, dynamodb: { SequenceNumber: '4200000000000000001', ApproximateCreationDateTime: 1_795_000_000, ...(old ? { OldImage: old as never } : {}), ...(next ? { NewImage: next as never } : {}) } };
}

describe('streamRecordOf', () => {
  it('takes the drive from the partition key (a drive name may hold "#"), the path, the images and the move attributes', () => {
    const item = { ...toItem('team#1', file), movedFrom: { S: '/old.txt' }, moveId: { S: 'm1' }, moveArrival: { S: 'then' } };
    const got = streamRecordOf(record('INSERT', undefined, item));
    expect(got).toEqual({
      partition: 'team#1#/a b',
      sequence: '4200000000000000001',
      event: 'INSERT',
      drive: 'team#1',
      path: '/a b/x#1.txt',
      new: { ...file, movedFrom: '/old.txt', moveId: 'm1', moveArrival: 'then' },
      at: new Date(1_795_000_000 * 1000).toISOString(),
    });
  });

  it('takes a removal from its old image, and a folder\'s move job and end', () => {
    const folder = { ...toItem('d', { kind: 'folder', id: 'f', path: '/b', createdAt: 'c' }), moveJob: { S: 'J' }, movedFrom: { S: '/a' }, ended: { S: 'stopped' } };
    expect(streamRecordOf(record('REMOVE', folder))).toMatchObject({ event: 'REMOVE', drive: 'd', path: '/b', partition: 'd#/', old: { kind: 'folder', moveJob: 'J', movedFrom: '/a', ended: 'stopped' } });
  });

  it('ignores an item that is no node', () => {
    expect(streamRecordOf(record('INSERT', undefined, { pk: { S: 'x' }, sk: { S: 'y' } }))).toBeUndefined();
  });
});

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { NodeImage, StreamRecord } from '../core/changes/change-log';
import { parentOf } from '../core/paths';
import { fromItem } from './dynamo-node-store';
import { NODES_PARTITION_KEY as PK } from './schema';

type Item = Record<string, AttributeValue>;

/**
 * A record of the nodes table's stream as the sequencer takes it, or undefined for an item that is no node.
 * The drive is the partition key less its parent path (`<drive>#<parent path>`).
 */
export function streamRecordOf(record: DynamoDBRecord): StreamRecord | undefined {
  const stream = record.dynamodb;
  if (!stream?.SequenceNumber || !record.eventName) return undefined;
  // The Lambda event's attribute values have the SDK's shape.
  const oldImage = stream.OldImage as unknown as Item | undefined;
  const newImage = stream.NewImage as unknown as Item | undefined;
  const old = oldImage && imageOf(oldImage);
  const next = newImage && imageOf(newImage);
  const node = next ?? old;
  const partition = (newImage ?? oldImage)?.[PK]?.S;
  if (!node || partition === undefined) return undefined;
  const drive = partition.slice(0, partition.length - parentOf(node.path).length - 1);
  const at = new Date((stream.ApproximateCreationDateTime ?? 0) * 1000).toISOString();
  return { partition, sequence: stream.SequenceNumber, event: record.eventName, drive, path: node.path, ...(old ? { old } : {}), ...(next ? { new: next } : {}), at };
}

/** A node's image, with the attributes a move leaves for the sequencer; undefined for an item that is no node. */
export function imageOf(item: Item): NodeImage | undefined {
  if (item.kind?.S !== 'file' && item.kind?.S !== 'folder') return undefined;
  return {
    ...fromItem(item),
    ...(item.movedFrom?.S !== undefined ? { movedFrom: item.movedFrom.S } : {}),
    ...(item.moveId?.S !== undefined ? { moveId: item.moveId.S } : {}),
    ...(item.moveArrival?.S !== undefined ? { moveArrival: item.moveArrival.S } : {}),
    ...(item.moveJob?.S !== undefined ? { moveJob: item.moveJob.S } : {}),
    ...(item.ended?.S === 'stopped' ? { ended: 'stopped' as const } : {}),
  };
}

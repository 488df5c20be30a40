import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import type { LinkCursor, LinkStore, ShareLink } from '../core/links';
import { ACCESS_PARTITION_KEY as PK, ACCESS_TTL_ATTRIBUTE as TTL, LINKS_BY_DRIVE_INDEX as INDEX } from './schema';

/** The key of a share link's item: `link#<sha256 of the token>`. */
const linkKey = (id: string): Record<string, AttributeValue> => ({ [PK]: { S: `link#${id}` } });

/**
 * Share links in the access table, beside the API keys: one item per link under `link#<sha256 of the
 * token>`, found by one GetItem on the hash, removed by DynamoDB's TTL some time after `expiresAt`. Listing
 * a drive's links reads the `linksByDrive` index.
 */
export class DynamoLinkStore implements LinkStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async put(link: ShareLink): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.table,
        Item: {
          ...linkKey(link.id),
          [INDEX.partitionKey]: { S: link.drive },
          [INDEX.sortKey]: { S: link.path },
          fileId: { S: link.fileId },
          ...(link.fileMovedAt ? { fileMovedAt: { S: link.fileMovedAt } } : {}),
          ...(link.createdBy ? { linkCreatedBy: { S: link.createdBy } } : {}),
          ...(link.makerKey ? { linkMakerKey: { S: link.makerKey } } : {}),
          linkCreatedAt: { S: link.createdAt },
          [TTL]: { N: String(link.expiresAt) },
        },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': PK },
      }),
    );
  }

  async get(id: string): Promise<ShareLink | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: linkKey(id), ConsistentRead: true }));
    return Item ? linkOf(Item) : undefined;
  }

  async page(
    drive: string,
    filter: { path: string } | { under: string },
    options: { limit: number; after?: LinkCursor; now: Date; createdBy?: string },
  ): Promise<{ links: ShareLink[]; next?: LinkCursor }> {
    const byPath = 'path' in filter;
    const under = byPath ? undefined : filter.under;
    const names: Record<string, string> = { '#drive': INDEX.partitionKey, '#ttl': TTL };
    const values: Record<string, AttributeValue> = { ':drive': { S: drive }, ':now': { N: String(Math.floor(options.now.getTime() / 1000)) } };
    let condition = '#drive = :drive';
    let kept = '#ttl > :now';
    if (options.createdBy !== undefined) {
      // No index by key: a filter over the drive's links (read, then left out), which is how a page may come back short.
      names['#by'] = 'linkCreatedBy';
      values[':by'] = { S: options.createdBy };
      kept += ' AND #by = :by';
    }
    if (byPath || under !== '/') {
      names['#path'] = INDEX.sortKey;
      // A link is for a file, never the folder itself: everything under a folder starts with "<folder>/".
      values[':path'] = { S: byPath ? filter.path : `${under}/` };
      condition += byPath ? ' AND #path = :path' : ' AND begins_with(#path, :path)';
    }
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: INDEX.name,
        KeyConditionExpression: condition,
        // Expired links wait for TTL in the table; a page leaves them out (and may then hold fewer than `limit`).
        FilterExpression: kept,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        Limit: options.limit,
        ExclusiveStartKey: options.after
          ? { ...linkKey(options.after.id), [INDEX.partitionKey]: { S: drive }, [INDEX.sortKey]: { S: options.after.path } }
          : undefined,
      }),
    );
    const last = out.LastEvaluatedKey;
    return {
      links: (out.Items ?? []).map(linkOf),
      ...(last ? { next: { path: last[INDEX.sortKey].S!, id: last[PK].S!.slice('link#'.length) } } : {}),
    };
  }

  async remove(drive: string, id: string, prefix: string): Promise<boolean> {
    const confined = prefix !== '/';
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: linkKey(id),
          // Only the drive's own link, and for a key confined to a folder only one under it: anything else is
          // answered as if there were no such link.
          ConditionExpression: confined ? '#drive = :drive AND begins_with(#path, :under)' : '#drive = :drive',
          ExpressionAttributeNames: { '#drive': INDEX.partitionKey, ...(confined ? { '#path': INDEX.sortKey } : {}) },
          ExpressionAttributeValues: { ':drive': { S: drive }, ...(confined ? { ':under': { S: `${prefix}/` } } : {}) },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}

function linkOf(item: Record<string, AttributeValue>): ShareLink {
  return {
    id: item[PK].S!.slice('link#'.length),
    drive: item[INDEX.partitionKey].S!,
    path: item[INDEX.sortKey].S!,
    fileId: item.fileId.S!,
    ...(item.fileMovedAt?.S ? { fileMovedAt: item.fileMovedAt.S } : {}),
    ...(item.linkCreatedBy?.S ? { createdBy: item.linkCreatedBy.S } : {}),
    ...(item.linkMakerKey?.S ? { makerKey: item.linkMakerKey.S } : {}),
    createdAt: item.linkCreatedAt.S!,
    expiresAt: Number(item[TTL].N),
  };
}

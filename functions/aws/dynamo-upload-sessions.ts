import { type AttributeValue, ConditionalCheckFailedException, DeleteItemCommand, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { UploadSession, UploadSessionStore } from '../core/ports';
import { UPLOADS_PARTITION_KEY as PK, UPLOADS_TTL_ATTRIBUTE as TTL } from './schema';

type Item = Record<string, AttributeValue>;

/**
 * Upload sessions in their own table, one item per `upload_id`, removed by DynamoDB's TTL once expired
 * (the bucket's lifecycle rule aborts the multipart upload behind one nobody finished).
 */
export class DynamoUploadSessions implements UploadSessionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
  ) {}

  async put(session: UploadSession): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.table, Item: toSessionItem(session) }));
  }

  /**
   * One conditional delete both claims the session and checks its drive: two completions of one upload
   * cannot both proceed, and another drive's key learns nothing, not even that the id exists.
   */
  async take(drive: string, id: string): Promise<UploadSession | undefined> {
    try {
      const { Attributes } = await this.client.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: { [PK]: { S: id } },
          ConditionExpression: '#drive = :drive',
          ExpressionAttributeNames: { '#drive': 'drive' },
          ExpressionAttributeValues: { ':drive': { S: drive } },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return Attributes && fromSessionItem(Attributes);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }
}

export function toSessionItem(session: UploadSession): Item {
  return {
    [PK]: { S: session.id },
    drive: { S: session.drive },
    path: { S: session.path },
    size: { N: String(session.size) },
    contentType: { S: session.contentType },
    fileId: { S: session.fileId },
    objectKey: { S: session.objectKey },
    multipartId: { S: session.multipartId },
    partSize: { N: String(session.partSize) },
    partCount: { N: String(session.partCount) },
    createdAt: { S: session.createdAt },
    expiresAtIso: { S: session.expiresAt },
    [TTL]: { N: String(Math.ceil(Date.parse(session.expiresAt) / 1000)) },
  };
}

export function fromSessionItem(item: Item): UploadSession {
  return {
    id: item[PK].S!,
    drive: item.drive.S!,
    path: item.path.S!,
    size: Number(item.size.N),
    contentType: item.contentType.S!,
    fileId: item.fileId.S!,
    objectKey: item.objectKey.S!,
    multipartId: item.multipartId.S!,
    partSize: Number(item.partSize.N),
    partCount: Number(item.partCount.N),
    createdAt: item.createdAt.S!,
    expiresAt: item.expiresAtIso.S!,
  };
}

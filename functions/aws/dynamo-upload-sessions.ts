import { type AttributeValue, ConditionalCheckFailedException, DeleteItemCommand, type DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { UploadSession, UploadSessionStore } from '../core/ports';
import { claimItem, releaseItem } from './claims';
import { UPLOADS_PARTITION_KEY as PK, UPLOADS_TTL_ATTRIBUTE as TTL } from './schema';

type Item = Record<string, AttributeValue>;

/** The attribute of `UploadSession.recording`: set before a completion's record write, removed by a release that knows none stands. */
const RECORDING = 'recording';

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
   * One conditional update claims the session and checks its drive: two completions of one upload cannot
   * both proceed, and another drive's key learns nothing, not even that the id exists.
   */
  async claim(drive: string, id: string, leaseMs: number): Promise<UploadSession | 'busy' | undefined> {
    const claimed = await claimItem(this.client, this.table, { [PK]: { S: id } }, drive, leaseMs);
    return claimed === 'busy' || claimed === undefined ? claimed : fromSessionItem(claimed);
  }

  async get(drive: string, id: string): Promise<UploadSession | undefined> {
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { [PK]: { S: id } }, ConsistentRead: true }));
    return Item?.drive?.S === drive ? fromSessionItem(Item) : undefined;
  }

  async markRecording(id: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { [PK]: { S: id } },
          UpdateExpression: 'SET #recording = :true',
          // An update of a missing key would create an item.
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#recording': RECORDING, '#pk': PK },
          ExpressionAttributeValues: { ':true': { BOOL: true } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async release(id: string, recordFree = false): Promise<void> {
    await releaseItem(this.client, this.table, { [PK]: { S: id } }, recordFree ? RECORDING : undefined);
  }

  async remove(id: string): Promise<void> {
    await this.client.send(new DeleteItemCommand({ TableName: this.table, Key: { [PK]: { S: id } } }));
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
    ...(session.createdBy ? { createdBy: { S: session.createdBy } } : {}),
    ...(session.createdUnder ? { createdUnderTrust: { S: session.createdUnder.trustId }, createdUnderSubject: { S: session.createdUnder.subject } } : {}),
    ...(session.condition ? ('ifMatch' in session.condition ? { ifMatch: { S: session.condition.ifMatch } } : { ifNoneMatch: { S: session.condition.ifNoneMatch } }) : {}),
    createdAt: { S: session.createdAt },
    expiresAtIso: { S: session.expiresAt },
    ...(session.recording ? { [RECORDING]: { BOOL: true } } : {}),
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
    ...(item.createdBy?.S ? { createdBy: item.createdBy.S } : {}),
    ...(item.createdUnderTrust?.S && item.createdUnderSubject?.S !== undefined ? { createdUnder: { trustId: item.createdUnderTrust.S, subject: item.createdUnderSubject.S } } : {}),
    ...(item.ifMatch?.S ? { condition: { ifMatch: item.ifMatch.S } } : item.ifNoneMatch?.S === '*' ? { condition: { ifNoneMatch: '*' as const } } : {}),
    createdAt: item.createdAt.S!,
    expiresAt: item.expiresAtIso.S!,
    ...(item[RECORDING]?.BOOL ? { recording: true as const } : {}),
  };
}

import { type AttributeValue, ConditionalCheckFailedException, type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';

type Item = Record<string, AttributeValue>;

/**
 * Claims the item at `key` of `drive` for `leaseMs` by one conditional update (`claimedUntil`), so that one
 * holder at a time works on it: returns the item, `'busy'` while another claim holds, or undefined if there is
 * none or it is another drive's (whose key learns nothing, not even that it exists). A claim lapses by itself.
 */
export async function claimItem(client: DynamoDBClient, table: string, key: Item, drive: string, leaseMs: number): Promise<Item | 'busy' | undefined> {
  const now = Date.now();
  try {
    const { Attributes } = await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'SET #claim = :until',
        ConditionExpression: '#drive = :drive AND (attribute_not_exists(#claim) OR #claim < :now)',
        ExpressionAttributeNames: { '#drive': 'drive', '#claim': 'claimedUntil' },
        ExpressionAttributeValues: { ':drive': { S: drive }, ':now': { N: String(now) }, ':until': { N: String(now + leaseMs) } },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  // Refused: no such item, another drive's, or claimed. Only the owner may learn which.
  const { Item } = await client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }));
  return Item?.drive?.S === drive ? 'busy' : undefined;
}

/**
 * Gives up a claim of the item at `key`, keeping the item; one removed meanwhile stays removed. `clear`: an
 * attribute removed in the same write.
 */
export async function releaseItem(client: DynamoDBClient, table: string, key: Item, clear?: string): Promise<void> {
  const [name] = Object.keys(key);
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key,
        UpdateExpression: clear ? 'REMOVE #claim, #clear' : 'REMOVE #claim',
        // An update of a missing key would create an item.
        ConditionExpression: 'attribute_exists(#key)',
        ExpressionAttributeNames: { '#claim': 'claimedUntil', '#key': name, ...(clear ? { '#clear': clear } : {}) },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

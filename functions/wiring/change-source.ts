import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { CHANGES_PARTITION_KEY as PK, CHANGES_SORT_KEY as SK } from '../aws/schema';
import { setting } from '../config';
import type { ChangeSource } from '../core/change-source';
import { log } from '../telemetry/log';
import { dynamodb } from './dynamodb';

/**
 * The drive's log as the webhooks read it (functions/core/change-source.ts). `head` and `cursor` follow the
 * design's layout (a change under `<drive>`, its position a 16-digit sort key; the cursor base64url JSON);
 * `read` is the change feed's own reader, which this wiring hands on once the feed (branch c27-feed) is
 * merged: until then the dispatcher has nothing to follow, and says so once a container.
 */
let warned = false;
export const changeSource: ChangeSource = {
  async head(drive) {
    const page = await dynamodb.send(
      new QueryCommand({
        TableName: setting('changesTable'),
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':pk': { S: drive } },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const last = page.Items?.[0]?.[SK]?.S;
    return last === undefined ? 0 : Number(last);
  },
  async read(_drive, after) {
    if (!warned) log('WARN', 'the change feed is not wired to the webhooks yet (functions/wiring/change-source.ts): nothing is dispatched');
    warned = true;
    return { changes: [], position: after };
  },
  cursor(drive, subtree, position, now) {
    return Buffer.from(JSON.stringify({ v: 1, d: drive, p: subtree, s: position, t: Math.floor(now.getTime() / 1000) })).toString('base64url');
  },
};

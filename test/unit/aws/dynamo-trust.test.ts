import { DynamoDBClient, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoTrustStore, MINTED_REVOKE_CONCURRENCY } from '../../../functions/aws/dynamo-trust';

const dynamodb = mockClient(DynamoDBClient);
const NOW = Date.parse('2026-03-02T09:00:00.000Z');

/** A minted key's item as the keys-by-drive index answers it. */
const keyItem = (n: number) => ({ pk: { S: `key#${String(n).padStart(64, '0')}` }, keyId: { S: String(n).padStart(16, '0') }, drive: { S: 'default' }, trustId: { S: 'rule' } });

beforeEach(() => {
  dynamodb.reset();
  jest.spyOn(Date, 'now').mockReturnValue(NOW);
});

afterEach(() => jest.restoreAllMocks());

describe('Class: DynamoTrustStore', () => {
  describe('Method: revokeMinted', () => {
    it('revokes many keys several at once (never more than its limit), every one of every page', async () => {
      // Prepare: 1,000 live keys in two pages; each UpdateItem stays in flight until the next turn of the event loop.
      const items = Array.from({ length: 1000 }, (_, n) => keyItem(n));
      dynamodb
        .on(QueryCommand)
        .resolvesOnce({ Items: items.slice(0, 600), LastEvaluatedKey: { pk: items[599].pk } })
        .resolvesOnce({ Items: items.slice(600) });
      let inFlight = 0;
      let most = 0;
      dynamodb.on(UpdateItemCommand).callsFake(async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return {};
      });
      const store = new DynamoTrustStore(new DynamoDBClient({ region: 'us-east-1' }), 'access');

      // Act
      const revoked = await store.revokeMinted('default', 'rule');

      // Assess: one at a time, 1,000 round trips end to end (8 s at 8 ms each); in parallel, a sixteenth of that.
      expect(revoked).toBe(1000);
      const updated = dynamodb.commandCalls(UpdateItemCommand).map((call) => call.args[0].input.Key!.pk.S);
      expect(new Set(updated)).toEqual(new Set(items.map((item) => item.pk.S)));
      expect(most).toBe(MINTED_REVOKE_CONCURRENCY);
      expect(MINTED_REVOKE_CONCURRENCY).toBeGreaterThan(1);
    });

    it('asks only for keys still live: not revoked, and not past their end', async () => {
      dynamodb.on(QueryCommand).resolves({ Items: [] });
      const store = new DynamoTrustStore(new DynamoDBClient({ region: 'us-east-1' }), 'access');

      await store.revokeMinted('default', 'rule');

      const input = dynamodb.commandCalls(QueryCommand)[0].args[0].input;
      expect(input.FilterExpression).toBe('trustId = :trust AND attribute_not_exists(revokedAt) AND keyExpiresAt > :now');
      expect(input.ExpressionAttributeValues![':now']).toEqual({ S: new Date(NOW).toISOString() });
    });
  });
});

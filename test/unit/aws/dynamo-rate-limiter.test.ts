import { ConditionalCheckFailedException, DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoRateLimiter } from '../../../functions/aws/dynamo-access';

const dynamodb = mockClient(DynamoDBClient);
const NOW = 1_800_000_000_000;

const failed = (tat?: number) =>
  new ConditionalCheckFailedException({ message: 'failed', $metadata: {}, Item: tat === undefined ? undefined : { pk: { S: 'x' }, tat: { N: String(tat) } } });

beforeEach(() => {
  dynamodb.reset();
  jest.spyOn(Date, 'now').mockReturnValue(NOW);
});

afterEach(() => jest.restoreAllMocks());

describe('Class: DynamoRateLimiter', () => {
  it('admits on an idle bucket with one conditional update', async () => {
    // Prepare: 60 per minute, one token per second
    dynamodb.on(UpdateItemCommand).resolves({ Attributes: { tat: { N: String(NOW + 1000) } } });
    const limiter = new DynamoRateLimiter(new DynamoDBClient({ region: 'us-east-1' }), 'access');

    // Act
    const decision = await limiter.take('k#list', 60);

    // Assess
    expect(decision).toEqual({ allowed: true, limit: 60, remaining: 59, resetSeconds: 1 });
    const calls = dynamodb.commandCalls(UpdateItemCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0].args[0].input.ConditionExpression).toBe('attribute_not_exists(tat) OR tat <= :now');
    expect(calls[0].args[0].input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  });

  it('switches branch on a wrong guess using the item the failed condition returns, without a read', async () => {
    dynamodb
      .on(UpdateItemCommand)
      .rejectsOnce(failed(NOW + 5000))
      .resolvesOnce({ Attributes: { tat: { N: String(NOW + 6000) } } });
    const limiter = new DynamoRateLimiter(new DynamoDBClient({ region: 'us-east-1' }), 'access');

    const decision = await limiter.take('k#list', 60);

    expect(decision).toMatchObject({ allowed: true, remaining: 54, resetSeconds: 6 });
    const calls = dynamodb.commandCalls(UpdateItemCommand);
    expect(calls[1].args[0].input.UpdateExpression).toBe('SET tat = tat + :interval, #ttl = :ttl');
    expect(dynamodb.commandCalls(GetItemCommand)).toHaveLength(0);
  });

  it('refuses a full bucket with the whole seconds until the next token', async () => {
    // tat 61.5 s ahead: the next request fits once tat − now ≤ 59 s, i.e. in 2.5 s → 3
    dynamodb.on(UpdateItemCommand).rejects(failed(NOW + 61_500));
    const limiter = new DynamoRateLimiter(new DynamoDBClient({ region: 'us-east-1' }), 'access');

    const decision = await limiter.take('k#list', 60);

    expect(decision).toEqual({ allowed: false, limit: 60, remaining: 0, resetSeconds: 62, retryAfterSeconds: 3 });
    expect(dynamodb.commandCalls(UpdateItemCommand)).toHaveLength(1);
  });

  it('reads the bucket back when the failed condition carries no item (dynalite)', async () => {
    dynamodb.on(UpdateItemCommand).rejects(failed());
    dynamodb.on(GetItemCommand).resolves({ Item: { tat: { N: String(NOW + 60_000) } } });
    const limiter = new DynamoRateLimiter(new DynamoDBClient({ region: 'us-east-1' }), 'access');

    const decision = await limiter.take('k#list', 60);

    expect(decision).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('takes a cost of several tokens in one update, moving tat by that many intervals', async () => {
    // Prepare: 60 per minute; a request of 20 tokens on an idle bucket
    dynamodb.on(UpdateItemCommand).resolves({ Attributes: { tat: { N: String(NOW + 20_000) } } });
    const limiter = new DynamoRateLimiter(new DynamoDBClient({ region: 'us-east-1' }), 'access');

    // Act
    const decision = await limiter.take('k#upload', 60, 20);

    // Assess: one write, tat set 20 s ahead, 40 left
    expect(decision).toEqual({ allowed: true, limit: 60, remaining: 40, resetSeconds: 20 });
    const input = dynamodb.commandCalls(UpdateItemCommand)[0].args[0].input;
    expect(input.ExpressionAttributeValues?.[':next']).toEqual({ N: (NOW + 20_000).toFixed(3) });
  });

  it('refuses a cost the bucket cannot hold yet, with the seconds until it can', async () => {
    // tat 45 s ahead: 15 tokens left; 20 fit once tat − now ≤ 40 s, i.e. in 5 s
    dynamodb.on(UpdateItemCommand).rejects(failed(NOW + 45_000));
    const limiter = new DynamoRateLimiter(new DynamoDBClient({ region: 'us-east-1' }), 'access');

    const decision = await limiter.take('k#upload', 60, 20);

    expect(decision).toEqual({ allowed: false, limit: 60, remaining: 0, resetSeconds: 45, retryAfterSeconds: 5 });
    // A cost above the bucket's size is taken as the whole bucket: it passes once the bucket is full.
    expect(await limiter.take('k#other', 60, 500)).toMatchObject({ allowed: false, retryAfterSeconds: 45 });
  });
});

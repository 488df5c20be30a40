import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { PassThrough } from 'node:stream';
import { type RequestContext, deadlineOf, jsonHandler, streamingHandler } from '../../../functions/http/api-handler';
import type { Guard } from '../../../functions/http/guard';

/** A proxy event as API Gateway sends it, named `req-7`. */
function eventOf(): APIGatewayProxyEvent {
  return {
    resource: '/drive/whoami',
    path: '/drive/whoami',
    httpMethod: 'GET',
    headers: {},
    multiValueHeaders: {},
    body: null,
    isBase64Encoded: false,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: { requestId: 'req-7' } as APIGatewayProxyEvent['requestContext'],
  };
}

const caller = { drive: 'd1', keyId: 'k1', role: 'admin', prefix: '/' } as const;

describe('Function: jsonHandler (the request context)', () => {
  beforeEach(() => jest.spyOn(process.stdout, 'write').mockImplementation(() => true));
  afterEach(() => jest.restoreAllMocks());

  it('hands the operation the caller, its drive, the endpoint\'s stores, the request id and the deadline', async () => {
    // Prepare
    const stores = { nodes: { name: 'the node store' } };
    const asked: string[] = [];
    const guard: Guard = async (permission) => {
      asked.push(permission);
      return { caller: caller as never, headers: {} };
    };
    let seen: RequestContext<typeof stores> | undefined;
    const handler = jsonHandler({ permission: 'whoami', guard, stores }, async (_event, context) => {
      seen = context;
      return {};
    });
    const lambda = { getRemainingTimeInMillis: () => 5_000 } as Context;

    // Act
    const before = Date.now();
    const answer = await handler(eventOf(), lambda);

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(asked).toEqual(['whoami']);
    expect(seen).toMatchObject({ caller, drive: 'd1', requestId: 'req-7' });
    expect(seen!.stores).toBe(stores);
    expect(seen!.deadline).toBeGreaterThanOrEqual(before + 5_000);
    expect(seen!.deadline).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it('never calls the operation when the guard refuses', async () => {
    const guard: Guard = async () => {
      throw new Error('refused');
    };
    const operation = jest.fn(async () => ({}));

    const answer = await jsonHandler({ permission: 'whoami', guard, stores: {} }, operation)(eventOf());

    expect(answer.statusCode).toBe(500);
    expect(operation).not.toHaveBeenCalled();
  });
});

describe('Function: streamingHandler (the request context)', () => {
  // What the Lambda runtime gives a streamed function: the prelude is the stream's business, not this test's.
  beforeAll(() => Object.assign(globalThis, { awslambda: { HttpResponseStream: { from: (stream: PassThrough) => stream } } }));
  beforeEach(() => jest.spyOn(process.stdout, 'write').mockImplementation(() => true));
  afterEach(() => jest.restoreAllMocks());

  it('hands the operation the same context a buffered endpoint gets', async () => {
    // Prepare
    const stores = { objects: { name: 'the object store' } };
    const guard: Guard = async () => ({ caller: caller as never, headers: {} });
    let seen: RequestContext<typeof stores> | undefined;
    const handler = streamingHandler({ permission: 'download', guard, stores }, async (_event, context) => {
      seen = context;
      return { statusCode: 204, headers: {} };
    });
    const stream = new PassThrough();
    stream.resume();

    // Act
    await handler(eventOf(), stream as never, { getRemainingTimeInMillis: () => 2_000 } as Context);

    // Assess
    expect(seen).toMatchObject({ caller, drive: 'd1', requestId: 'req-7' });
    expect(seen!.stores).toBe(stores);
    expect(seen!.deadline).toBeLessThanOrEqual(Date.now() + 2_000);
  });
});

describe('Function: deadlineOf', () => {
  it('is the Lambda invocation\'s remaining time, never past API Gateway\'s 29 s', () => {
    expect(deadlineOf({ getRemainingTimeInMillis: () => 3_000 }, 1_000_000)).toBe(1_003_000);
    expect(deadlineOf({ getRemainingTimeInMillis: () => 60_000 }, 1_000_000)).toBe(1_029_000);
    expect(deadlineOf(undefined, 1_000_000)).toBe(1_029_000);
  });
});

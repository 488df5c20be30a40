import type { APIGatewayProxyEvent } from 'aws-lambda';
import { jsonHandler } from '../../../functions/http/api-handler';
import { logRequest } from '../../../functions/http/request-log';
import { DriveError } from '../../../functions/core/errors';
import { cleanUp, reportCleanUpsTo } from '../../../functions/core/clean-up';
import { reportCleanUp } from '../../../functions/telemetry/clean-up-report';
import { embeddedMetrics } from '../../../functions/telemetry/metrics';
import { configuredLevel } from '../../../functions/telemetry/log';
import { withRequestContext } from '../../../functions/telemetry/request-context';
import type { Guard } from '../../../functions/http/guard';

const SECRET = 'unit-secret-f6UrpcrOhwuH2C8YgGgAiPrZeO';

/** A proxy event for `method path` with `body`, as API Gateway sends it. */
function eventOf(method: string, resource: string, body: string | null = null, headers: Record<string, string> = {}): APIGatewayProxyEvent {
  return {
    resource,
    path: resource,
    httpMethod: method,
    headers: { Authorization: `Bearer ${SECRET}`, ...headers },
    multiValueHeaders: {},
    body,
    isBase64Encoded: false,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: { requestId: 'req-1' } as APIGatewayProxyEvent['requestContext'],
  };
}

const admitted: Guard = async () => ({ caller: { drive: 'd', keyId: 'k1', role: 'admin' } as never, headers: {} });

let written: string[];
// As the composition root (functions/wiring/) installs it in a function.
beforeAll(() => reportCleanUpsTo(reportCleanUp));
beforeEach(() => {
  written = [];
  jest.spyOn(process.stdout, 'write').mockImplementation((text) => {
    written.push(String(text));
    return true;
  });
});
afterEach(() => jest.restoreAllMocks());
const lines = () => written.map((text) => JSON.parse(text) as Record<string, unknown>);

describe('Function: embeddedMetrics', () => {
  it('is a CloudWatch embedded-metric-format record: _aws names the namespace, dimension sets and metrics, whose values are top-level fields', () => {
    const record = embeddedMetrics({ requests: 1, latency: 12, bytesOut: undefined }, 'GET /drive/list');

    expect(record).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          {
            Namespace: 'Drive',
            Dimensions: [['Service'], ['Service', 'Route']],
            Metrics: [
              { Name: 'Requests', Unit: 'Count' },
              { Name: 'Latency', Unit: 'Milliseconds' },
            ],
          },
        ],
      },
      Service: 'drive',
      Route: 'GET /drive/list',
      Requests: 1,
      Latency: 12,
    });
  });

  it('keeps a metric without a route per service only', () => {
    expect(embeddedMetrics({ orphanedObjects: 2 })).toMatchObject({ _aws: { CloudWatchMetrics: [{ Dimensions: [['Service']] }] }, OrphanedObjects: 2 });
    expect(embeddedMetrics({ orphanedObjects: 2 })).not.toHaveProperty('Route');
  });
});

describe('Function: jsonHandler (the request line)', () => {
  it('logs status, bytes, aws calls and metrics, never the key, and names the request in the error body', async () => {
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {} }, async () => {
      throw new DriveError('not_found', 'no folder /a');
    });

    const answer = await handler(eventOf('POST', '/drive/folders', '{"path":"/a"}', { 'X-Amzn-Trace-Id': 'Root=1-abc-def;Sampled=1' }));

    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'not_found', message: 'no folder /a', request_id: 'req-1' } });
    expect(answer.headers).toMatchObject({ 'X-Request-Id': 'req-1' });
    const [line] = lines();
    expect(line).toMatchObject({
      level: 'INFO',
      message: 'request',
      request_id: 'req-1',
      route: '/drive/folders',
      status: 404,
      drive: 'd',
      key_id: 'k1',
      bytes_in: 13,
      bytes_out: Buffer.byteLength(answer.body),
      aws_calls: {},
      trace_id: '1-abc-def',
      Route: 'POST /drive/folders',
      ClientErrors: 1,
      ServerErrors: 0,
      RateLimited: 0,
    });
    expect(written.join('')).not.toContain(SECRET);
  });

  it('logs an unhandled error with its cause under the request id, and answers a bare internal_error naming the request', async () => {
    const handler = jsonHandler({ permission: 'create-folder', guard: admitted, stores: {} }, async () => {
      throw new Error('write failed', { cause: new Error('socket hang up') });
    });

    const answer = await handler(eventOf('POST', '/drive/folders'));

    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'internal_error', message: 'internal error; the request may be retried', request_id: 'req-1' } });
    const [unhandled, request] = lines();
    expect(unhandled).toMatchObject({ level: 'ERROR', message: 'unhandled error', request_id: 'req-1', error: { message: 'write failed', cause: { message: 'socket hang up' } } });
    expect(request).toMatchObject({ level: 'ERROR', status: 500, ServerErrors: 1 });
  });

  it('at a level above INFO, cuts a request line to its metrics, written still (an alarm reads them)', () => {
    process.env.DRIVE_LOG_LEVEL = 'WARN';
    try {
      jest.isolateModules(() => {
        const isolated = jest.requireActual<typeof import('../../../functions/http/request-log')>('../../../functions/http/request-log');
        isolated.logRequest(eventOf('GET', '/drive/list'), { status: 200, startedAt: Date.now(), caller: { drive: 'd', keyId: 'k1' } as never });
      });
    } finally {
      delete process.env.DRIVE_LOG_LEVEL;
    }

    const [line] = lines();
    expect(line).toMatchObject({ level: 'INFO', request_id: 'req-1', status: 200, Requests: 1, _aws: expect.any(Object) });
    expect(line).not.toHaveProperty('drive');
    expect(line).not.toHaveProperty('aws_calls');
  });

  it('counts a 429 as rate limited', () => {
    logRequest(eventOf('GET', '/drive/list'), { status: 429, startedAt: Date.now() });

    expect(lines()[0]).toMatchObject({ RateLimited: 1, ClientErrors: 1 });
  });
});

describe('Function: cleanUp', () => {
  it('names the keys a failed step left, counts them in the request, and carries the OrphanedObjects metric', async () => {
    const counted = await withRequestContext('req-2', async (context) => {
      await cleanUp(() => Promise.reject(new Error('S3 down')), () => ({ keys: ['d/1', 'd/2'] }));
      return context.orphanedObjects;
    });

    expect(counted).toBe(2);
    expect(lines()[0]).toMatchObject({ level: 'WARN', request_id: 'req-2', orphaned_keys: ['d/1', 'd/2'], OrphanedObjects: 2, error: { message: 'S3 down' } });
  });

  it('names a multipart upload left behind, which is no object yet', async () => {
    await cleanUp(() => Promise.reject(new Error('S3 down')), () => ({ keys: ['d/big'], uploadId: 'mp-1' }));

    expect(lines()[0]).toMatchObject({ orphaned_keys: ['d/big'], upload_id: 'mp-1', OrphanedObjects: 0 });
  });

  it('logs a failure that leaves no object as a warning with no metric', async () => {
    await cleanUp(() => Promise.reject(new Error('DynamoDB down')));

    expect(lines()[0]).toMatchObject({ level: 'WARN', message: 'clean-up failed' });
    expect(lines()[0]).not.toHaveProperty('_aws');
  });
});

describe('Function: configuredLevel', () => {
  it("reads Lambda's application log level first, then DRIVE_LOG_LEVEL, and falls back to INFO", () => {
    expect(configuredLevel({ AWS_LAMBDA_LOG_LEVEL: 'WARN', DRIVE_LOG_LEVEL: 'DEBUG' })).toBe('WARN');
    expect(configuredLevel({ DRIVE_LOG_LEVEL: 'debug' })).toBe('DEBUG');
    expect(configuredLevel({ AWS_LAMBDA_LOG_LEVEL: 'TRACE' })).toBe('DEBUG');
    expect(configuredLevel({ AWS_LAMBDA_LOG_LEVEL: 'FATAL' })).toBe('ERROR');
    expect(configuredLevel({ DRIVE_LOG_LEVEL: 'loud' })).toBe('INFO');
    expect(configuredLevel({})).toBe('INFO');
  });
});

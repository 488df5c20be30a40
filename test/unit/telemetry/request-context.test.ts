import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { runsOneAtATime } from '../../../functions/telemetry/request-context';

type Module = typeof import('../../../functions/telemetry/request-context');
type Counter = typeof import('../../../functions/telemetry/aws-call-counter');

/**
 * The module (and the call counter that reads it), fresh, in a process whose environment holds `env` for the
 * tests of the describe block that calls this (the module chooses at its first request).
 */
function loadedWith(env: Record<string, string>): { context: Module; counter: Counter } {
  const loaded = {} as { context: Module; counter: Counter };
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const [name, value] of Object.entries(env)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    jest.isolateModules(() => {
      loaded.context = jest.requireActual<Module>('../../../functions/telemetry/request-context');
      loaded.counter = jest.requireActual<Counter>('../../../functions/telemetry/aws-call-counter');
    });
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  return loaded;
}

/** An S3 client whose calls answer after `delayMs` without the network. */
function offline(counter: Counter['countAwsCalls'], delayMs = 0): S3Client {
  const client = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  client.middlewareStack.add(
    () => async () => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { output: { $metadata: {} }, response: {} };
    },
    { step: 'finalizeRequest', name: 'offline' },
  );
  return counter(client, 's3');
}

const get = () => new GetObjectCommand({ Bucket: 'b', Key: 'k' });

describe('Function: runsOneAtATime', () => {
  it('is true in a Lambda function, which runs one invocation at a time', () => {
    expect(runsOneAtATime({ AWS_LAMBDA_FUNCTION_NAME: 'drive-download' })).toBe(true);
  });

  it('is false where a managed instance may run several at once, and off Lambda (the local host, tests)', () => {
    expect(runsOneAtATime({ AWS_LAMBDA_FUNCTION_NAME: 'drive-download', AWS_LAMBDA_MAX_CONCURRENCY: '8' })).toBe(false);
    expect(runsOneAtATime({})).toBe(false);
  });
});

describe('the request context of a process that runs one invocation at a time', () => {
  const loaded = loadedWith({ AWS_LAMBDA_FUNCTION_NAME: 'drive-test' });

  it('holds the running request in a slot, not in an async context: what runs meanwhile sees it', async () => {
    const { context } = loaded;
    // Scheduled before the request begins, so outside its async context: only a slot shows it the request.
    const seen = new Promise((resolve) => setTimeout(() => resolve(context.currentRequest()?.requestId), 5));
    await context.withRequestContext('slot', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    expect(await seen).toBe('slot');
  });

  it('counts the calls of the running request, and none once it has answered', async () => {
    const { context, counter } = loaded;
    const s3 = offline(counter.countAwsCalls, 1);
    const first = await context.withRequestContext('r1', async (request) => {
      await s3.send(get());
      await Promise.all([s3.send(get()), s3.send(get())]);
      expect(context.currentRequest()).toBe(request);
      return request;
    });
    expect(first.awsCalls).toEqual({ s3: 3 });
    expect(context.currentRequest()).toBeUndefined();
    await s3.send(get());
    const second = await context.withRequestContext('r2', async (request) => {
      await s3.send(get());
      return request;
    });
    expect({ first: first.awsCalls, second: second.awsCalls }).toEqual({ first: { s3: 3 }, second: { s3: 1 } });
  });

  it('has no running request after one that failed, at once or later', async () => {
    const { context } = loaded;
    expect(() => context.withRequestContext('sync', () => {
      throw new Error('failed');
    })).toThrow('failed');
    expect(context.currentRequest()).toBeUndefined();
    await expect(context.withRequestContext('async', async () => {
      throw new Error('failed later');
    })).rejects.toThrow('failed later');
    expect(context.currentRequest()).toBeUndefined();
  });
});

describe('the request context of a process that runs many at once', () => {
  const loaded = loadedWith({ AWS_LAMBDA_FUNCTION_NAME: 'drive-test', AWS_LAMBDA_MAX_CONCURRENCY: '4' });

  it('keeps the counts of concurrent requests apart', async () => {
    const { context, counter } = loaded;
    const s3 = offline(counter.countAwsCalls, 5);
    const [a, b] = await Promise.all(
      // One call after another: each request's later calls are made while the other has begun.
      [2, 4].map((n, i) => context.withRequestContext(`r${i}`, async (request) => {
        for (let call = 0; call < n; call++) await s3.send(get());
        return request.awsCalls;
      })),
    );
    expect({ a, b }).toEqual({ a: { s3: 2 }, b: { s3: 4 } });
  });
});

import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, type KeyStore, type RateLimiter, SPEC_RATE_LIMITS, hashSecret } from '../../../functions/core/access';
import { createGuard } from '../../../functions/http/guard';

const caller: Caller = { keyId: 'k1', drive: 'd', role: 'read-write', prefix: '/' };
const event = (authorization?: string) =>
  ({ headers: authorization ? { authorization } : {}, multiValueHeaders: {} }) as unknown as APIGatewayProxyEvent;

function setup(options: { keyCacheMs?: number; allowed?: boolean; role?: Caller['role'] } = {}) {
  const keys: jest.Mocked<KeyStore> = {
    find: jest.fn(async (hash) => (hash === hashSecret('good-key') ? { ...caller, role: options.role ?? caller.role } : undefined)),
    touch: jest.fn<Promise<void>, [string, Date]>(async () => undefined),
  };
  const limiter: jest.Mocked<RateLimiter> = {
    take: jest.fn(async (_bucket, limit) =>
      options.allowed === false
        ? { allowed: false, limit, remaining: 0, resetSeconds: 60, retryAfterSeconds: 2 }
        : { allowed: true, limit, remaining: limit - 1, resetSeconds: 1 },
    ),
  };
  const guard = createGuard({ keys, limiter, limits: SPEC_RATE_LIMITS, keyCacheMs: options.keyCacheMs ?? 0 });
  return { guard, keys, limiter };
}

describe('Function: createGuard', () => {
  it('admits a known key and takes a token from its bucket for the endpoint', async () => {
    const { guard, limiter } = setup();

    const admitted = await guard('upload', event('Bearer good-key'));

    expect(admitted.caller).toEqual(caller);
    expect(limiter.take).toHaveBeenCalledWith('k1#upload', 100, 1);
    expect(admitted.headers).toEqual({ 'RateLimit-Limit': '100', 'RateLimit-Remaining': '99', 'RateLimit-Reset': '1' });
  });

  it.each([undefined, 'good-key', 'Basic good-key', 'Bearer', 'Bearer two words', 'Bearer bad-key'])(
    'answers unauthorized for %j without touching the rate limiter',
    async (authorization) => {
      const { guard, limiter } = setup();
      await expect(guard('list', event(authorization))).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
      expect(limiter.take).not.toHaveBeenCalled();
    },
  );

  it('refuses over the limit with Retry-After and the delay in the message', async () => {
    const { guard } = setup({ allowed: false });
    await expect(guard('list', event('Bearer good-key'))).rejects.toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('retry in 2 seconds'),
      headers: expect.objectContaining({ 'Retry-After': '2', 'RateLimit-Remaining': '0' }),
    });
  });

  it('caches a verified key for the configured time only', async () => {
    const { guard, keys } = setup({ keyCacheMs: 1000 });
    const now = jest.spyOn(Date, 'now').mockReturnValue(0);

    await guard('list', event('Bearer good-key'));
    await guard('list', event('Bearer good-key'));
    expect(keys.find).toHaveBeenCalledTimes(1);

    now.mockReturnValue(1001);
    await guard('list', event('Bearer good-key'));
    expect(keys.find).toHaveBeenCalledTimes(2);
    now.mockRestore();
  });

  it.each([
    ['read-only', 'upload'],
    ['read-only', 'delete-folder'],
    ['upload-only', 'download'],
    ['upload-only', 'list'],
    ['upload-only', 'delete-folder'],
    ['read-write', 'keys'],
  ] as const)('refuses a %s key on %s with 403 forbidden, before taking a token', async (role, endpoint) => {
    const { guard, limiter } = setup({ role });

    await expect(guard(endpoint, event('Bearer good-key'))).rejects.toMatchObject({ status: 403, code: 'forbidden', message: expect.stringContaining(role) });
    expect(limiter.take).not.toHaveBeenCalled();
  });

  it.each([
    ['admin', ['upload', 'download', 'list', 'create-folder', 'delete-folder', 'keys']],
    ['read-write', ['upload', 'download', 'list', 'create-folder', 'delete-folder']],
    ['read-only', ['download', 'list']],
    ['upload-only', ['upload', 'create-folder']],
  ] as const)('admits a %s key on %j', async (role, endpoints) => {
    const { guard } = setup({ role });
    for (const endpoint of endpoints) await expect(guard(endpoint, event('Bearer good-key'))).resolves.toMatchObject({ caller: { role } });
  });

  it('records a key\'s use once a minute per container, not on every request', async () => {
    const { guard, keys } = setup();
    for (let i = 0; i < 5; i++) await guard('list', event('Bearer good-key'));
    expect(keys.touch).toHaveBeenCalledTimes(1);
    expect(keys.touch).toHaveBeenCalledWith(hashSecret('good-key'), expect.any(Date));
  });
});

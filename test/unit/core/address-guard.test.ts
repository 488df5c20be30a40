import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ResolvedAddress, addressAllowed, checkedAddress, webhookUrlProblem } from '../../../functions/core/address-guard';
import { registerWebhook } from '../../../functions/core/webhooks';
import { pinnedLookup, webhookPoster } from '../../../functions/http/webhook-post';
import { MemoryChangeSource, MemoryWebhookStore } from '../../support/webhook-ports';

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

describe('Function: addressAllowed', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '169.254.169.254',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::10.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '0.0.0.0',
    '::',
    'fd00::1',
    'fc00::1',
    'fe80::1',
    'fe80::1%eth0',
    '224.0.0.251',
    'ff02::1',
    '255.255.255.255',
    '192.0.2.10',
    '2001:db8::1',
    '2002:a00:1::1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(addressAllowed(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])('allows %s, a public address', (address) => {
    expect(addressAllowed(address)).toBe(true);
  });

  it('allows only loopback addresses when asked for loopback only', () => {
    expect(addressAllowed('127.0.0.1', { loopbackOnly: true })).toBe(true);
    expect(addressAllowed('::1', { loopbackOnly: true })).toBe(true);
    expect(addressAllowed('93.184.216.34', { loopbackOnly: true })).toBe(false);
    expect(addressAllowed('10.0.0.1', { loopbackOnly: true })).toBe(false);
  });
});

describe('Function: webhookUrlProblem', () => {
  it('takes https in the stack, and http only to 127.0.0.1 or localhost on the local host', () => {
    expect(webhookUrlProblem('https://hooks.example.com/drive', false)).toBeUndefined();
    expect(webhookUrlProblem('http://hooks.example.com/drive', false)).toBe('url must be https');
    expect(webhookUrlProblem('http://127.0.0.1:8080/x', false)).toBe('url must be https');
    expect(webhookUrlProblem('http://127.0.0.1:8080/x', true)).toBeUndefined();
    expect(webhookUrlProblem('http://localhost:8080/x', true)).toBeUndefined();
    expect(webhookUrlProblem('http://hooks.example.com/x', true)).toBe('url must be https, or http to 127.0.0.1 or localhost');
    expect(webhookUrlProblem('https://user:pw@hooks.example.com/', false)).toBe('url must not hold a user name or password');
    expect(webhookUrlProblem('hooks.example.com', false)).toBe('url must be an absolute URL, like https://example.com/hooks/drive');
    expect(webhookUrlProblem('ftp://hooks.example.com/', false)).toBe('url must be https');
  });
});

describe('Function: checkedAddress', () => {
  it('refuses a name if any of its addresses is refused', async () => {
    const resolve = async () => [v4('93.184.216.34'), v6('fd00::1')];
    await expect(checkedAddress(new URL('https://mixed.example/'), resolve, false)).rejects.toThrow('refused address: mixed.example resolves to fd00::1, which is not a public address');
  });

  it('refuses an IP literal without asking DNS', async () => {
    const resolve = jest.fn(async () => [v4('93.184.216.34')]);
    await expect(checkedAddress(new URL('https://169.254.169.254/latest/meta-data/'), resolve, false)).rejects.toThrow('refused address');
    await expect(checkedAddress(new URL('https://[::ffff:127.0.0.1]/'), resolve, false)).rejects.toThrow('refused address');
    expect(resolve).not.toHaveBeenCalled();
  });

  it('answers the first address of a public name', async () => {
    const resolve = async () => [v4('93.184.216.34'), v6('2606:2800:220:1::1')];
    expect(await checkedAddress(new URL('https://example.com/'), resolve, false)).toEqual(v4('93.184.216.34'));
  });

  it('refuses localhost in the stack, and on the local host a localhost that resolves elsewhere', async () => {
    await expect(checkedAddress(new URL('http://localhost:1/'), async () => [v4('127.0.0.1')], false)).rejects.toThrow('refused address');
    expect(await checkedAddress(new URL('http://localhost:1/'), async () => [v4('127.0.0.1')], true)).toEqual(v4('127.0.0.1'));
    await expect(checkedAddress(new URL('http://localhost:1/'), async () => [v4('10.0.0.5')], true)).rejects.toThrow('refused address');
  });
});

describe('Function: webhookPoster (DNS rebinding)', () => {
  let server: Server;
  let port: number;
  let hits: number;

  beforeAll(async () => {
    hits = 0;
    server = createServer((_req, res) => {
      hits++;
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    hits = 0;
  });

  it('resolves once and connects to the address it checked, whatever DNS answers later', () => {
    // Prepare: a lookup pinned to the checked public address.
    const lookup = pinnedLookup(v4('93.184.216.34'));
    const single = jest.fn();
    const all = jest.fn();

    // Act: as net.connect asks, with and without `all`.
    (lookup as unknown as (h: string, o: object, cb: (...a: unknown[]) => void) => void)('rebind.example', {}, single);
    (lookup as unknown as (h: string, o: object, cb: (...a: unknown[]) => void) => void)('rebind.example', { all: true }, all);

    // Assess
    expect(single).toHaveBeenCalledWith(null, '93.184.216.34', 4);
    expect(all).toHaveBeenCalledWith(null, [{ address: '93.184.216.34', family: 4 }]);
  });

  it('never reaches a name whose second answer is private: it asks DNS once, and refuses a private first answer', async () => {
    // Prepare: a resolver that answers loopback (where the receiver listens) first, a public address after.
    const answers = [[v4('127.0.0.1')], [v4('93.184.216.34')]];
    const resolve = jest.fn(async () => answers.shift()!);
    const post = webhookPoster({ allowLoopback: false, resolve });

    // Act
    const outcome = await post(`https://rebind.example:${port}/`, '{}', {}, 1000);

    // Assess: refused, one lookup, nothing reached.
    expect(outcome).toEqual({ error: 'refused address: rebind.example resolves to 127.0.0.1, which is not a public address' });
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(hits).toBe(0);
  });

  it('connects to the checked address even when the name itself would resolve elsewhere', async () => {
    // Prepare: `localhost` checked as 127.0.0.1 on the local host; the request goes where the check looked.
    const post = webhookPoster({ allowLoopback: true, resolve: async () => [v4('127.0.0.1')] });

    // Act
    const outcome = await post(`http://localhost:${port}/`, '{}', {}, 1000);

    // Assess
    expect(outcome).toEqual({ status: 200 });
    expect(hits).toBe(1);
  });

  it('refuses a literal private address in the stack before connecting', async () => {
    const post = webhookPoster({ allowLoopback: false, resolve: async () => [] });
    expect(await post(`https://127.0.0.1:${port}/`, '{}', {}, 1000)).toEqual({ error: 'refused address: 127.0.0.1 resolves to 127.0.0.1, which is not a public address' });
    expect(hits).toBe(0);
  });
});

describe('Function: registerWebhook', () => {
  const ports = (answer: ResolvedAddress[]) => ({ store: new MemoryWebhookStore(), source: new MemoryChangeSource(), resolve: async () => answer });
  const caller = { drive: 'd', prefix: '/' };
  const now = new Date('2026-11-27T09:00:00.000Z');

  it.each<[string, ResolvedAddress[]]>([
    ['https://metadata.example/', [v4('169.254.169.254')]],
    ['https://internal.example/', [v4('10.0.0.8')]],
    ['https://nat64.example/', [v6('64:ff9b::a9fe:a9fe')]],
    ['https://mapped.example/', [v6('::ffff:192.168.0.1')]],
  ])('refuses %s with 422 as its host resolves to a refused address', async (url, answer) => {
    await expect(registerWebhook(ports(answer), caller, { url, path: '/' }, { now, allowLoopback: false })).rejects.toMatchObject({ code: 'validation_error', message: expect.stringContaining('refused address') });
  });

  it('refuses http and loopback in the stack', async () => {
    await expect(registerWebhook(ports([v4('127.0.0.1')]), caller, { url: 'http://127.0.0.1:8080/', path: '/' }, { now, allowLoopback: false })).rejects.toMatchObject({ code: 'validation_error', message: 'url must be https' });
    await expect(registerWebhook(ports([v4('127.0.0.1')]), caller, { url: 'https://localhost:8080/', path: '/' }, { now, allowLoopback: false })).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('stores a public https webhook with every type and a whsec_ secret', async () => {
    const p = ports([v4('93.184.216.34')]);
    const hook = await registerWebhook(p, caller, { url: 'https://hooks.example.com/drive', path: '/' }, { now, allowLoopback: false });
    expect(hook).toMatchObject({ drive: 'd', url: 'https://hooks.example.com/drive', path: '/', createdAt: now.toISOString(), since: 0 });
    expect(hook.types).toHaveLength(7);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(await p.store.list('d')).toEqual([hook]);
  });
});

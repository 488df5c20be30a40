import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Route } from '../../../routes';
import { traceSampler } from '../../proxy-event';
import { type LocalServerOptions, createLocalServer } from '../../server';

// Which requests the host traces: every one by default (npm start, `npm run trace`), or as the stack's sampling
// rule decides in AWS (a reservoir a second, then a rate), which the bench's host uses.

describe('traceSampler', () => {
  it('samples the first requests of each second up to the reservoir, then each at the rate', () => {
    // Prepare: a reservoir of 2 a second and a rate of 1 %, on a clock and a die the test sets.
    let now = 5_000;
    let roll = 0.5;
    const sample = traceSampler({ reservoirPerSecond: 2, sampleRate: 0.01 }, () => now, () => roll);

    // Act
    const first = [sample(), sample(), sample()];
    roll = 0.009;
    const lucky = sample();
    roll = 0.01;
    const unlucky = sample();
    now = 5_999;
    const sameSecond = sample();
    now = 6_000;
    roll = 0.99;
    const nextSecond = [sample(), sample(), sample()];

    // Assess
    expect(first).toEqual([true, true, false]);
    expect([lucky, unlucky, sameSecond]).toEqual([true, false, false]);
    expect(nextSecond).toEqual([true, true, false]);
  });
});

describe('the host under a sampling rule', () => {
  let server: Server;
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function serve(tracing?: LocalServerOptions['tracing']) {
    const headers: string[] = [];
    const kept: Record<string, unknown>[] = [];
    const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
      headers.push(event.headers['X-Amzn-Trace-Id']!);
      return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{}' };
    };
    const route = { method: 'GET', path: '/openapi.json', handler: 'openapi', entry: '', streaming: false } as Route;
    server = createLocalServer([{ route, handler }], () => undefined, { traces: { keep: (segment) => kept.push(segment) }, ...(tracing ? { tracing } : {}) });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const get = async () => void (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).arrayBuffer());
    return { headers, kept, get };
  }

  it('traces every request when no rule is given', async () => {
    const host = await serve();

    for (let i = 0; i < 3; i++) await host.get();

    expect(host.headers.map((h) => /Sampled=(\d)/.exec(h)?.[1])).toEqual(['1', '1', '1']);
    expect(host.kept).toHaveLength(3);
  });

  it('tells the function Sampled=0 and keeps no segment for a request the rule leaves out', async () => {
    // Prepare: one request a second, none beyond, on a stopped clock.
    const host = await serve({ reservoirPerSecond: 1, sampleRate: 0, clock: () => 0 });

    // Act
    for (let i = 0; i < 3; i++) await host.get();

    // Assess: each event names a trace (a log line still has a trace id), only the first sampled.
    expect(host.headers).toHaveLength(3);
    for (const header of host.headers) expect(header).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=[01]$/);
    expect(host.headers.map((h) => /Sampled=(\d)/.exec(h)?.[1])).toEqual(['1', '0', '0']);
    expect(host.kept).toHaveLength(1);
  });
});

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROUTE_SPECS } from '../../functions/http/routes';
import { PINNED_CALLS, totalCalls } from '../support/aws-call-budget';
import { nodeArgs } from '../support/host-bundle-files';
import { LOG_LINE_BYTES } from '../support/cost-model';
import type { Measured } from '../support/route-calls';

const ROOT = join(__dirname, '..', '..');

// The measurement runs in a process of its own (this run's bundle of it, test/support/host-bundle.ts, as the
// hosts run; tsx where there is none): it loads the handler modules with a key cache and rate limits of its
// own, and reads the SDK clients they made.
let measured: Record<string, Measured>;
beforeAll(async () => {
  const { stdout } = await promisify(execFile)(process.execPath, nodeArgs('test/support/route-calls.ts'), { cwd: ROOT, env: process.env, maxBuffer: 16 * 1024 * 1024 });
  measured = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, Measured>;
});

describe('the AWS calls of each route (test/support/aws-call-budget.ts)', () => {
  it('are the pinned ones, by command: a call more fails, and a call fewer asks for the pin to come down', () => {
    const got = Object.entries(measured).map(([request, m]) => ({
      request,
      route: m.route,
      status: m.status,
      dynamodb: m.count.dynamodb,
      s3: m.count.s3,
      sqs: m.count.sqs,
      sequential: m.count.sequential,
      ...(m.sideBySide ? { sideBySide: true } : {}),
      rru: m.count.rru,
      wru: m.count.wru,
    }));
    // A request whose calls run in two chains side by side has a chain length the machine's speed decides.
    const pinned = PINNED_CALLS.map((row) => (row.sideBySide ? { ...row, sequential: expect.any(Number) } : row));
    // On a change, paste what was measured into PINNED_CALLS (and regenerate docs/deploy.md's cost table).
    expect(got).toEqual(pinned);
  });

  it('holds one request at least of every route that takes a key, and of the share link it opens', () => {
    const keyed = ROUTE_SPECS.filter((spec) => spec.permission !== undefined || spec.path.startsWith('/s/')).map((spec) => `${spec.method} ${spec.path}`);
    const pinnedRoutes = new Set(PINNED_CALLS.map((row) => row.route));
    expect(keyed.filter((route) => !pinnedRoutes.has(route))).toEqual([]);
  });

  it("counts every call the request's own log line counts (aws_calls), the key's \"last used\" write apart", () => {
    for (const [request, m] of Object.entries(measured)) {
      const counted = { dynamodb: totalCalls({ dynamodb: m.count.dynamodb, s3: {}, sqs: {} }) + m.keyCheck, s3: totalCalls({ dynamodb: {}, s3: m.count.s3, sqs: {} }), sqs: totalCalls({ dynamodb: {}, s3: {}, sqs: m.count.sqs }) };
      const logged = { dynamodb: m.logged.dynamodb ?? 0, s3: m.logged.s3 ?? 0, sqs: m.logged.sqs ?? 0 };
      expect({ request, ...counted }).toEqual({ request, ...logged });
      expect(m.count.total).toBe(totalCalls(m.count));
    }
  });

  it("writes one log line a request no longer than docs/deploy.md's cost table prices", () => {
    const longer = Object.entries(measured).filter(([, m]) => m.logBytes > LOG_LINE_BYTES).map(([request, m]) => `${request}: ${m.logBytes}`);
    expect(longer).toEqual([]);
  });

  it('has a critical path no longer than the calls made, and of one call at least', () => {
    for (const row of PINNED_CALLS) {
      expect(row.sequential).toBeGreaterThanOrEqual(1);
      expect(row.sequential).toBeLessThanOrEqual(totalCalls(row));
    }
  });
});

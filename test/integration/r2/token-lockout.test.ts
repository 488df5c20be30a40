import { request as httpRequest } from 'node:http';
import type { ErrorJson } from '../../support/api-client';
import { type RunningHost, startHost, stopHost } from '../../support/local-host';

// r2 finding: the keyless exchange takes the per-drive bucket first and it is as small as the per-address one,
// so one source address sending junk drains its target drive's bucket: every real job of that drive, from any
// address, gets 429 for as long as the junk keeps coming (the drive token is spent even when the address bucket
// then refuses). Junk from one address should not refuse another address's exchange to the same drive.

const ADMIN = 'r2-admin-Vq8WzN3kR5tYp2Lx7HcJ0mB4dF6g';
let limited: RunningHost;

beforeAll(async () => {
  limited = await startHost({ DRIVE_RATE_LIMITS: 'token=3', DRIVE_LOCAL_CLOCK: 'frozen', DRIVE_API_KEYS: `default:${ADMIN}:admin` });
});

afterAll(async () => {
  if (limited) await stopHost(limited);
});

const from = (address: string, drive: string) =>
  new Promise<{ status: number; body: ErrorJson }>((resolve, reject) => {
    const body = JSON.stringify({ drive, token: 'not-a-jwt' });
    const req = httpRequest(`${limited.url}/drive/token`, { method: 'POST', localAddress: address, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as ErrorJson }));
    });
    req.on('error', reject);
    req.end(body);
  });

it('junk from one address does not lock another address out of the same drive', async () => {
  // The attacker: one address, more junk than its own bucket holds.
  for (let i = 0; i < 6; i++) await from('127.0.0.1', 'default');
  // The drive's real job, from another address, is let through to the token check (401 for this junk, not 429).
  const job = await from('127.0.0.3', 'default');
  expect(job.status).toBe(401);
});

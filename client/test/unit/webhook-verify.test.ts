import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signatureHeader } from '../../../functions/core/webhook-signature';
import { verify } from '../../src/webhook-verify';

const ROOT = join(__dirname, '..', '..', '..');
const SECRET = 'whsec_test-secret';
const BODY = '{"id":"7d3f5b1a9c2e4680.1","webhook_id":"7d3f5b1a9c2e4680","change":{"id":"1"},"cursor":"x"}';
const T = 1_790_000_000;

describe('Function: verify', () => {
  it('accepts what the worker signs, within 5 minutes of its time', () => {
    const header = signatureHeader(SECRET, BODY, T);
    expect(header).toMatch(/^t=1790000000,v1=[0-9a-f]{64}$/);
    expect(verify(BODY, header, SECRET, T)).toBe(true);
    expect(verify(BODY, header, SECRET, T + 300)).toBe(true);
    expect(verify(BODY, header, SECRET, T - 300)).toBe(true);
  });

  it('refuses another body, another secret, another time, a stale or missing signature', () => {
    const header = signatureHeader(SECRET, BODY, T);
    expect(verify(`${BODY} `, header, SECRET, T)).toBe(false);
    expect(verify(BODY, header, 'whsec_other', T)).toBe(false);
    expect(verify(BODY, header.replace(`t=${T}`, `t=${T + 1}`), SECRET, T)).toBe(false);
    expect(verify(BODY, header, SECRET, T + 301)).toBe(false);
    expect(verify(BODY, `t=${T}`, SECRET, T)).toBe(false);
    expect(verify(BODY, '', SECRET, T)).toBe(false);
    expect(verify(BODY, `t=${T},v1=zz`, SECRET, T)).toBe(false);
  });

  it('is the code docs/api.md shows receivers', () => {
    // The docs' block, from its `export function` to its closing brace, is the module's, line for line.
    const docs = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
    const block = /```ts\n(import \{ createHmac, timingSafeEqual \} from 'node:crypto';[\s\S]*?)```/.exec(docs)?.[1];
    const source = readFileSync(join(ROOT, 'client', 'src', 'webhook-verify.ts'), 'utf8');
    const body = (text: string) => text.slice(text.indexOf('export function verify'));
    expect(block).toBeDefined();
    expect(body(block!)).toBe(body(source));
  });
});

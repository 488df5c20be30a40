// Jest builds its cache key from the transformer's getCacheKey alone when there is one: whatever the
// transform's output depends on must be in that key (test/support/esbuild-transform.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const transform = require('../../support/esbuild-transform.js') as { getCacheKey(source: string, filename: string, options: Record<string, unknown>): string };

const source = 'export const x: number = 1;';
const filename = '/repo/functions/x.ts';

it('keys a coverage run (instrumented output) apart from a plain run', () => {
  const plain = transform.getCacheKey(source, filename, { instrument: false, configString: '{}' });
  const covered = transform.getCacheKey(source, filename, { instrument: true, configString: '{}' });
  expect(covered).not.toBe(plain);
});

it('keys apart two Jest configs (another project or transform setting)', () => {
  const one = transform.getCacheKey(source, filename, { instrument: false, configString: '{"a":1}' });
  const other = transform.getCacheKey(source, filename, { instrument: false, configString: '{"a":2}' });
  expect(other).not.toBe(one);
});

// Jest's transform for TypeScript (and the dashboard's browser modules): esbuild strips the types and writes
// CommonJS, one file at a time, as ts-jest did with isolatedModules, at a fraction of its cost on a cold cache.
// `npm run typecheck` (tsc) checks the types before Jest runs. No test uses jest.mock, which this does not hoist
// above the imports as ts-jest did: a test that needs a mocked module must require it after jest.mock.
const { createHash } = require('node:crypto');
const { transformSync, version } = require('esbuild');

module.exports = {
  process(source, filename) {
    const { code, map } = transformSync(source, {
      loader: filename.endsWith('.ts') ? 'ts' : 'js',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'external',
      sourcefile: filename,
      sourcesContent: false,
      // As tsc compiles them for target ES2022 (tsconfig.json): class fields are defined, not assigned.
      tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
    });
    return { code, map };
  },
  getCacheKey(source, filename) {
    return createHash('sha256').update(version).update('\0').update(filename).update('\0').update(source).digest('hex');
  },
};

// Jest's transform for TypeScript (and the dashboard's browser modules): esbuild strips the types and writes
// CommonJS, one file at a time, as ts-jest did with isolatedModules, at a fraction of its cost on a cold cache.
// `npm run typecheck` (tsc) checks the types before Jest runs. No test uses jest.mock, which this does not hoist
// above the imports as ts-jest did: a test that needs a mocked module must require it after jest.mock.
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { transformSync, version } = require('esbuild');

// This file's own text: a change to the options below must not reuse output cached under the old ones.
const SELF = readFileSync(__filename);

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
  // Jest keys its cache on this alone when a transform has it, so everything the output depends on goes in:
  // esbuild's version, this file, the Jest config (project, transform settings), whether coverage instruments
  // the output (Jest caches the instrumented code under this key), the file's name and its text.
  getCacheKey(source, filename, options = {}) {
    const hash = createHash('sha256');
    for (const part of [version, SELF, options.configString ?? '', options.instrument ? 'instrument' : 'plain', filename, source]) hash.update(part).update('\0');
    return hash.digest('hex');
  },
};

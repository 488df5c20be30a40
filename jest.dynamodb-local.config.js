/**
 * `npm run test:dynamodb-local`: the same DynamoDB scenarios against the embedded DynamoDB and AWS's
 * DynamoDB Local (one JVM for the run, started by the global setup); any difference fails. Its files end in
 * `.compare.ts`, so the main suite never starts a JVM.
 */
require('./test/support/memory-tmpdir.js').useMemoryTmpdir();

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/dynamodb-local'],
  testMatch: ['**/*.compare.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.js' },
  globalSetup: '<rootDir>/test/dynamodb-local/global-setup.ts',
  globalTeardown: '<rootDir>/test/dynamodb-local/global-teardown.ts',
  // The files share the one DynamoDB Local and remake its tables each: one at a time.
  maxWorkers: 1,
  // Each comparison by name, and a skipped tier's reason in its describe's name.
  verbose: true,
  testTimeout: 600_000,
  setupFiles: ['<rootDir>/test/setup-env.ts'],
};

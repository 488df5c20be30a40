// The suite in four projects, by cost (docs/testing.md). `npm test` runs them all; `npm run test:unit` and the
// like run one; `npm run test:chaos` (jest.chaos.config.js) runs the slow chaos tests, which none of these holds.

// Before any worker starts, so that the workers and the hosts they start inherit it (test/support/memory-tmpdir.js).
require('./test/support/memory-tmpdir.js').useMemoryTmpdir();

/** What every project shares: Node, TypeScript through esbuild, and the environment of test/setup-env.ts. */
const shared = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  transform: {
    // Each file transpiled alone (tsconfig.json sets isolatedModules); `npm test` type-checks with tsc first.
    '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.js',
    // The dashboard's pure modules (browser ES modules) are unit-tested through the same transform's CommonJS.
    '/dashboard/[^/]+\\.js$': '<rootDir>/test/support/esbuild-transform.js',
    // jose ships ES modules only (Node runs them through require(esm); Jest's CommonJS runtime cannot): the same
    // transform makes them CommonJS.
    '/node_modules/jose/.+\\.js$': '<rootDir>/test/support/esbuild-transform.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  // TEST_CPU_LOG=<file>: each file's CPU, its worker's and its hosts', a JSON line each (docs/testing.md).
  setupFilesAfterEnv: ['<rootDir>/test/setup-cpu-log.ts'],
};

/** For the projects that start hosts: the host bundled once a run, not transpiled by tsx at each start (test/support/host-bundle.ts). */
const hostBundle = {
  globalSetup: '<rootDir>/test/host-bundle-setup.ts',
  globalTeardown: '<rootDir>/test/host-bundle-teardown.ts',
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    // In-process code, and in-memory ports: seconds for the lot.
    {
      ...shared,
      displayName: 'unit',
      // test/model may not exist yet: a root must, a pattern need not.
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/model/**/*.test.ts', '<rootDir>/client/test/unit/**/*.test.ts', '<rootDir>/lib/local/test/unit/**/*.test.ts'],
      roots: ['<rootDir>/test', '<rootDir>/client/test', '<rootDir>/lib/local/test/unit'],
    },
    // A local host (or its embedded emulators) per file: the API, the client and the docs end to end.
    {
      ...shared,
      ...hostBundle,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration', '<rootDir>/client/test/integration', '<rootDir>/lib/local/test/integration'],
    },
    // The CDK stack synthesized (its 26 handlers bundled once) and the client's package built.
    {
      ...shared,
      displayName: 'infra',
      roots: ['<rootDir>/test/infra', '<rootDir>/client/test/build'],
    },
    // The dashboard in Chromium against a local host.
    {
      ...shared,
      ...hostBundle,
      displayName: 'browser',
      roots: ['<rootDir>/test/browser'],
    },
  ],
  // Jest reads the timeout here, not from a project. It is a guard against a test that hangs, not a check of
  // speed: the suite must pass with other suites beside it on two cores, where a test takes ten times as long
  // as on an idle machine, so no test sets a shorter one. Where speed is the point, a test drives a clock or a
  // CPU budget (test/support/local-host.ts: START_CPU_SECONDS); figures are for benchmarks (test/bench).
  testTimeout: 600_000,
  // Three files at a time on the 2-core machine: a file's worker and its host wait on each other (requests,
  // long polls, retry timers, Chromium), so two at a time kept the cores busy 75 % of the run (idle, at
  // f313744: 745 CPU-s in 497 s). The suite keeps no check of speed, so a third file costs none of them.
  maxWorkers: 3,
};

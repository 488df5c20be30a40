/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/client/test', '<rootDir>/lib/local/test'],
  // npm run test:chaos runs these: minutes of load and killed hosts.
  testPathIgnorePatterns: ['/node_modules/', '/test/chaos/'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // The dashboard's pure modules (browser ES modules) are unit-tested through the same compiler's CommonJS.
    '/dashboard/[^/]+\\.js$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  // Integration suites start a local host each; two workers keep the 2-core machine responsive.
  maxWorkers: 2,
  testTimeout: 60_000,
  setupFiles: ['<rootDir>/test/setup-env.ts'],
};

/** `npm run test:chaos`: the slow runs (a host killed mid-delete, a minute of mixed load). */
const base = require('./jest.config.js');

module.exports = { ...base, roots: ['<rootDir>/test/chaos'], testPathIgnorePatterns: ['/node_modules/'], testTimeout: 300_000, maxWorkers: 1 };

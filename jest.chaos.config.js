/** `npm run test:chaos`: the slow runs (a host killed mid-delete, a minute of mixed load). */
const { projects } = require('./jest.config.js');

const integration = projects.find((project) => project.displayName === 'integration');

module.exports = { ...integration, displayName: 'chaos', roots: ['<rootDir>/test/chaos'], testTimeout: 600_000, maxWorkers: 1 };

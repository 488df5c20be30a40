#!/usr/bin/env node
'use strict';
// The `drive` command. A published package runs its build; a fresh clone has no build (dist/ is not
// committed, and `npm ci` runs no build step), so there the TypeScript source runs through tsx, a root
// devDependency. DRIVE_CLI_SOURCE=1 runs the source even beside a build (the tests do, so that a stale
// dist/ cannot stand in for the code under test).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

// `drive ls | head` closes stdout early; that is the reader's choice, not a failure.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const built = join(__dirname, '..', 'dist', 'cli.cjs');
let cli;
if (existsSync(built) && process.env.DRIVE_CLI_SOURCE !== '1') {
  cli = require(built);
} else {
  require('tsx/cjs/api').register();
  cli = require('../src/cli/main.ts');
}
cli.run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`drive: ${error && error.stack ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);

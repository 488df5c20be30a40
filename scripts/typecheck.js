// `npm run typecheck`: tsc over the project (bin, lib, functions, test, the client) and over the dashboard with
// its contract types (test/dashboard-contract extends dashboard/tsconfig.json and takes in every dashboard/*.js,
// so it checks the dashboard too). The two programs share nothing, so they run side by side, one a core.
// Each keeps its incremental state in node_modules/.cache/tsc: a second run re-checks only what changed.
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const cache = join(root, 'node_modules', '.cache', 'tsc');
const programs = [
  { name: 'project', project: 'tsconfig.json' },
  { name: 'dashboard', project: 'test/dashboard-contract/tsconfig.json' },
];

function check({ name, project }) {
  return new Promise((done) => {
    const args = [tsc, '--noEmit', '-p', project, '--incremental', '--tsBuildInfoFile', join(cache, `${name}.tsbuildinfo`)];
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => done({ name, project, code, output }));
  });
}

Promise.all(programs.map(check)).then((results) => {
  // Each program's diagnostics whole, one after the other, rather than interleaved.
  for (const { project, code, output } of results) {
    if (output !== '') process.stdout.write(output);
    if (code !== 0) console.error(`tsc -p ${project} failed (exit ${code})`);
  }
  process.exitCode = results.some(({ code }) => code !== 0) ? 1 : 0;
});

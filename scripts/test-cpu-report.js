// Sums a TEST_CPU_LOG file (test/support/cpu-log.ts): CPU seconds by project and the costliest files,
// each as its Jest worker's and its hosts'. Usage: node scripts/test-cpu-report.js <log> [how many files]
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const [log, top = '25'] = process.argv.slice(2);
if (!log) {
  console.error('usage: node scripts/test-cpu-report.js <TEST_CPU_LOG file> [how many files]');
  process.exit(2);
}
const root = join(__dirname, '..');
const projectOf = (file) =>
  /\/test\/(infra|browser)\//.test(file) ? RegExp.$1 : /\/client\/test\/build\//.test(file) ? 'infra' : /\/integration\//.test(file) ? 'integration' : 'unit';
const files = new Map();
for (const line of readFileSync(log, 'utf8').split('\n')) {
  if (line === '') continue;
  const { file, worker = 0, host, started } = JSON.parse(line);
  const name = relative(root, file);
  const entry = files.get(name) ?? { name, project: projectOf(file), worker: 0, hosts: 0, starts: 0 };
  entry.worker += worker;
  if (host !== undefined) {
    entry.hosts += host;
    // A worker's shared host is counted as a start by the file that started it only.
    if (started !== false) entry.starts += 1;
  }
  files.set(name, entry);
}
const fmt = (n) => n.toFixed(1).padStart(7);
const projects = new Map();
for (const entry of files.values()) {
  const sum = projects.get(entry.project) ?? { worker: 0, hosts: 0, starts: 0, files: 0 };
  sum.worker += entry.worker;
  sum.hosts += entry.hosts;
  sum.starts += entry.starts;
  sum.files += 1;
  projects.set(entry.project, sum);
}
console.log('CPU seconds\n project      files  worker   hosts  host starts');
let all = 0;
for (const [name, sum] of projects) {
  all += sum.worker + sum.hosts;
  console.log(` ${name.padEnd(12)} ${String(sum.files).padStart(5)} ${fmt(sum.worker)} ${fmt(sum.hosts)}  ${sum.starts}`);
}
console.log(` all: ${all.toFixed(1)} s of CPU in test workers and hosts\n\n  total  worker   hosts  starts  file`);
for (const entry of [...files.values()].sort((a, b) => b.worker + b.hosts - (a.worker + a.hosts)).slice(0, Number(top))) {
  console.log(`${fmt(entry.worker + entry.hosts)} ${fmt(entry.worker)} ${fmt(entry.hosts)}  ${String(entry.starts).padStart(6)}  ${entry.name}`);
}

import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

/**
 * `node --import tsx test/bench/profile-summary.ts <file.cpuprofile> [top] [from-function]`: where a process's
 * CPU went, from a V8 CPU profile (`BENCH_PROFILE_DIR=<dir> npm run bench`): the functions with the most self
 * time, and the total (self and below) of the project's own functions; from the first sample inside
 * `from-function` (`uploadFiles`, say), if named.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = resolve(__dirname, '..', '..');

function main(): void {
  const [file, topArg, from] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top] [from-function]');
  const top = Number(topArg ?? 25);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  // With a function named, the samples before the first one inside it (start-up, a bench's seeding) are left out.
  const inside = (id: number) => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (byId.get(at)!.callFrame.functionName === from) return true;
    return false;
  };
  const first = from ? Math.max(0, profile.samples.findIndex(inside)) : 0;
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    if (i >= first) selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const busy = [...selfMicros].filter(([id]) => !['(idle)', '(program)'].includes(byId.get(id)!.callFrame.functionName)).reduce((sum, [, us]) => sum + us, 0);

  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const total = new Map<string, number>();
  for (const [id, us] of selfMicros) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') continue;
    self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + us);
    areas.set(areaOf(node), (areas.get(areaOf(node)) ?? 0) + us);
    // Each of the project's functions on the stack counts the sample once, however deep it recurses.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!;
      if (!frame.callFrame.url.includes('/functions/') || frame.callFrame.url.includes('node_modules')) continue;
      const name = nameOf(frame);
      if (!seen.has(name)) total.set(name, (total.get(name) ?? 0) + us);
      seen.add(name);
    }
  }
  const print = (title: string, entries: Map<string, number>) => {
    console.log(`\n${title}\n`);
    for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${(us / 1000).toFixed(0).padStart(8)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`);
    }
  };
  console.log(`busy (not idle): ${(busy / 1000).toFixed(0)} ms`);
  print('Self time, by area', areas);
  print('Self time, by function', self);
  print("Total time of the project's functions (self and what they call)", total);
}

/** The package, the project's folder, or Node's internals (native code such as hashing shows as its own name). */
function areaOf(node: ProfileNode): string {
  const { functionName, url } = node.callFrame;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node (JavaScript internals)';
  if (url.startsWith('file://')) return relative(ROOT, url.slice(7)).split('/').slice(0, 2).join('/');
  return `native: ${functionName}`;
}

function nameOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.startsWith('file://') ? relative(ROOT, url.slice(7)) : url;
  return `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
}

main();

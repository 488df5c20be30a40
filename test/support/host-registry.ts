import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_BUNDLE_ENV } from './host-bundle-files';

// The hosts a run's tests started, noted in the run's bundle folder (TEST_HOST_BUNDLE) so that the run's
// teardown (test/host-bundle-teardown.ts) ends those still running: a worker's shared host (local-host.ts
// `sharedHost`), which outlives the files that use it, and any host a test gave up on (Jest's timeout).
// Without a bundle folder (a config with no globalSetup) nothing is noted and no host is shared.

/** A host as the registry notes it: its process, and the data dir to remove with it if the registry owns it. */
export interface RegisteredHost {
  pid: number;
  url?: string;
  dataDir?: string;
  log?: string;
}

/** The registry's folder for this run, or undefined where the run has no bundle folder. */
export function registryDir(): string | undefined {
  const bundles = process.env[HOST_BUNDLE_ENV];
  if (!bundles) return undefined;
  const dir = join(bundles, 'hosts');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Notes the host `pid` (under `name`, its pid by default); `remove` forgets it once it has exited. */
export function registerHost(pid: number | undefined, host: Omit<RegisteredHost, 'pid'> = {}, name = `${pid}`): { remove: () => void } {
  const dir = registryDir();
  if (!dir || pid === undefined) return { remove: () => undefined };
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ pid, ...host }));
  return { remove: () => rmSync(file, { force: true }) };
}

/** The host noted under `name`, if it is still running. */
export function registeredHost(name: string): RegisteredHost | undefined {
  const dir = registryDir();
  if (!dir) return undefined;
  try {
    const host = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as RegisteredHost;
    return isNode(host.pid) ? host : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a running Node process (a pid the system gave to something else since is not ours). */
function isNode(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === process.execPath;
  } catch {
    return false;
  }
}

/** Ends every host noted in `bundles`' registry that still runs, and removes the data dirs the registry owns. */
export function endRegisteredHosts(bundles: string | undefined): void {
  if (!bundles) return;
  const dir = join(bundles, 'hosts');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    try {
      const host = JSON.parse(readFileSync(join(dir, name), 'utf8')) as RegisteredHost;
      if (isNode(host.pid)) process.kill(host.pid, 'SIGKILL');
      if (host.dataDir) rmSync(host.dataDir, { recursive: true, force: true });
    } catch {
      // A file half written by a worker that died: nothing to end.
    }
    rmSync(join(dir, name), { force: true });
  }
}

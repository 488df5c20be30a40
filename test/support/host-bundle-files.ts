import { join } from 'node:path';

// Where this run's prebuilt hosts are (test/support/host-bundle.ts builds them; local-host.ts runs them).

/**
 * The entries a test starts (local-host.ts `startHost`'s `entry`, fsck.ts's fsck, keys.test.ts's key tool,
 * request-log.test.ts's `npm run trace`, aws-call-budget.test.ts's measurement, the openapi unit test's
 * `bin/openapi.ts`, the client's `drive` command that client/test/support/cli-process.ts runs), each bundled.
 */
export const BUNDLED_ENTRIES = ['bin/local.ts', 'test/support/fault-host.ts', 'bin/fsck.ts', 'bin/keys.ts', 'bin/trace.ts', 'test/support/route-calls.ts', 'bin/openapi.ts', 'client/bin/drive.cjs'];

/**
 * The entries that run no host or emulator, so need nothing of lib/local/preloaded.ts's registry (the handler
 * modules, the storage thread): their bundles carry what they import only.
 */
export const PLAIN_ENTRIES = ['bin/trace.ts', 'bin/openapi.ts', 'client/bin/drive.cjs'];

/** Names the folder of this run's bundles: Jest's globalSetup sets it, and its workers inherit it. */
export const HOST_BUNDLE_ENV = 'TEST_HOST_BUNDLE';

/** The bundle of `entry` (a path from the project's root) in `dir`. */
export function bundleFile(dir: string, entry: string): string {
  return join(dir, `${entry.replace(/[/.]/g, '-')}.cjs`);
}

/**
 * The arguments to `node` that run `entry`: this run's bundle of it where Jest's globalSetup built one, else
 * the TypeScript itself through tsx, as `npm start` and `npm run fsck` run it.
 */
export function nodeArgs(entry: string): string[] {
  const bundles = process.env[HOST_BUNDLE_ENV];
  if (bundles && BUNDLED_ENTRIES.includes(entry)) return ['--enable-source-maps', bundleFile(bundles, entry)];
  return ['--import', 'tsx', entry];
}

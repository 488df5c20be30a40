import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildHostBundle } from './support/host-bundle';
import { HOST_BUNDLE_ENV } from './support/host-bundle-files';

// Jest's globalSetup for the projects that start hosts (jest.config.js): this run's bundles of the local host,
// built once, before any worker starts; the workers inherit their folder through the environment. A folder
// named beforehand in TEST_HOST_BUNDLE is used as it is.
export default async function setup(): Promise<void> {
  if (process.env[HOST_BUNDLE_ENV]) return;
  const dir = await mkdtemp(join(tmpdir(), 'drive-host-bundle-'));
  await buildHostBundle(dir);
  process.env[HOST_BUNDLE_ENV] = dir;
  // Read by test/host-bundle-teardown.ts (Jest's globalTeardown shares this process's globals).
  (globalThis as { builtHostBundle?: string }).builtHostBundle = dir;
}

import { rm } from 'node:fs/promises';
import { HOST_BUNDLE_ENV } from './support/host-bundle-files';
import { endRegisteredHosts } from './support/host-registry';

// Jest's globalTeardown beside test/host-bundle-setup.ts: ends the hosts the run's workers left running (each
// worker's shared host, test/support/local-host.ts `sharedHost`), then removes the bundles that setup built, once.
export default async function teardown(): Promise<void> {
  endRegisteredHosts(process.env[HOST_BUNDLE_ENV]);
  const built = globalThis as { builtHostBundle?: string };
  if (built.builtHostBundle === undefined) return;
  await rm(built.builtHostBundle, { recursive: true, force: true });
  built.builtHostBundle = undefined;
}

import { rm } from 'node:fs/promises';

// Jest's globalTeardown beside test/host-bundle-setup.ts: removes the bundles that setup built, once.
export default async function teardown(): Promise<void> {
  const built = globalThis as { builtHostBundle?: string };
  if (built.builtHostBundle === undefined) return;
  await rm(built.builtHostBundle, { recursive: true, force: true });
  built.builtHostBundle = undefined;
}

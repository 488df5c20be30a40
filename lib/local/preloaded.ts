// Modules a prebuilt host carries (test/support/host-bundle.ts): the suite runs the host from one esbuild bundle
// built once a run rather than through tsx, module by module, at every start. A bundle cannot `import()` a
// TypeScript path at run time, so its entry registers here, by absolute path, each module the host loads by
// path; run through tsx (`npm start`) nothing is registered and each path is imported as it is.

const MODULES = Symbol.for('drive.local.preloaded');

interface Preloaded {
  /** Absolute source path → the bundled module. */
  modules: Record<string, () => unknown>;
  /** The storage thread's body, bundled on its own (lib/local/storage-thread.ts). */
  storageWorker: string;
}

/** What a bundle's entry registered, if the host runs from one. */
export function preloaded(): Preloaded | undefined {
  return (globalThis as { [MODULES]?: Preloaded })[MODULES];
}

/** The module at absolute `path`: the bundle's copy where the host runs from one, else `import(path)`. */
export async function importModule<T>(path: string): Promise<T> {
  const bundled = preloaded()?.modules[path];
  return (bundled ? bundled() : await import(path)) as T;
}

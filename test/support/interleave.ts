import type { FileRecords, NodeStore, ObjectCopier, ObjectStore } from '../../functions/core/ports';

// Forcing one order of racing requests on real adapters (test/integration/interleavings.test.ts and
// trash-interleavings.test.ts): stores wrapped so that a rival's calls run at one exact point of the operation
// under test, a process that dies at a point, and a bucket in memory whose keys a test can count.

/** What runs around one call of a wrapped store: its method's name and its arguments. */
export type Hook = (method: keyof NodeStore, args: unknown[]) => Promise<void> | void;

/** `target`, with `before` and `after` run around each call the operation makes through it (not the rival's own calls). */
export function interceptedNodes(target: NodeStore, before: Hook, after: Hook = () => undefined): NodeStore {
  return new Proxy(target, {
    get(t, method: keyof NodeStore) {
      const real = t[method] as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        await before(method, args);
        const result = await real.apply(t, args);
        await after(method, args);
        return result;
      };
    },
  });
}

/** `target` with `before` and `after` run around each of its calls: `interceptedNodes` for any port. */
export function intercepted<T extends object>(
  target: T,
  before: (method: string, args: unknown[]) => Promise<void> | void,
  after: (method: string, args: unknown[]) => Promise<void> | void = () => undefined,
): T {
  return new Proxy(target, {
    get(t, method: string) {
      const real = Reflect.get(t, method) as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        await before(method, args);
        const result = await real.apply(t, args);
        await after(method, args);
        return result;
      };
    },
  });
}

/** Objects in memory: which keys exist (and each one's size), so a test can count what no record points to. */
export function objectStore(): ObjectStore & ObjectCopier & { keys: Set<string>; sizes: Map<string, number> } {
  const keys = new Set<string>();
  const sizes = new Map<string, number>();
  return {
    keys,
    sizes,
    put: async (key, body) => void (keys.add(key), sizes.set(key, body.length)),
    open: async () => undefined,
    deleteMany: async (gone) => gone.forEach((key) => (keys.delete(key), sizes.delete(key))),
    copy: async (from, to) => (keys.has(from) ? (keys.add(to), sizes.set(to, sizes.get(from) ?? 0), 'copied') : undefined),
  };
}

/** A process that dies at a point: once `kill()` is called, every later call of its stores and bucket fails. */
export function mortal(nodes: NodeStore, objects: ObjectStore & { keys: Set<string> }, fileRecords: FileRecords) {
  let dead = false;
  const guard = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, name: string | symbol) {
        const value = Reflect.get(t, name) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (dead) throw new Error('killed');
          return (value as (...a: unknown[]) => Promise<unknown>).apply(t, args);
        };
      },
    });
  return { nodes: guard(nodes), objects: guard(objects), records: guard(fileRecords), kill: () => void (dead = true) };
}

/** A gate one side waits at until the other opens it: `opened` resolves once `open()` is called. */
export function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Resolves once some file under `dir` holds exactly `bytes`: the first bytes of a write under way are down,
 * wherever the store keeps them until the write is done (in place, or staged beside the data).
 */
export async function heldOnDisk(dir: string, bytes: string | Buffer): Promise<void> {
  const wanted = Buffer.from(bytes);
  for (;;) {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const held = await readFile(join(entry.parentPath, entry.name)).catch(() => undefined);
      if (held?.equals(wanted)) return;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

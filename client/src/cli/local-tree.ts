import { readdir, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { UsageError } from './args';

/** A local file and the drive path it goes to. */
export interface LocalFile {
  local: string;
  remote: string;
  size: number;
}

/**
 * The files named by `sources`, each with its drive path below `to`: a directory's files keep their tree
 * below it (its own name is not repeated: say it in `to`), a file goes to `to/<its name>`. Symbolic links
 * to files are followed; links to directories are skipped (reported in `skipped`) so that a loop cannot
 * make the walk endless. Sorted by drive path. Two sources landing on one path is a `UsageError`.
 */
export async function collectFiles(sources: readonly string[], to: string): Promise<{ files: LocalFile[]; skipped: string[] }> {
  const files: LocalFile[] = [];
  const skipped: string[] = [];
  for (const source of sources) {
    const info = await stat(source).catch(() => {
      throw new UsageError(`${source}: no such file or directory`);
    });
    if (info.isFile()) files.push({ local: source, remote: remotePath(to, [basename(source)]), size: info.size });
    else if (info.isDirectory()) await walk(source, source, to, files, skipped);
    else skipped.push(source);
  }
  files.sort((a, b) => (a.remote < b.remote ? -1 : a.remote > b.remote ? 1 : 0));
  const clash = files.find((file, i) => i > 0 && files[i - 1].remote === file.remote);
  if (clash) {
    const both = files.filter((file) => file.remote === clash.remote).map((file) => file.local);
    throw new UsageError(`${both.join(' and ')} would both go to ${clash.remote}`);
  }
  return { files, skipped };
}

async function walk(root: string, dir: string, to: string, files: LocalFile[], skipped: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const local = join(dir, entry.name);
    if (entry.isDirectory()) {
      await walk(root, local, to, files, skipped);
      continue;
    }
    const info = entry.isSymbolicLink() ? await stat(local).catch(() => undefined) : undefined;
    if (entry.isFile() || info?.isFile()) {
      const size = info?.size ?? (await stat(local)).size;
      files.push({ local, remote: remotePath(to, relative(root, local).split(sep)), size });
    } else {
      skipped.push(local);
    }
  }
}

/** `to` joined with `segments`, in NFC as the server stores paths (macOS file names come in NFD). */
export function remotePath(to: string, segments: readonly string[]): string {
  return `${to === '/' ? '' : to}/${segments.join('/')}`.normalize('NFC');
}

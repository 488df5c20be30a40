import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { etagForm, fileContentEtag } from '../../src/content-etag';
import type { Drive } from '../../src/drive';

/** A local file of a test tree: where it is, its drive path relative to the upload folder, its size. */
export interface TreeFile {
  local: string;
  relative: string;
  size: number;
}

/** Writes files of random bytes under `root` with the given relative paths and sizes. */
export async function writeTree(root: string, files: { relative: string; size: number }[]): Promise<TreeFile[]> {
  for (const file of files) {
    const local = join(root, file.relative);
    await mkdir(dirname(local), { recursive: true });
    await writeFile(local, randomBytes(file.size));
  }
  return files.map((file) => ({ ...file, local: join(root, file.relative) }));
}

/** `count` small files spread over `folders` nested folders, sizes drawn from [0, maxSize] by a seeded generator. */
export function smallFiles(count: number, folders: number, maxSize: number, seed = 7): { relative: string; size: number }[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, (_, i) => {
    const folder = i % folders;
    return { relative: `d${String(folder % 10).padStart(2, '0')}/sub${Math.floor(folder / 10)}/file-${i}.bin`, size: Math.floor(random() * (maxSize + 1)) };
  });
}

/** A small seeded PRNG, so that a tree's sizes are the same on every run. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Downloads every file through `drives` in turn (spreading the download rate limit) and counts those whose bytes differ from the local file. */
export async function verifyByDownload(drives: Drive[], files: TreeFile[], folder: string, concurrency = 16): Promise<{ checked: number; mismatched: string[]; bytes: number }> {
  const mismatched: string[] = [];
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      const file = files[i];
      const path = `${folder}/${file.relative}`;
      const download = await drives[i % drives.length].download(path);
      const got = Buffer.from(await new Response(download.body).arrayBuffer());
      bytes += got.length;
      if (sha256(got) !== sha256(await readFile(file.local))) mismatched.push(path);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { checked: files.length, mismatched, bytes };
}

/** The drive's content ETag of each file under `folder` (one recursive listing) against the one computed from the local file; the paths that differ or are missing. */
export async function etagMismatches(drive: Drive, files: TreeFile[], folder: string): Promise<string[]> {
  const listing = await drive.list(folder, { recursive: true, etags: true });
  const stored = new Map(listing.files.map((file) => [file.path, file]));
  const wrong: string[] = [];
  for (const file of files) {
    const path = `${folder}/${file.relative}`;
    const entry = stored.get(path);
    const form = etagForm(entry?.etag);
    if (!entry || form === 'none' || entry.size !== file.size || (await fileContentEtag(file.local, file.size, form)) !== entry.etag) wrong.push(path);
  }
  return wrong;
}

/** A fetch that counts what it sends, by method and host, for the request figures of a report. */
export function countingFetch(): typeof fetch & { count: number; byKind: Record<string, number> } {
  const counted = Object.assign(
    (input: string | URL | Request, init?: RequestInit) => {
      counted.count++;
      const url = new URL(String(input));
      const kind = url.pathname.startsWith('/drive/') ? `${init?.method ?? 'GET'} ${url.pathname.replace(/\/uploads\/[^/]+/, '/uploads/{id}')}` : `${init?.method ?? 'GET'} (storage)`;
      counted.byKind[kind] = (counted.byKind[kind] ?? 0) + 1;
      return fetch(input, init);
    },
    { count: 0, byKind: {} as Record<string, number> },
  );
  return counted as typeof fetch & typeof counted;
}

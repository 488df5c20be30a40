import type { RestoreJob as RestoreJobJson, TrashPage as TrashPageJson } from '../../client/src/types';
import { type DriveClient, type FileJson, json } from './api-client';
import { runFsck } from './fsck';
import { storedState } from './local-host';
import { putFiles, treeOf, untilDone } from './seeding';

// The trash's routes as the tests call them (issue 28), and the whole round of a folder deleted and restored
// as jobs, which test/integration/trash.test.ts runs on 100 files and test/chaos/trash-restore.test.ts on 1,000.

/**
 * A host's environment with the trash off (`DRIVE_TRASH_DAYS=0`, issue 28): deletes and replacements destroy
 * what they remove at once, as the spec has them. For the tests that pin that (bytes gone from the bucket,
 * nothing left in the nodes table); the trash itself is test/integration/trash.test.ts's.
 */
export const FINAL_DELETES = { DRIVE_TRASH_DAYS: '0' } as const;

/** The trash's wire shapes, as the OpenAPI document (and so the client) has them. */
export type { RestoreJob as RestoreJobJson, TrashItem as TrashItemJson, TrashPage as TrashPageJson } from '../../client/src/types';

/** GET /drive/trash with `query`. */
export function trashPage(client: DriveClient, query: Record<string, string> = {}): Promise<{ status: number; body: { data: TrashPageJson } }> {
  return json<{ data: TrashPageJson }>(client.request('GET', `/drive/trash?${new URLSearchParams(query)}`));
}

/** POST /drive/trash/restore with `body`. */
export function restoreItem(client: DriveClient, body: unknown) {
  return json<{ data: FileJson; error?: { code: string; message: string } }>(
    client.request('POST', '/drive/trash/restore', { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  );
}

/** Every node at or below `top` as the nodes table holds it: kind, path, id, creation time, and a file's size, ETag and key. */
export async function nodesBelow(dataDir: string, top: string): Promise<Record<string, string | undefined>[]> {
  const { nodeItems } = await storedState(dataDir);
  return nodeItems
    .filter((item) => item.kind?.S !== undefined && (item.path?.S === top || item.path?.S?.startsWith(`${top}/`)))
    .map((item) => ({ kind: item.kind.S, path: item.path.S, id: item.id.S, createdAt: item.createdAt.S, size: item.size?.N, etag: item.etag?.S, objectKey: item.objectKey?.S }))
    .sort((a, b) => (a.path! < b.path! ? -1 : 1));
}

/**
 * Uploads `count` files in 10 subfolders of `top` and an empty folder, deletes `top` recursively and restores
 * it, each as a job (the host's DRIVE_DELETE_BUDGET_MS is 0), and asserts it comes back whole: the same
 * records (paths, ids, creation times, sizes, ETags, object keys), the same listing, the trash empty, fsck clean.
 */
export async function deleteAndRestoreWhole(client: DriveClient, dataDir: string, top: string, count: number): Promise<void> {
  await putFiles(client, Array.from({ length: count }, (_, i) => `${top}/d${i % 10}/f${String(i).padStart(4, '0')}.txt`));
  expect((await client.createFolder({ path: `${top}/empty` })).status).toBe(200);
  const before = await nodesBelow(dataDir, top);
  const files = before.filter((node) => node.kind === 'file');
  expect(files).toHaveLength(count);
  const tree = await treeOf(client, top);
  const bytes = files.reduce((sum, node) => sum + Number(node.size), 0);

  const deleted = await json<{ data: { job: { url: string } } }>(client.deleteFolder({ path: top, recursive: 'true' }));
  expect(deleted.status).toBe(202);
  expect(await untilDone<{ status: string; files_deleted: number }>(deleted.body.data.job.url, client)).toMatchObject({ files_deleted: count });
  expect(await nodesBelow(dataDir, top)).toEqual([]);
  // One folder item, its files counted; none of its files is an item of its own.
  const page = await trashPage(client, { path: top });
  expect(page.body.data.items).toHaveLength(1);
  const [item] = page.body.data.items;
  expect(item).toMatchObject({ type: 'folder', path: top, files: count, size: bytes, state: 'trashed' });
  expect((await runFsck(dataDir)).code).toBe(0);

  const restored = await client.request('POST', '/drive/trash/restore', { body: JSON.stringify({ id: item.id }), headers: { 'Content-Type': 'application/json' } });
  expect(restored.status).toBe(202);
  const job = ((await restored.json()) as { data: { job: RestoreJobJson } }).data.job;
  expect(job).toMatchObject({ type: 'restore-folder', status: 'running', path: top, to: top, result: null });
  expect(restored.headers.get('location')).toBe(job.url);
  // Being restored: a second restore and a purge are refused meanwhile (or find it gone, if the job was quick).
  expect([404, 409]).toContain((await restoreItem(client, { id: item.id })).status);
  const done = await untilDone<RestoreJobJson>(job.url, client);
  const root = before.find((node) => node.path === top)!;
  expect(done).toMatchObject({ status: 'done', files_restored: count, result: { id: root.id, path: top } });

  expect(await nodesBelow(dataDir, top)).toEqual(before);
  expect(await treeOf(client, top)).toEqual(tree);
  const last = files[files.length - 1];
  const sample = await client.download({ path: last.path! });
  expect(sample.status).toBe(200);
  expect(sample.headers.get('etag')).toContain(last.etag);
  expect((await trashPage(client, { path: top })).body.data).toMatchObject({ items: [], usage: { items: 0, files: 0, bytes: 0 } });
  expect((await restoreItem(client, { id: item.id })).status).toBe(404);
  expect((await runFsck(dataDir)).code).toBe(0);
}

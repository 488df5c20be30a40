import { abortUpload, completeUpload, startUpload } from '../../functions/core/large-upload';
import type { MultipartStore, UploadSession, UploadSessionStore } from '../../functions/core/ports';
import { restoreFile } from '../../functions/core/restore';
import { uploadFiles } from '../../functions/core/upload';
import { type MemoryPorts, memoryPorts } from './memory-ports';

const DRIVE = 'd';
function multipart(ports: MemoryPorts): MultipartStore & { open: Set<string> } {
  const open = new Set<string>();
  return {
    open,
    begin: async () => (open.add('mp'), 'mp'),
    partUrls: async (_key, _id, first, count) => Array.from({ length: count }, (_, i) => `https://s3.test/${first + i}`),
    listParts: async (_key, id) => (open.has(id) ? [{ number: 1, etag: '"p1"', size: 1 }] : undefined),
    complete: async (key, id) => {
      if (!open.delete(id)) return 'gone';
      await ports.objects.put(key, Buffer.from('L'), 'application/octet-stream');
      return 'done';
    },
    head: async (key) => {
      const held = ports.objects.objects.get(key);
      return held && { size: held.body.length, etag: 'e-1' };
    },
    abort: async (_key, id) => void open.delete(id),
  };
}

// Large uploads with the trash on (docs/trash-design.md, "Every write that removes or replaces"). Found by a
// review of the trash: a completion that stored the file and answered 200 but failed to end its session (a
// clean-up, reported only) leaves the session; once the file was replaced into the trash, an abort of that
// session deleted the bytes the trash row holds. And a completion's own step 7 deleted what it replaced.

it("keeps the bytes of a stored large upload, replaced into the trash since, when its leftover session is aborted", async () => {
  const ports = memoryPorts();
  const trashPolicy = { days: 7, by: 'key_1' };
  const held = new Map<string, UploadSession>();
  let failRemove = 1;
  const sessions: UploadSessionStore = {
    put: async (session) => void held.set(session.id, session),
    get: async (_drive, id) => held.get(id),
    claim: async (_drive, id) => held.get(id),
    release: async () => undefined,
    remove: async (id) => {
      if (failRemove-- > 0) throw new Error('throttled');
      held.delete(id);
    },
  };
  const parts = multipart(ports);
  const deps = { ...ports, parts, sessions, trashPolicy };
  const { session } = await startUpload(deps, DRIVE, { path: '/big', size: 1 }, { maxFileBytes: 10, expirySeconds: 3600 });
  // The completion stores the file and answers 200; ending its session failed (a clean-up, reported only).
  const file = await completeUpload(deps, DRIVE, session.id, [{ number: 1, etag: '"p1"' }]);
  expect(file.path).toBe('/big');
  // Another upload replaces it: the trash keeps it as `replaced`.
  await uploadFiles(deps, DRIVE, [{ filename: 'x', data: Buffer.from('new') }], [{ path: '/big' }]);
  const [row] = ports.trash.all(DRIVE).map(({ row }) => row).filter((row) => row.file?.id === file.id);
  expect(row).toBeDefined();
  // The client abandons the session it still sees.
  await abortUpload(deps, DRIVE, session.id);
  expect(ports.objects.objects.has(file.objectKey)).toBe(true);
  expect(parts.open.size).toBe(0);
  expect(await restoreFile(deps, DRIVE, row.id, { to: '/back' })).toMatchObject({ id: file.id });
});

it('puts the file a completion replaces into the trash, as an upload does', async () => {
  const ports = memoryPorts();
  const trashPolicy = { days: 7, by: 'key_1' };
  const held = new Map<string, UploadSession>();
  const sessions: UploadSessionStore = {
    put: async (session) => void held.set(session.id, session),
    get: async (_drive, id) => held.get(id),
    claim: async (_drive, id) => held.get(id),
    release: async () => undefined,
    remove: async (id) => void held.delete(id),
  };
  const parts = multipart(ports);
  const deps = { ...ports, parts, sessions, trashPolicy };
  const [before] = await uploadFiles(deps, DRIVE, [{ filename: 'x', data: Buffer.from('old') }], [{ path: '/big' }]);
  const { session } = await startUpload(deps, DRIVE, { path: '/big', size: 1 }, { maxFileBytes: 10, expirySeconds: 3600 });
  await completeUpload(deps, DRIVE, session.id, [{ number: 1, etag: '"p1"' }]);
  const rows = ports.trash.all(DRIVE).map(({ row }) => row).filter((row) => row.file?.id === before.id);
  expect(rows).toEqual([expect.objectContaining({ reason: 'replaced', deletedBy: 'key_1' })]);
  expect(ports.objects.objects.has(before.objectKey)).toBe(true);
  expect(await restoreFile(deps, DRIVE, rows[0].id, { to: '/old' })).toMatchObject({ id: before.id });
});

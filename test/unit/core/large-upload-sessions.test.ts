import { CLAIM_LEASE_MS, type LargeUploadDeps, abortUpload, completeUpload, startUpload } from '../../../functions/core/large-upload';
import { parentOf } from '../../../functions/core/paths';
import type { DriveNode, FileNode, FolderNode, MultipartStore, NodeStore, ObjectStore, PutFileResult, StoredPart, UploadSession, UploadSessionStore } from '../../../functions/core/ports';

// In-memory stores with S3's and DynamoDB's semantics for what completion relies on, so each failure can be
// placed exactly. The real adapters are tested against the emulators in test/integration/large-uploads.test.ts.

class MemoryNodes implements NodeStore {
  readonly items = new Map<string, DriveNode>();
  failPuts = 0;
  async get(_: string, path: string) {
    return this.items.get(path);
  }
  async getMany(_: string, paths: readonly string[]) {
    return new Map(paths.flatMap((path) => (this.items.has(path) ? [[path, this.items.get(path)!] as const] : [])));
  }
  async children(_: string, folder: string) {
    return [...this.items.values()].filter((node) => parentOf(node.path) === folder);
  }
  async hasChildren(drive: string, folder: string) {
    return (await this.children(drive, folder)).length > 0;
  }
  async createFolder(_: string, folder: FolderNode) {
    const held = this.items.get(folder.path);
    if (held) return held.kind === 'folder' ? held : undefined;
    this.items.set(folder.path, folder);
    return folder;
  }
  async putFile(_: string, file: FileNode): Promise<PutFileResult> {
    if (this.failPuts-- > 0) throw new Error('throttled');
    const held = this.items.get(file.path);
    if (held?.kind === 'folder') return { ok: false };
    this.items.set(file.path, file);
    return { ok: true, replaced: held };
  }
  async removeIfSame(_: string, path: string, id: string) {
    if (this.items.get(path)?.id !== id) return false;
    this.items.delete(path);
    return true;
  }
  async restoreIfSame(_: string, path: string, id: string, previous: DriveNode) {
    if (this.items.get(path)?.id !== id) return false;
    this.items.set(path, previous);
    return true;
  }
  async childrenPage(): Promise<never> {
    throw new Error('not used');
  }
  async keepFolder(): Promise<never> {
    throw new Error('not used');
  }
  async markDeleting(): Promise<never> {
    throw new Error('not used');
  }
  async unmarkDeleting(): Promise<never> {
    throw new Error('not used');
  }
  async markMoving(): Promise<never> {
    throw new Error('not used');
  }
  async unmarkMoving(): Promise<never> {
    throw new Error('not used');
  }
  async removeFolder(): Promise<never> {
    throw new Error('not used');
  }
}

class MemoryStorage implements MultipartStore, ObjectStore {
  readonly uploads = new Map<string, { key: string; parts: Map<number, StoredPart> }>();
  readonly objects = new Map<string, { size: number; etag: string }>();
  failSizes = 0;
  completeAnswer: 'done' | 'rejected' = 'done';
  async begin(key: string) {
    const id = `mp-${this.uploads.size + 1}`;
    this.uploads.set(id, { key, parts: new Map() });
    return id;
  }
  async partUrls(_: string, id: string, count: number) {
    return Array.from({ length: count }, (__, i) => `https://s3/${id}/${i + 1}`);
  }
  putPart(id: string, number: number, size: number): string {
    const etag = `"${id}-${number}-${size}"`;
    this.uploads.get(id)!.parts.set(number, { number, etag, size });
    return etag;
  }
  async listParts(_: string, id: string) {
    const upload = this.uploads.get(id);
    return upload && [...upload.parts.values()];
  }
  async complete(key: string, id: string, parts: readonly { number: number; etag: string }[]) {
    const upload = this.uploads.get(id);
    if (!upload) return 'gone' as const;
    if (this.completeAnswer === 'rejected') return 'rejected' as const;
    this.objects.set(key, { size: parts.reduce((sum, part) => sum + upload.parts.get(part.number)!.size, 0), etag: 'assembled-2' });
    this.uploads.delete(id);
    return 'done' as const;
  }
  async head(key: string) {
    if (this.failSizes-- > 0) throw new Error('HeadObject timed out');
    return this.objects.get(key);
  }
  async abort(_: string, id: string) {
    this.uploads.delete(id);
  }
  async put(): Promise<never> {
    throw new Error('not used');
  }
  async open(): Promise<never> {
    throw new Error('not used');
  }
  async deleteMany(keys: readonly string[]) {
    for (const key of keys) this.objects.delete(key);
  }
}

class MemorySessions implements UploadSessionStore {
  readonly sessions = new Map<string, { session: UploadSession; claimedUntil?: number }>();
  async put(session: UploadSession) {
    this.sessions.set(session.id, { session });
  }
  async get(drive: string, id: string) {
    const held = this.sessions.get(id);
    return held?.session.drive === drive ? held.session : undefined;
  }
  async claim(drive: string, id: string, leaseMs: number) {
    const held = this.sessions.get(id);
    if (!held || held.session.drive !== drive) return undefined;
    if ((held.claimedUntil ?? 0) > Date.now()) return 'busy' as const;
    held.claimedUntil = Date.now() + leaseMs;
    return held.session;
  }
  async release(id: string) {
    const held = this.sessions.get(id);
    if (held) held.claimedUntil = undefined;
  }
  async remove(id: string) {
    this.sessions.delete(id);
  }
}

const MiB = 1024 * 1024;
const limits = { maxFileBytes: 10 * 1024 * MiB, expirySeconds: 3600 };
let nodes: MemoryNodes;
let storage: MemoryStorage;
let sessions: MemorySessions;
let deps: LargeUploadDeps;

beforeEach(() => {
  nodes = new MemoryNodes();
  storage = new MemoryStorage();
  sessions = new MemorySessions();
  deps = { nodes, objects: storage, parts: storage, sessions };
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});

afterEach(() => jest.restoreAllMocks());

/** Starts a 10 MiB upload to /big.bin and sends both parts; returns the session and the part list. */
async function uploaded() {
  const { session } = await startUpload(deps, 'd', { path: '/dir/big.bin', size: 10 * MiB }, limits);
  const parts = [
    { number: 1, etag: storage.putPart(session.multipartId, 1, 8 * MiB) },
    { number: 2, etag: storage.putPart(session.multipartId, 2, 2 * MiB) },
  ];
  return { session, parts };
}

describe('Function: completeUpload, when something fails part-way', () => {
  it('a failure after S3 assembled the object keeps the session; the retry records that object', async () => {
    const { session, parts } = await uploaded();
    storage.failSizes = 1; // HeadObject of the assembled object fails

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('HeadObject timed out');
    expect(storage.uploads.size).toBe(0); // assembled…
    expect(sessions.sessions.get(session.id)?.claimedUntil).toBeUndefined(); // …and the session released

    const file = await completeUpload(deps, 'd', session.id, parts);
    expect(file).toMatchObject({ id: session.fileId, path: '/dir/big.bin', size: 10 * MiB, objectKey: session.objectKey });
    expect(nodes.items.get('/dir/big.bin')).toEqual(file);
    expect(nodes.items.get('/dir')).toMatchObject({ kind: 'folder' });
    expect(storage.objects.has(session.objectKey)).toBe(true);
    expect(sessions.sessions.size).toBe(0);
  });

  it('a failing record write keeps the assembled bytes and the session for another try', async () => {
    const { session, parts } = await uploaded();
    nodes.failPuts = 1;

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('throttled');
    expect(storage.objects.get(session.objectKey)?.size).toBe(10 * MiB);
    expect(nodes.items.has('/dir/big.bin')).toBe(false);

    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ size: 10 * MiB });
  });

  it('a folder at the destination is a 409 before assembly: the parts and the session stay', async () => {
    const { session, parts } = await uploaded();
    await nodes.createFolder('d', { kind: 'folder', id: 'f', path: '/dir/big.bin', createdAt: 'now' });

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'conflict' });
    expect(storage.uploads.get(session.multipartId)?.parts.size).toBe(2);
    expect(sessions.sessions.has(session.id)).toBe(true);
  });

  it('parts S3 refuses at assembly (one sent again meanwhile) are a 422 that keeps the session', async () => {
    const { session, parts } = await uploaded();
    storage.completeAnswer = 'rejected';

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'validation_error', message: expect.stringContaining('uploaded again') });
    expect(sessions.sessions.has(session.id)).toBe(true);
  });

  it('sends S3 the ETags it holds, not the quoting the client sent', async () => {
    const { session, parts } = await uploaded();
    const complete = jest.spyOn(storage, 'complete');

    await completeUpload(deps, 'd', session.id, parts.map((part) => ({ ...part, etag: part.etag.replace(/"/g, '') })));

    expect(complete.mock.calls[0][2].map((part) => part.etag)).toEqual(parts.map((part) => part.etag));
  });

  it('one completion at a time: a second one while the first holds the session gets 409', async () => {
    const { session, parts } = await uploaded();
    await sessions.claim('d', session.id, CLAIM_LEASE_MS); // a first request, still running

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('being completed') });
    await expect(abortUpload(deps, 'd', session.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(storage.uploads.has(session.multipartId)).toBe(true);
  });

  it('a claim whose holder died lapses', async () => {
    const { session, parts } = await uploaded();
    await sessions.claim('d', session.id, -1); // a holder that died

    await expect(completeUpload(deps, 'd', session.id, parts)).resolves.toMatchObject({ path: '/dir/big.bin' });
  });

  it('an expired session is refused with 404 and its upload discarded, even before TTL removes it', async () => {
    const { session, parts } = await uploaded();
    sessions.sessions.get(session.id)!.session.expiresAt = new Date(Date.now() - 1000).toISOString();

    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('expired') });
    expect(storage.uploads.size).toBe(0);
    expect(sessions.sessions.size).toBe(0);
  });

  it("another drive's key gets 404 and changes nothing", async () => {
    const { session, parts } = await uploaded();

    await expect(completeUpload(deps, 'e', session.id, parts)).rejects.toMatchObject({ code: 'not_found' });
    await expect(abortUpload(deps, 'e', session.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(sessions.sessions.get(session.id)?.claimedUntil).toBeUndefined();
    expect(storage.uploads.has(session.multipartId)).toBe(true);
  });
});

describe('Function: abortUpload', () => {
  it('deletes an object that a failed completion assembled and nobody recorded', async () => {
    const { session, parts } = await uploaded();
    nodes.failPuts = 1;
    await expect(completeUpload(deps, 'd', session.id, parts)).rejects.toThrow('throttled');

    await abortUpload(deps, 'd', session.id);

    expect(storage.objects.size).toBe(0);
    expect(sessions.sessions.size).toBe(0);
    expect(nodes.items.has('/dir/big.bin')).toBe(false);
  });
});
